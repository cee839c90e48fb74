// gemv (y = W x, W rows x cols row-major) and the MoE expert gemv
// (y[s*rows + r] = W[idx[s]] row r . x_s): one warp per output row, a
// shuffle reduction per row. Weights stream once; x stays in L1/L2.
// Weights (the descriptor's macro): f32 (none), bf16 (SK_WEIGHT_BF16) or f16
// (SK_WEIGHT_F16), stored as uint16_t, or ggml's q8_0 blocks (SK_WEIGHT_Q8_0,
// gemv only: per 32 weights an f16 scale d then 32 int8 q, 34 bytes; a row of
// cols weights is cols / 32 blocks, and cols not a multiple of 32 stops the
// launch with cpu's message, sk_trap_error); activations and accumulation
// are f32.
//
// Loads: the row is split at its first 16-byte boundary. The head (the
// weights before it, fewer than one vector) and the tail (cols - head not a
// multiple of the vector) are read with scalar loads; the body with 16-byte
// loads (sk_ld_global_v4: 4 f32 or 8 bf16/f16 weights), four per lane in
// flight, and x with float4 loads where x is 16-byte aligned at the body's
// start, else with scalar loads (a row whose head is not a multiple of 4
// weights). Lane l takes body vectors l, l+32, ..., each summed in column
// order, then its head and tail weights; the shuffle tree is fixed. So the
// summation order is a function of cols and of the row's address modulo 16,
// which every run of an op list has in common (buffers are at least 16-byte
// aligned, views sit at a fixed offset): fused and unfused stay bit-identical.
// q8_0 (blocks of 34 bytes are only 2-byte aligned): lane l takes groups of 8
// blocks (272 bytes = 17 vectors) l, l+32, ..., loaded with 17 16-byte loads
// when the row starts 16-byte aligned (every row when cols % 256 == 0), else
// byte by byte into the same registers; then one leftover block per lane
// (cols / 32 % 8 of them). Either load path sums the same way, so the q8_0
// order depends on cols only.
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_WEIGHT_BF16)
typedef uint16_t sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return sk_bf16_to_f32(v); }
#define SK_GEMV_ENTRY sk_gemv_bf16w
#define SK_MOE_ENTRY sk_moe_expert_gemv_bf16w
#elif defined(SK_WEIGHT_F16)
typedef uint16_t sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return sk_f16_to_f32(v); }
#define SK_GEMV_ENTRY sk_gemv_f16w
#define SK_MOE_ENTRY sk_moe_expert_gemv_f16w
#elif defined(SK_WEIGHT_Q8_0)
typedef uint8_t sk_weight_t;
#define SK_GEMV_ENTRY sk_gemv_q8_0
#if defined(SK_MOE_GEMV)
#error "gemv.cu: no q8_0 MoE expert gemv on cuda (the cpu target has none either)"
#endif
#else
typedef float sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return v; }
#define SK_GEMV_ENTRY sk_gemv_f32
#define SK_MOE_ENTRY sk_moe_expert_gemv_f32
#endif

// xf[0..N) = x[0..N): as 16-byte loads when x is 16-byte aligned there (vec), else one by one. The same values
// either way, so the path changes the loads only, never the sums.
template <int N>
static __device__ __forceinline__ void sk_load_x(const float* x, float* xf, bool vec) {
  if (vec) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const uint4 q = sk_ld_global_v4(x + i);
      xf[i] = __uint_as_float(q.x);
      xf[i + 1] = __uint_as_float(q.y);
      xf[i + 2] = __uint_as_float(q.z);
      xf[i + 3] = __uint_as_float(q.w);
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) xf[i] = x[i];
  }
}

#if defined(SK_WEIGHT_Q8_0)
#define SK_Q8_0_BLOCK 32
#define SK_Q8_0_BYTES 34
#define SK_Q8_0_GROUP 8 /* blocks per lane step: 8 * 34 = 272 bytes = 17 16-byte vectors */

// Whether cols is a q8_0 row length (kernels/cpu/sk_weight.h's sk_w_cols_ok
// for the block formats; the same rule and message as the cpu kernel).
static __device__ __forceinline__ bool sk_w_cols_ok(int64_t cols) { return cols % SK_Q8_0_BLOCK == 0; }
#define SK_W_COLS_ERROR "sk_gemv: q8_0 weights need cols to be a multiple of 32"

