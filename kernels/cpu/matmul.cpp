// Small matmul C[M, N] = A[M, K] x B[K, N] (M small: a few decode tokens).
// Builtins: matmul_f32 (entry sk_matmul_f32), matmul_bf16w (-DSK_WEIGHT_BF16:
// B is bf16 as uint16_t, sk_matmul_bf16w), matmul_f16w (-DSK_WEIGHT_F16,
// sk_matmul_f16w), and matmul_q8_0 (-DSK_WEIGHT_Q8_0, sk_matmul_q8_0) whose
// weights are in the "linear" layout of quantised engines: W [N, K] as N
// rows of K / 32 q8_0 blocks (K a multiple of 32), C = A x W^T.
// Split: block b computes the C elements sk_block_range(M * N) (row-major),
// exactly the element split of C -> C "block"; A and B are "all".
// Every C element is summed over k in order 0..K-1 (q8_0: the dot product of
// sk_simd.h), whichever block or vector lane computes it: results do not
// depend on the block split.
// Static shape: -DSK_M, -DSK_K, -DSK_N.
#include "superkernel/cpu/kernel.h"
#include "sk_weight.h"

#ifdef SK_M
#define SKV_M ((int64_t)(SK_M))
#else
#define SKV_M m
#endif
#ifdef SK_K
#define SKV_K ((int64_t)(SK_K))
#else
#define SKV_K k
#endif
#ifdef SK_N
#define SKV_N ((int64_t)(SK_N))
#else
#define SKV_N n
#endif

#define SK_MM_CHUNK 4096  // columns per accumulator chunk (16 KiB, L1-resident)

#if defined(SK_WEIGHT_BF16)
#define SK_MATMUL_ENTRY sk_matmul_bf16w
#define SK_MATMUL_LOAD skv_load_bf16
#elif defined(SK_WEIGHT_F16)
#define SK_MATMUL_ENTRY sk_matmul_f16w
#define SK_MATMUL_LOAD skv_load_f16
#elif defined(SK_WEIGHT_Q8_0)
#define SK_MATMUL_ENTRY sk_matmul_q8_0
#else
#define SK_MATMUL_LOAD skv_load
#define SK_MATMUL_ENTRY sk_matmul_f32
#endif

SK_KERNEL void SK_MATMUL_ENTRY(const sk_ctx* ctx, const float* a, const sk_weight_t* b, float* c, int64_t m,
                               int64_t k, int64_t n) {
  (void)m;
  (void)k;
  (void)n;
  const int64_t K = SKV_K, N = SKV_N;
  int64_t eb, ee;
  sk_block_range(ctx, SKV_M * N, &eb, &ee);
#if defined(SK_WEIGHT_Q8_0)
  if (!sk_w_cols_ok(K)) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_matmul_q8_0: k must be a multiple of 32");
    return;
  }
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t i = e / N, j = e - i * N;
    c[e] = sk_dot_w(sk_w_row(b, j, K), a + i * K, K);
  }
#elif defined(SK_KERNELS_BASELINE)
  // The previous kernel (the benchmark's baseline): accumulate in C.
  for (int64_t e = eb; e < ee;) {
    const int64_t i = e / N;
    const int64_t j0 = e - i * N;
    const int64_t j1 = (ee - i * N) < N ? (ee - i * N) : N;
    float* cr = c + i * N;
    for (int64_t j = j0; j < j1; ++j) cr[j] = 0.0f;
    for (int64_t kk = 0; kk < K; ++kk) {
      const float av = a[i * K + kk];
      const sk_weight_t* br = b + kk * N;
      for (int64_t j = j0; j < j1; ++j) cr[j] += av * sk_w(br[j]);
    }
    e = i * N + j1;
  }
#else
  // Walk the slice row by row; within a row the j range is contiguous. It is
  // cut into chunks of SK_MM_CHUNK columns whose f32 sums stay in L1 while k
  // runs 0..K-1: each k reads one contiguous piece of a B row (the
  // conversion fused into the load), a stream the prefetcher follows (a
  // register tile walking k down a column of B strides N elements per step
  // and was slower than the scalar loop). A scalar tail uses the same k order.
  float acc[SK_MM_CHUNK];
  for (int64_t e = eb; e < ee;) {
    const int64_t i = e / N;
    const int64_t j0 = e - i * N;
    const int64_t j1 = (ee - i * N) < N ? (ee - i * N) : N;
    const float* ar = a + i * K;
    float* cr = c + i * N;
    for (int64_t jc = j0; jc < j1; jc += SK_MM_CHUNK) {
      const int64_t w = (j1 - jc) < SK_MM_CHUNK ? (j1 - jc) : SK_MM_CHUNK;
      const int64_t wv = w - w % SKV_W;
      for (int64_t j = 0; j < w; ++j) acc[j] = 0.0f;
      for (int64_t kk = 0; kk < K; ++kk) {
        const skv_f av = skv_splat(ar[kk]);
        const sk_weight_t* br = b + kk * N + jc;
        for (int64_t j = 0; j < wv; j += SKV_W) skv_store(acc + j, skv_load(acc + j) + av * SK_MATMUL_LOAD(br + j));
        for (int64_t j = wv; j < w; ++j) acc[j] += ar[kk] * sk_w(br[j]);
      }
      for (int64_t j = 0; j < w; ++j) cr[jc + j] = acc[j];
    }
    e = i * N + j1;
  }
#endif
}
