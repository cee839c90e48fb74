// Weights of the cuda projection kernels (gemv.cu's gemv and MoE expert gemv, matmul.cu), chosen by the
// builtin's macro; activations and accumulation are always f32 (kernels/cpu/sk_weight.h is the cpu side):
//   (none)           f32
//   SK_WEIGHT_BF16   bf16 stored as uint16_t
//   SK_WEIGHT_F16    IEEE half stored as uint16_t
//   SK_WEIGHT_Q8_0   ggml's q8_0 blocks: per 32 weights an f16 scale d then 32 int8 q, 34 bytes; a row of cols
//                    weights is cols / 32 blocks (cols % 32 == 0, sk_w_cols_ok)
// What the kernels share: sk_weight_t, sk_w (one weight as float), sk_load_x (activations, 16-byte loads where
// aligned), SK_VW and sk_w_unpack (one 16-byte vector of weights as floats, the vector formats), sk_w_row, and
// for q8_0 the group / block loaders and sk_q8_warp_dot (a warp's dot products of one row of blocks with R rows
// of x: gemv with R = 1, matmul with its rows per pass).
// Private to this folder: the driver hashes every header beside a kernel's source into its cache key. No
// include guard: bench/cuda/kernel_bw.cu includes gemv.cu and matmul.cu once per weight format, each in a
// namespace of its own (the macros below are redefined with the same text).
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_WEIGHT_BF16)
typedef uint16_t sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return sk_bf16_to_f32(v); }
#elif defined(SK_WEIGHT_F16)
typedef uint16_t sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return sk_f16_to_f32(v); }
#elif defined(SK_WEIGHT_Q8_0)
typedef uint8_t sk_weight_t;
#else
typedef float sk_weight_t;
static __device__ __forceinline__ float sk_w(sk_weight_t v) { return v; }
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

// Whether cols is a q8_0 row length (kernels/cpu/sk_weight.h's sk_w_cols_ok for the block formats).
static __device__ __forceinline__ bool sk_w_cols_ok(int64_t cols) { return cols % SK_Q8_0_BLOCK == 0; }

// Row r of a [rows, cols] q8_0 matrix.
static __device__ __forceinline__ const sk_weight_t* sk_w_row(const sk_weight_t* w, int64_t r, int64_t cols) {
  return w + r * (cols / SK_Q8_0_BLOCK) * SK_Q8_0_BYTES;
}

static __device__ __forceinline__ float sk_q8_byte(const uint32_t* wd, int i) {
  return (float)(int8_t)(uint8_t)(wd[i >> 2] >> (8 * (i & 3)));
}

// The block at byte `off` of wd (off a constant after unrolling, so wd stays in registers): its 32 quants as
// floats and its scale d.
static __device__ __forceinline__ void sk_q8_unpack(const uint32_t* wd, int off, float* qf, float* d) {
  const unsigned d_lo = (wd[off >> 2] >> (8 * (off & 3))) & 0xffu;
  const unsigned d_hi = (wd[(off + 1) >> 2] >> (8 * ((off + 1) & 3))) & 0xffu;
  *d = sk_f16_to_f32((uint16_t)(d_lo | d_hi << 8));
#pragma unroll
  for (int k = 0; k < SK_Q8_0_BLOCK; ++k) qf[k] = sk_q8_byte(wd, off + 2 + k);
}

// d * sum_k q_k x_k, summed in k order; xb: the block's 32 activations.
static __device__ __forceinline__ float sk_q8_dot(const float* qf, float d, const float* xb, bool x_vec) {
  float xf[SK_Q8_0_BLOCK];
  sk_load_x<SK_Q8_0_BLOCK>(xb, xf, x_vec);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < SK_Q8_0_BLOCK; ++k) s += qf[k] * xf[k];
  return s * d;
}

#define SK_Q8_0_GROUP_WORDS (SK_Q8_0_GROUP * SK_Q8_0_BYTES / 4) /* 68 */

