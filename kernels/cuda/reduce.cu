// reduce_mean_f32, the cpu builtin's contract (kernels/cpu/reduce_mean.cpp): y[r] = mean(x[r, :]) over rows x
// cols floats (0 for cols == 0). Split: sk_block_range(rows), y "block", x "all" (whole rows).
//
// Summation order, a function of cols alone (so fused equals unfused bit for bit, and the load path never changes
// a value): a row is cut into groups of 4 columns from column 0 (the last group shorter when cols % 4 != 0). Rows
// up to SK_RM_WARP_COLS columns go to one warp: lane l sums groups l, l+32, ... in order (each group's elements in
// order), then a fixed shuffle tree. Longer rows go to the CTA: thread t < NT = 256 sums groups t, t+NT, ... the
// same way, then sk_cta_sum (threads from NT on, in a fused step with a larger CTA, add +0.0f, which changes no
// sum). A group is one 16-byte load when every row is 16-byte aligned (x is and cols % 4 == 0), else four scalar
// loads of the same elements; four groups' loads per thread are issued before their additions. The mean is the
// sum divided by cols, as on cpu. cpu sums each row left to right, so the two differ by rounding (within 1e-5
// relative of cpu's sum in the tests).
// Static shape: -DSK_ROWS, -DSK_COLS, as on cpu.
#include "superkernel/cuda/kernel.cuh"

#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif
#ifdef SK_COLS
#define SKV_COLS ((int64_t)(SK_COLS))
#else
#define SKV_COLS cols
#endif

#define SK_RM_NT 256
// A warp per row up to here (at most 8 groups a lane): a CTA per short row would spend its time in barriers.
#define SK_RM_WARP_COLS 1024

// s + the elements of group g of row xr (C columns), in column order.
static __device__ __forceinline__ float sk_rm_group(const float* xr, int64_t C, int64_t g, bool vec, float s) {
  float f[4];
  sk_ld4_f32(xr + 4 * g, vec, C - 4 * g, f);
  const int64_t k = C - 4 * g < 4 ? C - 4 * g : 4;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (i < k) s += f[i];
  return s;
}

// The sum of groups first, first + step, ... of row xr, in that order; four groups' loads issued together.
static __device__ __forceinline__ float sk_rm_partial(const float* xr, int64_t C, bool vec, int64_t first,
                                                      int64_t step) {
  const int64_t ng = (C + 3) / 4;
  float s = 0.0f;
  int64_t g = first;
  if (vec) {  // whole groups only (C % 4 == 0)
    for (; g + 3 * step < ng; g += 4 * step) {
      float f[4][4];
#pragma unroll
      for (int u = 0; u < 4; ++u) sk_u4_to_f4(sk_ld_global_v4(xr + 4 * (g + u * step)), f[u]);
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int i = 0; i < 4; ++i) s += f[u][i];
    }
  }
  for (; g < ng; g += step) s = sk_rm_group(xr, C, g, vec, s);
  return s;
}

SK_KERNEL void sk_reduce_mean_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  (void)rows;
  (void)cols;
  __shared__ float scratch[32];
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  const bool vec = C % 4 == 0 && sk_aligned16(x);
  if (C <= SK_RM_WARP_COLS) {
    const int64_t lane = threadIdx.x & 31u, warps = blockDim.x >> 5;
    for (int64_t r = rb + (threadIdx.x >> 5); r < re; r += warps) {
      float s = sk_rm_partial(x + r * C, C, vec, lane, 32);
      for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      if (lane == 0) y[r] = C > 0 ? s / (float)C : 0.0f;
    }
    return;
  }
  const int64_t nt = blockDim.x < SK_RM_NT ? (int64_t)blockDim.x : SK_RM_NT, t = threadIdx.x;
  for (int64_t r = rb; r < re; ++r) {
    const float part = t < nt ? sk_rm_partial(x + r * C, C, vec, t, nt) : 0.0f;
    const float s = sk_cta_sum(part, scratch);
    if (t == 0) y[r] = s / (float)C;
  }
}
