// cuda port of tests/session/data/kernels/ks_sum.cpp (kernel_sync): phase 1,
// block b stores the sum of its slice of x in partial[b] (thread 0, in
// order: deterministic); sk_kernel_sync, a barrier over the op's blocks (all
// resident at once); phase 2, every block adds the total of all partials to
// its slice: y[i] = x[i] + total.
#include "superkernel/cuda/kernel.cuh"

SK_KERNEL void fx_ks_sum(const sk_ctx* ctx, const float* x, float* partial, float* y, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int64_t i = begin; i < end; ++i) s += x[i];
    partial[ctx->block_idx] = s;
  }
  sk_kernel_sync(ctx);
  __shared__ float total;
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (uint32_t b = 0; b < ctx->block_dim; ++b) t += partial[b];  // same order in every block
    total = t;
  }
  __syncthreads();
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) y[i] = x[i] + total;
}
