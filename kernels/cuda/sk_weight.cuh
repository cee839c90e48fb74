// Weights of the cuda projection kernels (gemv.cu's gemv and MoE expert gemv, matmul.cu), chosen by the
// builtin's macro; activations and accumulation are always f32 (kernels/cpu/sk_weight.h is the cpu side):
//   (none)           f32
//   SK_WEIGHT_BF16   bf16 stored as uint16_t
//   SK_WEIGHT_F16    IEEE half stored as uint16_t
//   SK_WEIGHT_Q8_0   ggml's q8_0 blocks: per 32 weights an f16 scale d then 32 int8 q, 34 bytes; a row of cols
//                    weights is cols / 32 blocks (cols % 32 == 0, sk_w_cols_ok)
//   SK_WEIGHT_Q4_0   ggml's q4_0 blocks (kernels/cpu/sk_weight.h, sk_simd.h): per 32 weights an f16 scale d then
//                    16 bytes of packed 4-bit q (byte j: weight j low nibble, weight j + 16 high), weight d * (q - 8),
//                    18 bytes; rows as for q8_0
// What the kernels share: sk_weight_t, sk_w (one weight as float), sk_load_x (activations, 16-byte loads where
// aligned), SK_VW and sk_w_unpack (one 16-byte vector of weights as floats, the vector formats), sk_w_row, and
// for the block formats SK_W_NAME, the group / block loaders and sk_wb_warp_dot (a warp's dot products of one row
// of blocks with R rows of x: gemv with R = 1, matmul with its rows per pass).
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
#elif defined(SK_WEIGHT_Q8_0) || defined(SK_WEIGHT_Q4_0)
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

#if defined(SK_WEIGHT_Q8_0) || defined(SK_WEIGHT_Q4_0)
// The block formats: per 32 weights an f16 scale d, then the quants. A lane loads SK_WB_GROUP blocks at a time
// (q8_0: 8 * 34 = 272 bytes = 17 16-byte vectors; q4_0: 8 * 18 = 144 bytes = 9), so a group is a whole number of
// vectors and a row whose first group is aligned has every group aligned.
#define SK_WB_BLOCK 32
#define SK_WB_GROUP 8 /* blocks per lane step */
#if defined(SK_WEIGHT_Q8_0)
#define SK_WB_BYTES 34
#define SK_W_NAME "q8_0"
#else
#define SK_WB_BYTES 18
#define SK_W_NAME "q4_0"
#endif
#define SK_WB_GROUP_WORDS (SK_WB_GROUP * SK_WB_BYTES / 4) /* q8_0 68, q4_0 36 */
#define SK_WB_GROUP_VECS (SK_WB_GROUP_WORDS / 4)                    /* q8_0 17, q4_0 9 */
#define SK_WB_HALF_VECS ((SK_WB_GROUP / 2 * SK_WB_BYTES + 15) / 16) /* those holding blocks 0..3: 9, 5 */
#define SK_WB_BLOCK_WORDS ((SK_WB_BYTES + 3) / 4)

// Whether cols is a row length of the block format (kernels/cpu/sk_weight.h's sk_w_cols_ok).
static __device__ __forceinline__ bool sk_w_cols_ok(int64_t cols) { return cols % SK_WB_BLOCK == 0; }

// Row r of a [rows, cols] matrix of blocks.
static __device__ __forceinline__ const sk_weight_t* sk_w_row(const sk_weight_t* w, int64_t r, int64_t cols) {
  return w + r * (cols / SK_WB_BLOCK) * SK_WB_BYTES;
}

// Byte i of the words wd (i a constant after unrolling, so wd stays in registers).
static __device__ __forceinline__ unsigned sk_wb_byte(const uint32_t* wd, int i) {
  return (wd[i >> 2] >> (8 * (i & 3))) & 0xffu;
}

// The block at byte `off` of wd (a constant after unrolling): its 32 quants as floats, in weight order, and its
// scale d. q8_0: int8 quant k at byte 2 + k. q4_0 (ggml's block_q4_0, kernels/cpu/sk_simd.h): byte 2 + j holds
// weight j in its low nibble and weight j + 16 in its high nibble, each q - 8.
static __device__ __forceinline__ void sk_wb_unpack(const uint32_t* wd, int off, float* qf, float* d) {
  *d = sk_f16_to_f32((uint16_t)(sk_wb_byte(wd, off) | sk_wb_byte(wd, off + 1) << 8));
#if defined(SK_WEIGHT_Q8_0)
#pragma unroll
  for (int k = 0; k < SK_WB_BLOCK; ++k) qf[k] = (float)(int8_t)(uint8_t)sk_wb_byte(wd, off + 2 + k);
#else
#pragma unroll
  for (int j = 0; j < SK_WB_BLOCK / 2; ++j) {
    const unsigned q = sk_wb_byte(wd, off + 2 + j);
    qf[j] = (float)((int)(q & 15u) - 8);
    qf[j + SK_WB_BLOCK / 2] = (float)((int)(q >> 4) - 8);
  }
#endif
}

