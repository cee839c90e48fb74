// 2-D transpose: y[c, r] = x[r, c], x [rows, cols], y [cols, rows] floats.
// Split: sk_block_range(rows * cols) over y's elements -> y "block"; x "all".
// Static shape: -DSK_ROWS, -DSK_COLS.
#include "superkernel/cpu/kernel.h"

#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif
#ifdef SK_COLS
#define SKV_COLS ((int64_t)(SK_COLS))
#else
#define SKV_COLS cols
#endif

SK_KERNEL void sk_transpose_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  (void)rows;
  (void)cols;
  const int64_t R = SKV_ROWS, C = SKV_COLS;
  int64_t eb, ee;
  sk_block_range(ctx, R * C, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t c = e / R, r = e - c * R;
    y[e] = x[r * C + c];
  }
}