static __device__ __forceinline__ float sk_q8_byte(const uint32_t* wd, int i) {
  return (float)(int8_t)(uint8_t)(wd[i >> 2] >> (8 * (i & 3)));
}

// d * sum_k q_k x_k of the block at byte `off` of wd (off a constant after
// unrolling, so wd stays in registers); xb: the block's 32 activations.
static __device__ __forceinline__ float sk_q8_block(const uint32_t* wd, int off, const float* xb, bool x_vec) {
  float xf[SK_Q8_0_BLOCK];
  sk_load_x<SK_Q8_0_BLOCK>(xb, xf, x_vec);
  const unsigned d_lo = (wd[off >> 2] >> (8 * (off & 3))) & 0xffu;
  const unsigned d_hi = (wd[(off + 1) >> 2] >> (8 * ((off + 1) & 3))) & 0xffu;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < SK_Q8_0_BLOCK; ++k) s += sk_q8_byte(wd, off + 2 + k) * xf[k];
  return s * sk_f16_to_f32((uint16_t)(d_lo | d_hi << 8));
}

static __device__ __forceinline__ float sk_warp_dot(const sk_weight_t* w, const float* x, int64_t cols) {
  const unsigned lane = threadIdx.x & 31u;
  const int64_t nb = cols / SK_Q8_0_BLOCK, ng = nb / SK_Q8_0_GROUP;
  const bool w_vec = sk_aligned16(w), x_vec = sk_aligned16(x);
  constexpr int kWords = SK_Q8_0_GROUP * SK_Q8_0_BYTES / 4;  // 68
  float acc = 0.0f;
  for (int64_t g = lane; g < ng; g += 32) {
    const sk_weight_t* wg = w + g * (SK_Q8_0_GROUP * SK_Q8_0_BYTES);
    uint32_t wd[kWords];
    if (w_vec) {
#pragma unroll
      for (int v = 0; v < kWords / 4; ++v) {
        const uint4 q = sk_ld_global_v4(wg + 16 * v);
        wd[4 * v] = q.x;
        wd[4 * v + 1] = q.y;
        wd[4 * v + 2] = q.z;
        wd[4 * v + 3] = q.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < kWords; ++i)
        wd[i] = (uint32_t)wg[4 * i] | (uint32_t)wg[4 * i + 1] << 8 | (uint32_t)wg[4 * i + 2] << 16 |
                (uint32_t)wg[4 * i + 3] << 24;
    }
    const float* xg = x + g * (SK_Q8_0_GROUP * SK_Q8_0_BLOCK);
#pragma unroll
    for (int j = 0; j < SK_Q8_0_GROUP; ++j)
      acc += sk_q8_block(wd, j * SK_Q8_0_BYTES, xg + j * SK_Q8_0_BLOCK, x_vec);
  }
  // The leftover blocks (fewer than a group), one per lane, byte loads.
  const int64_t b = ng * SK_Q8_0_GROUP + lane;
  if (b < nb) {
    const sk_weight_t* wb = w + b * SK_Q8_0_BYTES;
    uint32_t wd[(SK_Q8_0_BYTES + 3) / 4];
#pragma unroll
    for (int i = 0; i < (SK_Q8_0_BYTES + 3) / 4; ++i) {
      uint32_t word = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (4 * i + k < SK_Q8_0_BYTES) word |= (uint32_t)wb[4 * i + k] << (8 * k);
      wd[i] = word;
    }
    acc += sk_q8_block(wd, 0, x + b * SK_Q8_0_BLOCK, x_vec);
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  return acc;
}

// Row r of a [rows, cols] q8_0 matrix.
static __device__ __forceinline__ const sk_weight_t* sk_w_row(const sk_weight_t* w, int64_t r, int64_t cols) {
  return w + r * (cols / SK_Q8_0_BLOCK) * SK_Q8_0_BYTES;
}
#else

// Weights per 16-byte vector.
#define SK_VW ((int)(16 / sizeof(sk_weight_t)))

// The SK_VW weights of one 16-byte vector, as floats in column order.
static __device__ __forceinline__ void sk_w_unpack(uint4 v, float* out) {
#if defined(SK_WEIGHT_BF16) || defined(SK_WEIGHT_F16)
  const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = sk_w((sk_weight_t)(u[i] & 0xffffu));
    out[2 * i + 1] = sk_w((sk_weight_t)(u[i] >> 16));
  }
#else
  out[0] = __uint_as_float(v.x);
  out[1] = __uint_as_float(v.y);
  out[2] = __uint_as_float(v.z);
  out[3] = __uint_as_float(v.w);
#endif
}

