// Small matmul C[M, N] = A[M, K] x B[K, N] (M small: a few decode tokens).
// Two builtins: matmul_f32 (entry sk_matmul_f32) and matmul_bf16w
// (-DSK_WEIGHT_BF16: B is bf16 as uint16_t, entry sk_matmul_bf16w).
// Split: block b computes the C elements sk_block_range(M * N) (row-major),
// exactly the element split of C -> C "block"; A and B are "all".
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

#ifdef SK_WEIGHT_BF16
#define SK_MATMUL_ENTRY sk_matmul_bf16w
#else
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
  // Walk the slice row by row; within a row the j range is contiguous, so
  // the k loop streams B rows and the j loop vectorizes. Accumulating in C
  // is safe: only this block touches these elements.
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
}
