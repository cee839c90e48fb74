// z = x + y over n elements; block b adds its slice of the elements.
#include <superkernel/cpu/kernel.h>

#ifndef N
#define N n
#endif

SK_KERNEL void add_kernel(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  (void)n;
  int64_t begin, end;
  sk_block_range(ctx, N, &begin, &end);
  for (int64_t i = begin; i < end; ++i) z[i] = x[i] + y[i];
}
