// cuda port of tests/session/data/kernels/inc.cpp: in place, x = x * 1.5 + 1
// over n floats (readwrite, block partition).
#include "superkernel/cuda/kernel.cuh"

SK_KERNEL void fx_inc(const sk_ctx* ctx, float* x, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) x[i] = x[i] * 1.5f + 1.0f;
}
