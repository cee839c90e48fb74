// A cuda sub-kernel with a compile error (CudaBuildTest: nvcc's diagnostics and the command reach the user).
#include "superkernel/cuda/kernel.cuh"

SK_KERNEL void bad_kernel(const sk_ctx* ctx, float* y, int64_t n) {
  this_is_not_declared(ctx, y, n);
}
