// scale_f32: y = x * alpha over n floats; x and y may be the same buffer (each
// element is read before it is written, by the block that owns it).
// Split: SkBlockRange(n): x, y "block". Compile-time: SK_N, SK_ALPHA.
#include "sk_ascend_kernel.h"
#if !defined(SK_N) || !defined(SK_ALPHA)
#error "scale_f32 (ascend): scalars n, alpha are compile-time: -DSK_N -DSK_ALPHA"
#endif

extern "C" __global__ __aicore__ void sk_scale_f32(GM_ADDR x, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const float a = static_cast<float>(SK_ALPHA);
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  for (int64_t i = b; i < e; ++i) ys[i] = xs[i] * a;
}
