// rms_norm_f32: y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w[:], rows x cols.
// Split: whole rows SkBlockRange(rows): x, y, w "all". Compile-time: SK_ROWS, SK_COLS, SK_EPS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS) || !defined(SK_EPS)
#error "rms_norm_f32 (ascend): rows, cols, eps are compile-time: -DSK_ROWS -DSK_COLS -DSK_EPS"
#endif

extern "C" __global__ __aicore__ void sk_rms_norm_f32(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ const float* ws = SK_ASCEND_GM(const float, w);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t C = SK_COLS;
  int64_t rb, re;
  SkBlockRange(SK_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float ss = 0.0f;
    for (int64_t c = 0; c < C; ++c) ss += xs[r * C + c] * xs[r * C + c];
    const float inv = 1.0f / __builtin_sqrtf(ss / (float)C + (float)(SK_EPS));
    for (int64_t c = 0; c < C; ++c) ys[r * C + c] = xs[r * C + c] * inv * ws[c];
  }
}
