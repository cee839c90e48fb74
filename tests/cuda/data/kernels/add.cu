// cuda port of tests/session/data/kernels/add.cpp: z = x + y over n floats;
// block b adds its sk_block_range slice, the CTA's threads striding over it.
#include "superkernel/cuda/kernel.cuh"

SK_KERNEL void fx_add(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) z[i] = x[i] + y[i];
}