// wd = the 272 bytes of a group at wg: 17 16-byte loads when wg is 16-byte aligned (w_vec), else byte by byte
// into the same registers.
static __device__ __forceinline__ void sk_q8_load_group(const sk_weight_t* wg, bool w_vec, uint32_t* wd) {
  if (w_vec) {
#pragma unroll
    for (int v = 0; v < SK_Q8_0_GROUP_WORDS / 4; ++v) {
      const uint4 q = sk_ld_global_v4(wg + 16 * v);
      wd[4 * v] = q.x;
      wd[4 * v + 1] = q.y;
      wd[4 * v + 2] = q.z;
      wd[4 * v + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < SK_Q8_0_GROUP_WORDS; ++i)
      wd[i] = (uint32_t)wg[4 * i] | (uint32_t)wg[4 * i + 1] << 8 | (uint32_t)wg[4 * i + 2] << 16 |
              (uint32_t)wg[4 * i + 3] << 24;
  }
}

// wd = the 34 bytes of one block at wb (byte loads; the last word's top bytes 0).
static __device__ __forceinline__ void sk_q8_load_block(const sk_weight_t* wb, uint32_t* wd) {
#pragma unroll
  for (int i = 0; i < (SK_Q8_0_BYTES + 3) / 4; ++i) {
    uint32_t word = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (4 * i + k < SK_Q8_0_BYTES) word |= (uint32_t)wb[4 * i + k] << (8 * k);
    wd[i] = word;
  }
}

// acc[r] = the dot product of the q8_0 row w (cols weights) with x + r * x_stride, for r < nr <= R; every lane
// of the warp gets them. Lane l takes groups of 8 blocks l, l+32, ..., each group's 272 bytes loaded once for
// all nr rows of x (each block's quants converted once), then one leftover block per lane (cols / 32 % 8 of
// them); then a fixed shuffle tree. Row r's sum is the same whatever R and nr are (R = 1 is gemv's): the order
// depends on cols only. x_vec: every row of x is 16-byte aligned.
template <int R>
static __device__ __forceinline__ void sk_q8_warp_dot(const sk_weight_t* w, const float* x, int64_t x_stride,
                                                      int nr, int64_t cols, bool x_vec, float* acc) {
  const unsigned lane = threadIdx.x & 31u;
  const int64_t nb = cols / SK_Q8_0_BLOCK, ng = nb / SK_Q8_0_GROUP;
  const bool w_vec = sk_aligned16(w);
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int64_t g = lane; g < ng; g += 32) {
    uint32_t wd[SK_Q8_0_GROUP_WORDS];
    sk_q8_load_group(w + g * (SK_Q8_0_GROUP * SK_Q8_0_BYTES), w_vec, wd);
    const float* xg = x + g * (SK_Q8_0_GROUP * SK_Q8_0_BLOCK);
#pragma unroll
    for (int j = 0; j < SK_Q8_0_GROUP; ++j) {
      float qf[SK_Q8_0_BLOCK], d;
      sk_q8_unpack(wd, j * SK_Q8_0_BYTES, qf, &d);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r >= nr) break;
        acc[r] += sk_q8_dot(qf, d, xg + r * x_stride + j * SK_Q8_0_BLOCK, x_vec);
      }
    }
  }
  const int64_t b = ng * SK_Q8_0_GROUP + lane;
  if (b < nb) {
    uint32_t wd[(SK_Q8_0_BYTES + 3) / 4];
    sk_q8_load_block(w + b * SK_Q8_0_BYTES, wd);
    float qf[SK_Q8_0_BLOCK], d;
    sk_q8_unpack(wd, 0, qf, &d);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r >= nr) break;
      acc[r] += sk_q8_dot(qf, d, x + r * x_stride + b * SK_Q8_0_BLOCK, x_vec);
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r >= nr) break;  // nr is the same on every lane
    for (int o = 16; o > 0; o >>= 1) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], o);
  }
}
#else

static __device__ __forceinline__ bool sk_w_cols_ok(int64_t) { return true; }

// Row r of a [rows, cols] matrix.
static __device__ __forceinline__ const sk_weight_t* sk_w_row(const sk_weight_t* w, int64_t r, int64_t cols) {
  return w + r * cols;
}

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
#endif
