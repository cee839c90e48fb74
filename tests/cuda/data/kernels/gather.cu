// cuda port of tests/session/data/kernels/gather.cpp, a read-all consumer:
// y[i] = x[(7 i + 3) mod n] * 0.5 + x[i]; block b writes its slice of y but
// reads x anywhere ("partition": "all").
#include "superkernel/cuda/kernel.cuh"

SK_KERNEL void fx_gather(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) y[i] = x[(7 * i + 3) % n] * 0.5f + x[i];
}
