// Fixture builtin (the design example's two-argument "scale_f32").
#include "superkernel/cpu/kernel.h"

SK_KERNEL void scale_f32(const sk_ctx* ctx, const float* x, float* y) {
  (void)ctx; (void)x; (void)y;
}
