// z = x * y, elementwise over n floats.
// Split: sk_block_range(n) on every argument: x, y, z are "block".
// Static shape: -DSK_N=<n>.
#include "superkernel/cpu/kernel.h"

#ifdef SK_N
#define SKV_N ((int64_t)(SK_N))
#else
#define SKV_N n
#endif

SK_KERNEL void sk_mul_f32(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  (void)n;
  int64_t b, e;
  sk_block_range(ctx, SKV_N, &b, &e);
  for (int64_t i = b; i < e; ++i) z[i] = x[i] * y[i];
}
