// Elementwise builtins (add, copy, swiglu, increment_i64): block b owns its sk_block_range
// slice of n elements; the CTA's threads stride over it (blockDim.x may exceed
// the declared threads in a fused SuperKernel, kernel.cuh).
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_ELT_ADD)
SK_KERNEL void sk_add_f32(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) z[i] = x[i] + y[i];
}
#elif defined(SK_ELT_COPY)
SK_KERNEL void sk_copy_f32(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) y[i] = x[i];
}
#elif defined(SK_ELT_SWIGLU)
SK_KERNEL void sk_swiglu_f32(const sk_ctx* ctx, const float* gate, const float* up, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) {
    const float g = gate[i];
    y[i] = g / (1.0f + expf(-g)) * up[i];
  }
}
#elif defined(SK_ELT_INCREMENT_I64)
// x[i] += delta over n int64 elements (wrapping, as on cpu).
SK_KERNEL void sk_increment_i64(const sk_ctx* ctx, int64_t* x, int64_t n, int64_t delta) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) x[i] = (int64_t)((uint64_t)x[i] + (uint64_t)delta);
}
#else
#error "elementwise.cu: define SK_ELT_ADD, SK_ELT_COPY, SK_ELT_SWIGLU or SK_ELT_INCREMENT_I64 (the kernel's macros do)"
#endif
