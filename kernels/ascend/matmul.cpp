// matmul: C[M, N] = A[M, K] x B[K, N] (M small: a few decode tokens). A cube-core kernel, and the one
// ascend builtin left as scalar code over GM: the simulator models no cube unit (L1, L0A/B/C, MTE1, Mmad,
// Fixpipe; a vector API on a cube core fails the launch), and a device's form of it is the cube's Matmul
// API, not vector code.
// Two builtins: matmul_f32 (sk_matmul_f32) and matmul_bf16w (-DSK_WEIGHT_BF16:
// B is bf16 as uint16_t, sk_matmul_bf16w).
// Split: SkBlockRange(M * N) over C's elements (row-major): C "block"; A, B "all".
// Every C element is summed over k = 0..K-1 in order with one accumulator (the
// cpu builtin's order), so results do not depend on the block split.
// Compile-time: SK_M, SK_K, SK_N.
#include "sk_ascend_kernel.h"
#if !defined(SK_M) || !defined(SK_K) || !defined(SK_N)
#error "matmul (ascend): m, k, n are compile-time: -DSK_M -DSK_K -DSK_N"
#endif

#ifdef SK_WEIGHT_BF16
#define SK_MATMUL_ENTRY sk_matmul_bf16w
#else
#define SK_MATMUL_ENTRY sk_matmul_f32
#endif

extern "C" __global__ __aicore__ void SK_MATMUL_ENTRY(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  __gm__ const float* as = SK_ASCEND_GM(const float, a);
  __gm__ const sk_weight_t* bs = SK_ASCEND_GM(const sk_weight_t, b);
  __gm__ float* cs = SK_ASCEND_GM(float, c);
  const int64_t K = SK_K, N = SK_N;
  int64_t eb, ee;
  SkBlockRange(static_cast<int64_t>(SK_M) * N, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t i = e / N, j = e - i * N;
    float acc = 0.0f;
    for (int64_t kk = 0; kk < K; ++kk) acc += as[i * K + kk] * SkW(bs[kk * N + j]);
    cs[e] = acc;
  }
}
