// Early start: the block prepares a table that does not depend on any
// producer, then calls sk_wait_inputs before reading x, and signals its
// outputs itself. z = x + y * table[i % 16].
#include <superkernel/cpu/kernel.h>

SK_KERNEL void fx_es_add(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  float table[16];
  for (int k = 0; k < 16; ++k) table[k] = 1.0f + 0.125f * static_cast<float>(k);  // overlaps the producer
  sk_wait_inputs(ctx);
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin; i < end; ++i) z[i] = x[i] + y[i] * table[i % 16];
  sk_signal_outputs(ctx);
}
