// Reports an error from block 1 (sk_report_error): the launch must fail.
#include <superkernel/cpu/kernel.h>

SK_KERNEL void fx_fail(const sk_ctx* ctx, float* y) {
  if (ctx->block_idx == 1) sk_report_error(ctx, "fx_fail: block 1 refuses");
  y[ctx->block_idx] = 1.0f;
}
