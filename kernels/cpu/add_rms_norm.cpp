// Residual add fused with RMS norm, rows x cols floats:
//   sum[r, :] = x[r, :] + residual[r, :]
//   y[r, :]   = sum[r, :] / sqrt(mean(sum[r, :]^2) + eps) * w[:]
// sum may alias x or residual (in-place residual stream).
// Split: whole rows sk_block_range(rows) -> every buffer is "all" (the row
// split is not the element split unless block_dim divides rows).
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

SK_KERNEL void sk_add_rms_norm_f32(const sk_ctx* ctx, const float* x, const float* residual, const float* w,
                                   float* sum, float* y, int64_t rows, int64_t cols, float eps) {
  (void)rows;
  (void)cols;
  (void)eps;
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float ss = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      const float s = x[r * C + c] + residual[r * C + c];
      sum[r * C + c] = s;
      ss += s * s;
    }
    const float inv = 1.0f / __builtin_sqrtf(ss / (float)C + SKV_EPS);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = sum[r * C + c] * inv * w[c];
  }
}
