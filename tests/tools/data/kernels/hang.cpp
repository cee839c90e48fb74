// Block 1 never returns while x[0] != 0 (x is never written, so that is
// forever): the stall only the launch watchdog (SK_RUN_TIMEOUT_MS) can
// report. With x all zeros the same kernel is harmless, so a test can warm
// the cache with it and then hang from cache hits (buffer contents are not
// part of any key).
#include <superkernel/cpu/kernel.h>

SK_KERNEL void hang_if_set(const sk_ctx* ctx, const float* x, float* z, int64_t n) {
  (void)n;
  if (ctx->block_idx == 1) {
    const volatile float* vx = x;  // volatile: a read per turn, so the loop is not undefined behaviour
    while (vx[0] != 0.0f) {
    }
  }
  z[ctx->block_idx] = x[ctx->block_idx] + 1.0f;
}
