// Row softmax: y[r, :] = exp(x[r, :] - max) / sum, rows x cols floats
// (y may alias x). Split: whole rows sk_block_range(rows) -> x, y "all".
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

SK_KERNEL void sk_softmax_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  (void)rows;
  (void)cols;
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    float m = -__builtin_inff();
    for (int64_t c = 0; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      const float v = __builtin_expf(xr[c] - m);
      yr[c] = v;
      s += v;
    }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < C; ++c) yr[c] *= inv;
  }
}
