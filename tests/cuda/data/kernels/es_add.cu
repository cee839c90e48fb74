// cuda port of tests/session/data/kernels/es_add.cpp (early start): the CTA
// prepares a table that depends on no producer, then waits for its inputs
// (all threads together, kernel.cuh) before reading x, and signals its
// outputs itself. z = x + y * table[i % 16].
#include "superkernel/cuda/kernel.cuh"

SK_KERNEL void fx_es_add(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  __shared__ float table[16];
  if (threadIdx.x < 16) table[threadIdx.x] = 1.0f + 0.125f * (float)threadIdx.x;  // overlaps the producer
  sk_wait_inputs(ctx);  // a CTA-wide barrier too: the table is complete after it
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) z[i] = x[i] + y[i] * table[i % 16];
  sk_signal_outputs(ctx);
}
