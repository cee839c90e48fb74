// softmax_f32: y[r, :] = exp(x[r, :] - max) / sum, rows x cols (y may alias x).
// Split: whole rows: x, y "all". Compile-time: SK_ROWS, SK_COLS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "softmax_f32 (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

extern "C" __global__ __aicore__ void sk_softmax_f32(GM_ADDR x, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t C = SK_COLS;
  int64_t rb, re;
  SkBlockRange(SK_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float m = -__builtin_inff();
    for (int64_t c = 0; c < C; ++c) m = xs[r * C + c] > m ? xs[r * C + c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      const float v = __builtin_expf(xs[r * C + c] - m);
      ys[r * C + c] = v;
      s += v;
    }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < C; ++c) ys[r * C + c] *= inv;
  }
}
