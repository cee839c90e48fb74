// Small matmul C[M, N] = A[M, K] x B[K, N] (M small: a few decode tokens).
// Builtins: matmul_f32 (entry sk_matmul_f32), matmul_bf16w (-DSK_WEIGHT_BF16:
// B is bf16 as uint16_t, sk_matmul_bf16w), matmul_f16w (-DSK_WEIGHT_F16,
// sk_matmul_f16w), matmul_q8_0 (-DSK_WEIGHT_Q8_0, sk_matmul_q8_0) and
// matmul_q4_0 (-DSK_WEIGHT_Q4_0, sk_matmul_q4_0) whose weights are in the
// "linear" layout of quantised engines: W [N, K] as N rows of K / 32 q8_0
// or q4_0 blocks (K a multiple of 32), C = A x W^T.
// Split: block b computes the C elements sk_block_range(M * N) (row-major),
// exactly the element split of C -> C "block"; A and B are "all".
// Every C element is summed over k in order 0..K-1 (q8_0, q4_0: the dot product of
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
#elif defined(SK_WEIGHT_Q4_0)
#define SK_MATMUL_ENTRY sk_matmul_q4_0
#else
#define SK_MATMUL_LOAD skv_load
#define SK_MATMUL_ENTRY sk_matmul_f32
#endif

#if !defined(SK_WEIGHT_BLOCKED) && !defined(SK_KERNELS_BASELINE)
#define SK_MM_ROWS 4
// f32 sums per chunk (all rows of a group together): 16 KiB of L1.
#define SK_MM_SUMS 4096
// B rows ahead of the current pair that software prefetch fetches.
#define SK_MM_PF_ROWS 4

// C[r, j] = sum_k A[r, k] * B[k, j] for rows r < NR (A rows K apart, C rows N
// apart) and columns j in [j0, j1).
template <int NR>
static inline void sk_mm_rows(const float* a, int64_t K, const sk_weight_t* b, int64_t N, float* c, int64_t j0,
                              int64_t j1) {
  constexpr int64_t chunk = SK_MM_SUMS / NR / 16 * 16;  // columns per chunk
  float acc[NR][chunk];
  for (int64_t jc = j0; jc < j1; jc += chunk) {
    const int64_t w = (j1 - jc) < chunk ? (j1 - jc) : chunk;
    const int64_t wv = w - w % SKV_W;
    for (int r = 0; r < NR; ++r)
      for (int64_t j = 0; j < w; ++j) acc[r][j] = 0.0f;
    int64_t kk = 0;
    for (; kk + 2 <= K; kk += 2) {
      skv_f a0[NR], a1[NR];
      for (int r = 0; r < NR; ++r) {
        a0[r] = skv_splat(a[r * K + kk]);
        a1[r] = skv_splat(a[r * K + kk + 1]);
      }
      const sk_weight_t* br0 = b + kk * N + jc;
      const sk_weight_t* br1 = br0 + N;
      // The pieces of B rows kk + SK_MM_PF_ROWS and the next are fetched
      // while these two are used: each piece starts a new page, where the
      // hardware prefetcher would stall (measured: ~1.4x on one worker).
      const sk_weight_t* pf = kk + SK_MM_PF_ROWS + 1 < K ? br0 + SK_MM_PF_ROWS * N : br0;
      for (int64_t j = 0; j < wv; j += SKV_W) {
        if ((j * (int64_t)sizeof(sk_weight_t)) % 64 == 0) {
          __builtin_prefetch(pf + j);
          __builtin_prefetch(pf + N + j);
        }
        const skv_f b0 = SK_MATMUL_LOAD(br0 + j), b1 = SK_MATMUL_LOAD(br1 + j);
        for (int r = 0; r < NR; ++r) {
          skv_f s = skv_load(acc[r] + j);
          s += a0[r] * b0;
          s += a1[r] * b1;
          skv_store(acc[r] + j, s);
        }
      }
      for (int64_t j = wv; j < w; ++j)
        for (int r = 0; r < NR; ++r) {
          acc[r][j] += a[r * K + kk] * sk_w(br0[j]);
          acc[r][j] += a[r * K + kk + 1] * sk_w(br1[j]);
        }
    }
    for (; kk < K; ++kk) {
      const sk_weight_t* br = b + kk * N + jc;
      for (int r = 0; r < NR; ++r) {
        const skv_f av = skv_splat(a[r * K + kk]);
        for (int64_t j = 0; j < wv; j += SKV_W)
          skv_store(acc[r] + j, skv_load(acc[r] + j) + av * SK_MATMUL_LOAD(br + j));
        for (int64_t j = wv; j < w; ++j) acc[r][j] += a[r * K + kk] * sk_w(br[j]);
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int64_t j = 0; j < w; ++j) c[r * N + jc + j] = acc[r][j];
  }
}
#endif

SK_KERNEL void SK_MATMUL_ENTRY(const sk_ctx* ctx, const float* a, const sk_weight_t* b, float* c, int64_t m,
                               int64_t k, int64_t n) {
  (void)m;
  (void)k;
  (void)n;
  const int64_t K = SKV_K, N = SKV_N;
  int64_t eb, ee;
  sk_block_range(ctx, SKV_M * N, &eb, &ee);
#if defined(SK_WEIGHT_BLOCKED)
  if (!sk_w_cols_ok(K)) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_matmul_" SK_W_NAME ": k must be a multiple of 32");
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
  // The slice is a run of rows of C: the first and last maybe in part, the
  // rows between whole. Consecutive rows with the same column range (up to
  // SK_MM_ROWS of them) go together: each piece of a B row is loaded once
  // (the conversion fused into the load) for all of them, so a block streams
  // B once per SK_MM_ROWS rows instead of once per row. Columns are cut into
  // chunks whose f32 sums stay in L1 while k runs 0..K-1; each k reads one
  // contiguous piece of a B row, a stream the prefetcher follows (a register
  // tile walking k down a column of B strides N elements per step and was
  // slower than the scalar loop); k is unrolled by 2 so the sums are loaded
  // and stored once per two k. Every C element still sums k = 0..K-1 in
  // order with one accumulator (acc += a[i, k] * b[k, j]; the scalar tail
  // alike), whichever group computes it: results do not depend on the split.
  if (eb >= ee) return;
  const int64_t ib = eb / N, ie = (ee - 1) / N;
  for (int64_t i = ib; i <= ie;) {
    const int64_t j0 = i == ib ? eb - ib * N : 0, j1 = i == ie ? ee - ie * N : N;
    int64_t nr = 1;
    while (nr < SK_MM_ROWS && i + nr <= ie && (i + nr == ie ? ee - ie * N : N) == j1 && j0 == 0) ++nr;
    switch (nr) {
      case 4: sk_mm_rows<4>(a + i * K, K, b, N, c + i * N, j0, j1); break;
      case 3: sk_mm_rows<3>(a + i * K, K, b, N, c + i * N, j0, j1); break;
      case 2: sk_mm_rows<2>(a + i * K, K, b, N, c + i * N, j0, j1); break;
      default: sk_mm_rows<1>(a + i * K, K, b, N, c + i * N, j0, j1); break;
    }
    i += nr;
  }
#endif
}
