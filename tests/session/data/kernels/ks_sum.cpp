// kernel_sync: phase 1, block b stores the sum of its slice of x in
// partial[b]; sk_kernel_sync; phase 2, every block adds the total of all
// partials to its slice: y[i] = x[i] + total. All blocks must run at once.
#include <superkernel/cpu/kernel.h>

SK_KERNEL void fx_ks_sum(const sk_ctx* ctx, const float* x, float* partial, float* y, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  float s = 0.0f;
  for (int64_t i = begin; i < end; ++i) s += x[i];
  partial[ctx->block_idx] = s;
  sk_kernel_sync(ctx);
  float total = 0.0f;
  for (uint32_t b = 0; b < ctx->block_dim; ++b) total += partial[b];  // same order in every block
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] + total;
}
