// gemv: y[r] = sum_c W[r, c] * x[c]; W [rows, cols], x [cols], y [rows]. A cube-core kernel.
// Two builtins: gemv_f32 (sk_gemv_f32) and gemv_bf16w (-DSK_WEIGHT_BF16, sk_gemv_bf16w).
// Split: SkBlockRange(rows) = y's element split: y "block"; W, x "all".
// Early start (declared in the JSON): the row range is computed before WaitPreTaskEnd, and
// SetNextTaskStart follows the last write (both do nothing outside a SuperKernel).
// Compile-time: SK_ROWS, SK_COLS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "gemv (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

#ifdef SK_WEIGHT_BF16
#define SK_GEMV_ENTRY sk_gemv_bf16w
#else
#define SK_GEMV_ENTRY sk_gemv_f32
#endif

extern "C" __global__ __aicore__ void SK_GEMV_ENTRY(GM_ADDR w, GM_ADDR x, GM_ADDR y) {
  __gm__ const sk_weight_t* ws = SK_ASCEND_GM(const sk_weight_t, w);
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t C = SK_COLS;
  int64_t rb, re;
  SkBlockRange(SK_ROWS, &rb, &re);
  AscendC::WaitPreTaskEnd();
  for (int64_t r = rb; r < re; ++r) ys[r] = SkDotW(ws + r * C, xs, C);
  AscendC::SetNextTaskStart();
}
