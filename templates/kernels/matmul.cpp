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
  // Walk the slice row by row; within a row the j range is contiguous. Tiles
  // of 4 vectors of C stay in registers over the whole k loop (B rows are
  // streamed with the conversion fused into the load), then a one-vector
  // tile, then a scalar tail with the same k order.
  for (int64_t e = eb; e < ee;) {
    const int64_t i = e / N;
    const int64_t j0 = e - i * N;
    const int64_t j1 = (ee - i * N) < N ? (ee - i * N) : N;
    const float* ar = a + i * K;
    float* cr = c + i * N;
    int64_t j = j0;
    for (; j + 4 * SKV_W <= j1; j += 4 * SKV_W) {
      skv_f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
      for (int64_t kk = 0; kk < K; ++kk) {
        const skv_f av = skv_splat(ar[kk]);
        const sk_weight_t* br = b + kk * N + j;
        c0 += av * SK_MATMUL_LOAD(br);
        c1 += av * SK_MATMUL_LOAD(br + SKV_W);
        c2 += av * SK_MATMUL_LOAD(br + 2 * SKV_W);
        c3 += av * SK_MATMUL_LOAD(br + 3 * SKV_W);
      }
      skv_store(cr + j, c0);
      skv_store(cr + j + SKV_W, c1);
      skv_store(cr + j + 2 * SKV_W, c2);
      skv_store(cr + j + 3 * SKV_W, c3);
    }
    for (; j + SKV_W <= j1; j += SKV_W) {
      skv_f c0 = {0};
      for (int64_t kk = 0; kk < K; ++kk) c0 += skv_splat(ar[kk]) * SK_MATMUL_LOAD(b + kk * N + j);
      skv_store(cr + j, c0);
    }
    for (; j < j1; ++j) {
      float s = 0.0f;
      for (int64_t kk = 0; kk < K; ++kk) s += ar[kk] * sk_w(b[kk * N + j]);
      cr[j] = s;
    }
    e = i * N + j1;
  }
#endif
}
