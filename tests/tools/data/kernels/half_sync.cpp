// Declares kernel_sync but only block 0 calls sk_kernel_sync: its barrier
// can never complete, so the wait times out (SK_WAIT_TIMEOUT_MS) and the
// launch fails (sk-compile exit 4) instead of hanging.
#include <superkernel/cpu/kernel.h>

SK_KERNEL void half_sync(const sk_ctx* ctx, float* z, int64_t n) {
  (void)n;
  if (ctx->block_idx == 0) sk_kernel_sync(ctx);
  z[ctx->block_idx] = 1.0f;
}
