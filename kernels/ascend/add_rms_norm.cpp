// add_rms_norm_f32: sum = x + residual; y = sum / sqrt(mean(sum^2) + eps) * w, rows x cols.
// sum may alias x or residual. Split: whole rows: every buffer "all".
// Compile-time: SK_ROWS, SK_COLS, SK_EPS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS) || !defined(SK_EPS)
#error "add_rms_norm_f32 (ascend): rows, cols, eps are compile-time: -DSK_ROWS -DSK_COLS -DSK_EPS"
#endif

extern "C" __global__ __aicore__ void sk_add_rms_norm_f32(GM_ADDR x, GM_ADDR residual, GM_ADDR w, GM_ADDR sum,
                                                          GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ const float* rs = SK_ASCEND_GM(const float, residual);
  __gm__ const float* ws = SK_ASCEND_GM(const float, w);
  __gm__ float* ss_out = SK_ASCEND_GM(float, sum);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t C = SK_COLS;
  int64_t rb, re;
  SkBlockRange(SK_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float ss = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      const float s = xs[r * C + c] + rs[r * C + c];
      ss_out[r * C + c] = s;
      ss += s * s;
    }
    const float inv = 1.0f / __builtin_sqrtf(ss / (float)C + (float)(SK_EPS));
    for (int64_t c = 0; c < C; ++c) ys[r * C + c] = ss_out[r * C + c] * inv * ws[c];
  }
}