// d * sum_k q_k x_k, summed in k order; xb: the block's 32 activations.
static __device__ __forceinline__ float sk_wb_dot(const float* qf, float d, const float* xb, bool x_vec) {
  float xf[SK_WB_BLOCK];
  sk_load_x<SK_WB_BLOCK>(xb, xf, x_vec);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < SK_WB_BLOCK; ++k) s += qf[k] * xf[k];
  return s * d;
}

// wd[4 * v0 .. 4 * v1) = vectors v0 .. v1 - 1 of the group at wg: 16-byte loads when wg is 16-byte aligned
// (w_vec), else byte by byte into the same registers.
static __device__ __forceinline__ void sk_wb_load_vecs(const sk_weight_t* wg, bool w_vec, uint32_t* wd, int v0,
                                                       int v1) {
  if (w_vec) {
#pragma unroll
    for (int v = v0; v < v1; ++v) {
      const uint4 q = sk_ld_global_v4(wg + 16 * v);
      wd[4 * v] = q.x;
      wd[4 * v + 1] = q.y;
      wd[4 * v + 2] = q.z;
      wd[4 * v + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int i = 4 * v0; i < 4 * v1; ++i)
      wd[i] = (uint32_t)wg[4 * i] | (uint32_t)wg[4 * i + 1] << 8 | (uint32_t)wg[4 * i + 2] << 16 |
              (uint32_t)wg[4 * i + 3] << 24;
  }
}

// wd = the bytes of one block at wb (byte loads; the last word's top bytes 0).
static __device__ __forceinline__ void sk_wb_load_block(const sk_weight_t* wb, uint32_t* wd) {
#pragma unroll
  for (int i = 0; i < SK_WB_BLOCK_WORDS; ++i) {
    uint32_t word = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (4 * i + k < SK_WB_BYTES) word |= (uint32_t)wb[4 * i + k] << (8 * k);
    wd[i] = word;
  }
}

// acc[r] = the dot product of the block row w (cols weights) with x + r * x_stride, for r < nr <= R; every lane
// of the warp gets them. Lane l takes groups of 8 blocks l, l+32, ..., each group loaded once for all nr rows of
// x (each block's quants converted once), then one leftover block per lane (cols / 32 % 8 of them); then a fixed
// shuffle tree. Row r's sum is the same whatever R and nr are (R = 1 is gemv's): the order depends on cols only.
// x_vec: every row of x is 16-byte aligned.
template <int R>
static __device__ __forceinline__ void sk_wb_warp_dot(const sk_weight_t* w, const float* x, int64_t x_stride,
                                                      int nr, int64_t cols, bool x_vec, float* acc) {
  const unsigned lane = threadIdx.x & 31u;
  const int64_t nb = cols / SK_WB_BLOCK, ng = nb / SK_WB_GROUP;
  const bool w_vec = sk_aligned16(w);
  // The group's vectors loaded before its first block: all of them for one row of x (gemv: 17 or 9 loads in
  // flight per lane), else those of blocks 0..3, the rest before block 4. With R rows each block's arithmetic is R
  // times longer (the loads are as well hidden), and holding the whole group through it spilled: matmul_q8_0
  // compiled alone as the recipe builds it (-rdc, an ABI function) had 500 bytes of spill stores, now 148
  // (q4_0: 144, now 52; the 24 of the smallest entries are the ABI's). The same bytes in the same registers, so
  // no sum changes.
  constexpr int first = R == 1 ? SK_WB_GROUP_VECS : SK_WB_HALF_VECS;
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int64_t g = lane; g < ng; g += 32) {
    uint32_t wd[SK_WB_GROUP_WORDS];
    const sk_weight_t* wg = w + g * (SK_WB_GROUP * SK_WB_BYTES);
    const float* xg = x + g * (SK_WB_GROUP * SK_WB_BLOCK);
#pragma unroll
    for (int j = 0; j < SK_WB_GROUP; ++j) {
      if (j == 0) sk_wb_load_vecs(wg, w_vec, wd, 0, first);
      if (j == SK_WB_GROUP / 2) sk_wb_load_vecs(wg, w_vec, wd, first, SK_WB_GROUP_VECS);
      float qf[SK_WB_BLOCK], d;
      sk_wb_unpack(wd, j * SK_WB_BYTES, qf, &d);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r >= nr) break;
        acc[r] += sk_wb_dot(qf, d, xg + r * x_stride + j * SK_WB_BLOCK, x_vec);
      }
    }
  }
  const int64_t b = ng * SK_WB_GROUP + lane;
  if (b < nb) {
    uint32_t wd[SK_WB_BLOCK_WORDS];
    sk_wb_load_block(w + b * SK_WB_BYTES, wd);
    float qf[SK_WB_BLOCK], d;
    sk_wb_unpack(wd, 0, qf, &d);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r >= nr) break;
      acc[r] += sk_wb_dot(qf, d, x + r * x_stride + b * SK_WB_BLOCK, x_vec);
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
