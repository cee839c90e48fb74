// gemv (y = W x, W rows x cols row-major) and the MoE expert gemv
// (y[s*rows + r] = W[idx[s]] row r . x_s): one warp per output row, a
// shuffle reduction per row. Weights stream once; x stays in L1/L2.
// Weights (the descriptor's macro): f32 (none), bf16 (SK_WEIGHT_BF16) or f16
// (SK_WEIGHT_F16), stored as uint16_t, or ggml's q8_0 blocks (SK_WEIGHT_Q8_0,
// gemv only: per 32 weights an f16 scale d then 32 int8 q, 34 bytes) or q4_0
// blocks (SK_WEIGHT_Q4_0, gemv only: an f16 scale then 16 bytes of 4-bit q,
// 18 bytes); a row of cols weights is cols / 32 blocks, and cols not a
// multiple of 32 stops the launch with cpu's message, sk_trap_error;
// activations and accumulation are f32.
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
// q8_0 and q4_0 (blocks of 34 or 18 bytes are only 2-byte aligned): lane l
// takes groups of 8 blocks (272 bytes = 17 vectors, or 144 bytes = 9) l,
// l+32, ..., loaded with 16-byte loads when the row starts 16-byte aligned
// (every row when cols % 256 == 0), else byte by byte into the same
// registers; then one leftover block per lane (cols / 32 % 8 of them). Either
// load path sums the same way, so the block formats' order depends on cols
// only.
// The weight formats, x loads and the block formats' unpacking and warp dot product are sk_weight.cuh's, shared
// with matmul.cu.
#include "sk_weight.cuh"

#if defined(SK_WEIGHT_BF16)
#define SK_GEMV_ENTRY sk_gemv_bf16w
#define SK_MOE_ENTRY sk_moe_expert_gemv_bf16w
#elif defined(SK_WEIGHT_F16)
#define SK_GEMV_ENTRY sk_gemv_f16w
#define SK_MOE_ENTRY sk_moe_expert_gemv_f16w
#elif defined(SK_WEIGHT_Q8_0) || defined(SK_WEIGHT_Q4_0)
#if defined(SK_WEIGHT_Q8_0)
#define SK_GEMV_ENTRY sk_gemv_q8_0
#else
#define SK_GEMV_ENTRY sk_gemv_q4_0
#endif
#if defined(SK_MOE_GEMV)
#error "gemv.cu: no block-format MoE expert gemv on cuda (the cpu target has none either)"
#endif
#else
#define SK_GEMV_ENTRY sk_gemv_f32
#define SK_MOE_ENTRY sk_moe_expert_gemv_f32
#endif

#if defined(SK_WEIGHT_Q8_0) || defined(SK_WEIGHT_Q4_0)
// The same rule and message as the cpu kernel.
#define SK_W_COLS_ERROR "sk_gemv: " SK_W_NAME " weights need cols to be a multiple of 32"

static __device__ __forceinline__ float sk_warp_dot(const sk_weight_t* w, const float* x, int64_t cols) {
  float acc;
  sk_wb_warp_dot<1>(w, x, 0, 1, cols, sk_aligned16(x), &acc);
  return acc;
}
#else

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

#define SK_W_COLS_ERROR ""
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
  if (!sk_w_cols_ok(cols)) {  // no format of this kernel fails it today (no block-format MoE)
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
