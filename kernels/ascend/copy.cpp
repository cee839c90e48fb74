// copy_f32: y = x over n floats. Split: SkBlockRange(n): x, y "block". Compile-time: SK_N.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "copy_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

extern "C" __global__ __aicore__ void sk_copy_f32(GM_ADDR x, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  for (int64_t i = b; i < e; ++i) ys[i] = xs[i];
}
