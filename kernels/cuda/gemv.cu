// gemv (y = W x, W rows x cols row-major, f32 or bf16 storage) and the MoE
// expert gemv (y[s*rows + r] = W[idx[s]] row r . x_s): one warp per output
// row, lanes stride the columns, a shuffle reduction per row. Weights stream
// once; x stays in L1/L2.
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_WEIGHT_BF16)
typedef uint16_t sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return sk_bf16_to_f32(v); }
#define SK_GEMV_ENTRY sk_gemv_bf16w
#define SK_MOE_ENTRY sk_moe_expert_gemv_bf16w
#else
typedef float sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return v; }
#define SK_GEMV_ENTRY sk_gemv_f32
#define SK_MOE_ENTRY sk_moe_expert_gemv_f32
#endif

static __device__ __forceinline__ float sk_warp_dot(const sk_weight_t* w, const float* x, int64_t cols) {
  const unsigned lane = threadIdx.x & 31u;
  float acc = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) acc += sk_w(w[c]) * x[c];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  return acc;
}

#if defined(SK_GEMV)
SK_KERNEL void SK_GEMV_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, float* y, int64_t rows,
                             int64_t cols) {
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  const int64_t warps = blockDim.x >> 5;
  for (int64_t r = rb + (threadIdx.x >> 5); r < re; r += warps) {
    const float acc = sk_warp_dot(w + r * cols, x, cols);
    if ((threadIdx.x & 31u) == 0) y[r] = acc;
  }
}
#elif defined(SK_MOE_GEMV)
SK_KERNEL void SK_MOE_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, const int32_t* idx, float* y,
                            int64_t experts, int64_t topk, int64_t rows, int64_t cols, int32_t x_per_slot) {
  int64_t eb, ee;
  sk_block_range(ctx, topk * rows, &eb, &ee);
  const int64_t warps = blockDim.x >> 5;
  for (int64_t o = eb + (threadIdx.x >> 5); o < ee; o += warps) {
    const int64_t s = o / rows, r = o - s * rows;
    const int64_t e = idx[s];
    if (e < 0 || e >= experts) {  // the cpu kernel reports this; here the output is 0 (no error channel yet)
      if ((threadIdx.x & 31u) == 0) y[o] = 0.0f;
      continue;
    }
    const float acc = sk_warp_dot(w + (e * rows + r) * cols, x_per_slot ? x + s * cols : x, cols);
    if ((threadIdx.x & 31u) == 0) y[o] = acc;
  }
}
#else
#error "gemv.cu: define SK_GEMV or SK_MOE_GEMV (the kernel's macros do)"
#endif
