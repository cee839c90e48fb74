// Fixture kernels for the planner tests (only declarations matter there).
#include "superkernel/cpu/kernel.h"

SK_KERNEL void ew(const sk_ctx* ctx, const float* x, float* y) { (void)ctx; (void)x; (void)y; }
SK_KERNEL void ew_all(const sk_ctx* ctx, const float* x, float* y) { (void)ctx; (void)x; (void)y; }
SK_KERNEL void inplace(const sk_ctx* ctx, float* x) { (void)ctx; (void)x; }
SK_KERNEL void add3(const sk_ctx* ctx, const float* x, const float* y, const float* w, float* z) {
  (void)ctx; (void)x; (void)y; (void)w; (void)z;
}
SK_KERNEL void ksync(const sk_ctx* ctx, float* x) { sk_kernel_sync(ctx); (void)x; }
