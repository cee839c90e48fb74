// cuda port of tests/session/data/kernels/scale.cpp: y = x * alpha over n floats.
#include "superkernel/cuda/kernel.cuh"

SK_KERNEL void fx_scale(const sk_ctx* ctx, const float* x, float* y, float alpha, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) y[i] = x[i] * alpha;
}
