// Fails its launch through the ABI's error channel (sk-compile exit 4).
#include <superkernel/cpu/kernel.h>

SK_KERNEL void report_error(const sk_ctx* ctx, float* z, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin; i < end; ++i) z[i] = 1.0f;
  if (ctx->block_idx == 0) sk_report_error(ctx, "fixture kernel: input out of range at element 0");
}
