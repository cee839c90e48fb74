// rms_norm and add_rms_norm: block b owns its sk_block_range rows; the CTA
// reduces one row at a time (sum of squares across threads: sk_cta_sum).
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_NORM_RMS)
SK_KERNEL void sk_rms_norm_f32(const sk_ctx* ctx, const float* x, const float* w, float* y, int64_t rows,
                               int64_t cols, float eps) {
  __shared__ float scratch[32];
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float ss = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) ss += xr[c] * xr[c];
    ss = sk_cta_sum(ss, scratch);
    const float inv = 1.0f / sqrtf(ss / (float)cols + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] * inv * w[c];
  }
}
#elif defined(SK_NORM_ADD_RMS)
SK_KERNEL void sk_add_rms_norm_f32(const sk_ctx* ctx, const float* x, const float* residual, const float* w,
                                   float* sum, float* y, int64_t rows, int64_t cols, float eps) {
  __shared__ float scratch[32];
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float ss = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float s = x[r * cols + c] + residual[r * cols + c];
      sum[r * cols + c] = s;
      ss += s * s;
    }
    ss = sk_cta_sum(ss, scratch);
    const float inv = 1.0f / sqrtf(ss / (float)cols + eps);
    // Each thread reads back only the sum elements it wrote itself.
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[r * cols + c] = sum[r * cols + c] * inv * w[c];
  }
}
#else
#error "norm.cu: define SK_NORM_RMS or SK_NORM_ADD_RMS (the kernel's macros do)"
#endif
