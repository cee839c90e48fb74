// transpose_f32: y[c, r] = x[r, c]; x [rows, cols], y [cols, rows].
// Split: SkBlockRange(rows * cols) over y's elements: y "block"; x "all".
// Compile-time: SK_ROWS, SK_COLS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "transpose_f32 (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

extern "C" __global__ __aicore__ void sk_transpose_f32(GM_ADDR x, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t R = SK_ROWS, C = SK_COLS;
  int64_t eb, ee;
  SkBlockRange(R * C, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t c = e / R, r = e - c * R;
    ys[e] = xs[r * C + c];
  }
}
