// mul_f32: z = x * y over n floats (DESIGN section 9 contract in sk_ascend_kernel.h).
// Split: SkBlockRange(n): x, y, z "block". Compile-time: SK_N.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "mul_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

extern "C" __global__ __aicore__ void sk_mul_f32(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ const float* ys = SK_ASCEND_GM(const float, y);
  __gm__ float* zs = SK_ASCEND_GM(float, z);
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  for (int64_t i = b; i < e; ++i) zs[i] = xs[i] * ys[i];
}
