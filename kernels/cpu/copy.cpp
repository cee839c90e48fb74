// y = x over n floats.
// Split: sk_block_range(n): x and y are "block".
// Static shape: -DSK_N=<n>.
#include "superkernel/cpu/kernel.h"

#ifdef SK_N
#define SKV_N ((int64_t)(SK_N))
#else
#define SKV_N n
#endif

SK_KERNEL void sk_copy_f32(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  (void)n;
  int64_t b, e;
  sk_block_range(ctx, SKV_N, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = x[i];
}
