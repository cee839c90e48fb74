// Fixture for design_example.json: z = x + y over this block's slice.
#include "superkernel/cpu/kernel.h"

SK_KERNEL void add_kernel(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin; i < end; ++i) z[i] = x[i] + y[i % n];
}
