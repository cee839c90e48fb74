// y = x * alpha over n floats (x and y may be the same buffer).
// Split: sk_block_range(n): x and y are "block".
// Static shape / constants: -DSK_N=<n>, -DSK_ALPHA=<float>.
#include "superkernel/cpu/kernel.h"

#ifdef SK_N
#define SKV_N ((int64_t)(SK_N))
#else
#define SKV_N n
#endif
#ifdef SK_ALPHA
#define SKV_ALPHA ((float)(SK_ALPHA))
#else
#define SKV_ALPHA alpha
#endif

SK_KERNEL void sk_scale_f32(const sk_ctx* ctx, const float* x, float* y, float alpha, int64_t n) {
  (void)n;
  (void)alpha;
  const float a = SKV_ALPHA;
  int64_t b, e;
  sk_block_range(ctx, SKV_N, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = x[i] * a;
}
