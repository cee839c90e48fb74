// Residual add fused with RMS norm, rows x cols floats:
//   sum[r, :] = x[r, :] + residual[r, :]
//   y[r, :]   = sum[r, :] / sqrt(mean(sum[r, :]^2) + eps) * w[:]
// sum may alias x or residual (in-place residual stream).
// Split: whole rows sk_block_range(rows) -> every buffer is "all" (the row
// split is not the element split unless block_dim divides rows).
// Static shape: -DSK_ROWS, -DSK_COLS, -DSK_EPS.
#include "superkernel/cpu/kernel.h"
#include "sk_simd.h"

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
    int64_t c0 = 0;
#ifndef SK_KERNELS_BASELINE
    // Fused: add, store the sum and square it in one pass; 2 accumulators.
    skv_f q0 = {0}, q1 = {0};
    for (; c0 + 2 * SKV_W <= C; c0 += 2 * SKV_W) {
      const skv_f s0 = skv_load(x + r * C + c0) + skv_load(residual + r * C + c0);
      const skv_f s1 = skv_load(x + r * C + c0 + SKV_W) + skv_load(residual + r * C + c0 + SKV_W);
      skv_store(sum + r * C + c0, s0);
      skv_store(sum + r * C + c0 + SKV_W, s1);
      q0 += s0 * s0;
      q1 += s1 * s1;
    }
    ss = skv_hsum(q0 + q1);
#endif
    for (int64_t c = c0; c < C; ++c) {
      const float s = x[r * C + c] + residual[r * C + c];
      sum[r * C + c] = s;
      ss += s * s;
    }
    const float inv = 1.0f / __builtin_sqrtf(ss / (float)C + SKV_EPS);
    int64_t c = 0;
#ifndef SK_KERNELS_BASELINE
    const skv_f vinv = skv_splat(inv);
    for (; c + SKV_W <= C; c += SKV_W) skv_store(y + r * C + c, skv_load(sum + r * C + c) * vinv * skv_load(w + c));
#endif
    for (; c < C; ++c) y[r * C + c] = sum[r * C + c] * inv * w[c];
  }
}