// acc + the SK_VW products of one weight vector and x[0..SK_VW), in column order.
template <bool XVec>
static __device__ __forceinline__ float sk_vec_dot(uint4 wv, const float* x, float acc) {
  float wf[SK_VW], xf[SK_VW];
  sk_w_unpack(wv, wf);
  sk_load_x<SK_VW>(x, xf, XVec);
#pragma unroll
  for (int i = 0; i < SK_VW; ++i) acc += wf[i] * xf[i];
  return acc;
}

// The body's vectors lane, lane+32, ... < nv, in that order. Four weight loads
// are issued before their arithmetic (64 bytes in flight per lane, 2 KB per
// warp): the loop is bound by memory latency, and one load per step would
// leave too few bytes in flight to cover it.
template <bool XVec>
static __device__ __forceinline__ float sk_body_dot(const sk_weight_t* wb, const float* xb, int64_t nv, int64_t lane) {
  float acc = 0.0f;
  int64_t v = lane;
  for (; v + 96 < nv; v += 128) {
    uint4 q[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) q[u] = sk_ld_global_v4(wb + (v + 32 * u) * SK_VW);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc = sk_vec_dot<XVec>(q[u], xb + (v + 32 * u) * SK_VW, acc);
  }
  for (; v < nv; v += 32) acc = sk_vec_dot<XVec>(sk_ld_global_v4(wb + v * SK_VW), xb + v * SK_VW, acc);
  return acc;
}

static __device__ __forceinline__ float sk_warp_dot(const sk_weight_t* w, const float* x, int64_t cols) {
  const unsigned lane = threadIdx.x & 31u;
  // Weights before the row's first 16-byte boundary (w is at least element-aligned).
  const int64_t mis = (int64_t)(((uintptr_t)w & 15u) / sizeof(sk_weight_t));
  const int64_t head = mis == 0 ? 0 : (SK_VW - mis < cols ? SK_VW - mis : cols);
  const int64_t nv = (cols - head) / SK_VW;
  const sk_weight_t* wb = w + head;
  const float* xb = x + head;
  float acc = sk_aligned16(xb) ? sk_body_dot<true>(wb, xb, nv, lane) : sk_body_dot<false>(wb, xb, nv, lane);
  // Head and tail: fewer than SK_VW weights each, one per lane.
  if ((int64_t)lane < head) acc += sk_w(w[lane]) * x[lane];
  const int64_t tail = head + nv * SK_VW + lane;
  if (tail < cols) acc += sk_w(w[tail]) * x[tail];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  return acc;
}

static __device__ __forceinline__ bool sk_w_cols_ok(int64_t) { return true; }
#define SK_W_COLS_ERROR ""
static __device__ __forceinline__ const sk_weight_t* sk_w_row(const sk_weight_t* w, int64_t r, int64_t cols) {
  return w + r * cols;
}
#endif

#if defined(SK_GEMV)
SK_KERNEL void SK_GEMV_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, float* y, int64_t rows,
                             int64_t cols) {
  if (!sk_w_cols_ok(cols)) {  // a uniform condition: every thread returns
    if (ctx->block_idx == 0 && threadIdx.x == 0) sk_trap_error(SK_W_COLS_ERROR);
    return;
  }
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  const int64_t warps = blockDim.x >> 5;
  for (int64_t r = rb + (threadIdx.x >> 5); r < re; r += warps) {
    const float acc = sk_warp_dot(sk_w_row(w, r, cols), x, cols);
    if ((threadIdx.x & 31u) == 0) y[r] = acc;
  }
}
#elif defined(SK_MOE_GEMV)
SK_KERNEL void SK_MOE_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, const int32_t* idx, float* y,
                            int64_t experts, int64_t topk, int64_t rows, int64_t cols, int32_t x_per_slot) {
  if (!sk_w_cols_ok(cols)) {  // no format of this kernel fails it today (no q8_0 MoE)
    if (ctx->block_idx == 0 && threadIdx.x == 0) sk_trap_error(SK_W_COLS_ERROR);
    return;
  }
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
    const float acc = sk_warp_dot(sk_w_row(w, e * rows + r, cols), x_per_slot ? x + s * cols : x, cols);
    if ((threadIdx.x & 31u) == 0) y[o] = acc;
  }
}
#else
#error "gemv.cu: define SK_GEMV or SK_MOE_GEMV (the kernel's macros do)"
#endif
