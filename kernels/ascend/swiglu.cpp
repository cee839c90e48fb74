// swiglu_f32: y = silu(gate) * up over n floats. Split: SkBlockRange(n): all "block". Compile-time: SK_N.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "swiglu_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

extern "C" __global__ __aicore__ void sk_swiglu_f32(GM_ADDR gate, GM_ADDR up, GM_ADDR y) {
  __gm__ const float* g = SK_ASCEND_GM(const float, gate);
  __gm__ const float* u = SK_ASCEND_GM(const float, up);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  for (int64_t i = b; i < e; ++i) ys[i] = g[i] / (1.0f + __builtin_expf(-g[i])) * u[i];
}
