// y[r] = mean(x[r, :]), rows x cols floats.
// Split: sk_block_range(rows) = exactly the element split of y (rows
// elements) -> y "block"; x is read by whole rows -> "all".
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

SK_KERNEL void sk_reduce_mean_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  (void)rows;
  (void)cols;
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) s += x[r * C + c];
    y[r] = C > 0 ? s / (float)C : 0.0f;
  }
}
