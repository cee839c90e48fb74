// rope_f32: rotary embedding of one token, x/y [heads, dim] (y may alias x); pairs (x[2i], x[2i+1]),
// angle pos * theta^(-2i/dim). Split: whole heads: x, y "all".
// Compile-time: SK_HEADS, SK_DIM, SK_POS, SK_THETA (an odd dim fails the launch).
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_DIM) || !defined(SK_POS) || !defined(SK_THETA)
#error "rope_f32 (ascend): heads, dim, pos, theta are compile-time: -DSK_HEADS -DSK_DIM -DSK_POS -DSK_THETA"
#endif

extern "C" __global__ __aicore__ void sk_rope_f32(GM_ADDR x, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t D = SK_DIM;
  if (D % 2 != 0) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("sk_rope_f32: dim must be even");
    return;
  }
  int64_t hb, he;
  SkBlockRange(SK_HEADS, &hb, &he);
  for (int64_t i = 0; i < D / 2; ++i) {
    const double freq = __builtin_pow((double)(SK_THETA), -2.0 * (double)i / (double)D);
    const double ang = (double)(SK_POS) * freq;
    const float c = (float)__builtin_cos(ang);
    const float s = (float)__builtin_sin(ang);
    for (int64_t h = hb; h < he; ++h) {
      const float a = xs[h * D + 2 * i];
      const float b = xs[h * D + 2 * i + 1];
      ys[h * D + 2 * i] = a * c - b * s;
      ys[h * D + 2 * i + 1] = a * s + b * c;
    }
  }
}
