// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w[:], rows x cols floats.
// Split: block b takes whole rows sk_block_range(rows). That is NOT the
// element split of x / y unless block_dim divides rows, so x and y are
// declared "partition": "all" (w is read by every block: "all").
// Blocks beyond `rows` have nothing to do (block_dim > rows is fine).
// Static shape: -DSK_ROWS, -DSK_COLS, -DSK_EPS.
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
#ifdef SK_EPS
#define SKV_EPS ((float)(SK_EPS))
#else
#define SKV_EPS eps
#endif

SK_KERNEL void sk_rms_norm_f32(const sk_ctx* ctx, const float* x, const float* w, float* y, int64_t rows,
                               int64_t cols, float eps) {
  (void)rows;
  (void)cols;
  (void)eps;
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    float ss = 0.0f;
    for (int64_t c = 0; c < C; ++c) ss += xr[c] * xr[c];
    const float inv = 1.0f / __builtin_sqrtf(ss / (float)C + SKV_EPS);
    for (int64_t c = 0; c < C; ++c) yr[c] = xr[c] * inv * w[c];
  }
}
