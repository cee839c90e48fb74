// Elementwise dtype conversion over n elements, the cpu builtins' contract (kernels/cpu/cast.cpp): one source,
// four builtins, the descriptor's macro picks one:
//   SK_CAST_F32_BF16 -> sk_cast_f32_bf16  (round to nearest even, NaN kept a quiet NaN)
//   SK_CAST_BF16_F32 -> sk_cast_bf16_f32  (exact)
//   SK_CAST_F32_F16  -> sk_cast_f32_f16   (IEEE half, round to nearest even, subnormals, overflow to inf)
//   SK_CAST_F16_F32  -> sk_cast_f16_f32   (exact)
// Split: sk_block_range(n), x and y "block".
//
// Results are the cpu kernel's bit for bit (NaN payloads included): the conversions work on the bit patterns in
// integer arithmetic, with the cpu rules, so neither the device's cvt instructions (whose NaN results are
// canonical) nor flush-to-zero of subnormal floats can change a value. The f16 subnormals that cpu rounds with
// rintf (value * 2^24 to nearest even) are rounded here on the integer significand, which is the same
// correctly rounded result.
//
// Loads: a vector is 8 elements, one 16-byte access on the 16-bit side and two on the f32 side. The block's slice
// is split at the 16-bit side's first 16-byte boundary: the elements before it (head) and after the last whole
// vector (tail) are scalar; the body is vectors (four per thread per step, their loads issued first) where the
// f32 side is 16-byte aligned there too, else the same elements one by one. Each element is converted alone, so
// the path never changes a result.
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_CAST_F32_BF16) || defined(SK_CAST_F32_F16)
#define SK_CAST_TO_16 1
typedef float sk_src_t;
typedef uint16_t sk_dst_t;
#else
typedef uint16_t sk_src_t;
typedef float sk_dst_t;
#endif

#if defined(SK_CAST_F32_BF16)
#define SK_CAST_ENTRY sk_cast_f32_bf16
static __device__ __forceinline__ uint16_t sk_convert(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // NaN: keep it a (quiet) NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                          // round to nearest, ties to even
  return (uint16_t)(u >> 16);
}
#elif defined(SK_CAST_F32_F16)
#define SK_CAST_ENTRY sk_cast_f32_f16
static __device__ __forceinline__ uint16_t sk_convert(uint32_t u) {
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);   // NaN
  if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds past 65504: inf
  if (absu < 0x38800000u) {
    // Half subnormal (or zero): m = |f| * 2^24 rounded to nearest even, m <= 1024 (1024 is the smallest normal,
    // still the right bits). |f| = sig * 2^(e - 150) for a normal float, so m = sig >> (126 - e) with the bits
    // shifted out deciding the rounding; float subnormals and shifts past 24 (|f| < 2^-25) give 0.
    const uint32_t e = absu >> 23;
    if (e < 102) return sign;
    const uint32_t sig = (absu & 0x7fffffu) | 0x800000u, s = 126u - e;  // s in 14..24
    uint32_t m = sig >> s;
    const uint32_t rest = sig & ((1u << s) - 1u), half = 1u << (s - 1u);
    if (rest > half || (rest == half && (m & 1u))) ++m;
    return (uint16_t)(sign | m);
  }
  // Normal: rebias the exponent (127 -> 15), round the 13 dropped mantissa bits.
  uint32_t v = absu - (112u << 23);
  v += 0xfffu + ((v >> 13) & 1u);
  return (uint16_t)(sign | (uint16_t)(v >> 13));
}
#elif defined(SK_CAST_BF16_F32)
#define SK_CAST_ENTRY sk_cast_bf16_f32
static __device__ __forceinline__ uint32_t sk_convert(uint16_t h) { return (uint32_t)h << 16; }
#elif defined(SK_CAST_F16_F32)
#define SK_CAST_ENTRY sk_cast_f16_f32
static __device__ __forceinline__ uint32_t sk_convert(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float (a normal float: no flush to zero)
    const float v = (float)man * (1.0f / 16777216.0f);
    return sign | __float_as_uint(v);
  }
  if (exp == 31) return sign | 0x7f800000u | (man << 13);  // inf / NaN, payload kept
  return sign | ((exp + 112u) << 23) | (man << 13);
}
#else
#error "cast.cu: define one of SK_CAST_F32_BF16, SK_CAST_BF16_F32, SK_CAST_F32_F16, SK_CAST_F16_F32"
#endif

#define SK_CAST_VEC 8 /* elements per vector: 16 bytes of 16-bit values, 32 of f32 */

// One element: x[i] -> y[i], on bit patterns (a float is loaded and stored as its bits).
static __device__ __forceinline__ void sk_cast_one(const sk_src_t* x, sk_dst_t* y, int64_t i) {
#ifdef SK_CAST_TO_16
  y[i] = sk_convert(__float_as_uint(x[i]));
#else
  y[i] = __uint_as_float(sk_convert(x[i]));
#endif
}

// A vector's 8 source elements as words: f32, 8 words (two 16-byte loads); 16-bit, 4 words of two elements each,
// the lower half first (one 16-byte load).
#ifdef SK_CAST_TO_16
#define SK_CAST_IN_WORDS 8
#else
#define SK_CAST_IN_WORDS 4
#endif
static __device__ __forceinline__ void sk_cast_load(const sk_src_t* x, uint32_t* w) {
#pragma unroll
  for (int v = 0; v < SK_CAST_IN_WORDS / 4; ++v) {
    const uint4 q = sk_ld_global_v4(x + v * (int)(16 / sizeof(sk_src_t)));
    w[4 * v] = q.x;
    w[4 * v + 1] = q.y;
    w[4 * v + 2] = q.z;
    w[4 * v + 3] = q.w;
  }
}
// The vector's 8 results stored at y: 16-bit, one 16-byte store; f32, two.
static __device__ __forceinline__ void sk_cast_store(sk_dst_t* y, const uint32_t* w) {
#ifdef SK_CAST_TO_16
  uint4 q;
  q.x = (uint32_t)sk_convert(w[0]) | (uint32_t)sk_convert(w[1]) << 16;
  q.y = (uint32_t)sk_convert(w[2]) | (uint32_t)sk_convert(w[3]) << 16;
  q.z = (uint32_t)sk_convert(w[4]) | (uint32_t)sk_convert(w[5]) << 16;
  q.w = (uint32_t)sk_convert(w[6]) | (uint32_t)sk_convert(w[7]) << 16;
  sk_st_global_v4(y, q);
#else
  uint32_t o[8];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    o[2 * i] = sk_convert((uint16_t)(w[i] & 0xffffu));
    o[2 * i + 1] = sk_convert((uint16_t)(w[i] >> 16));
  }
#pragma unroll
  for (int v = 0; v < 2; ++v) {
    uint4 q;
    q.x = o[4 * v];
    q.y = o[4 * v + 1];
    q.z = o[4 * v + 2];
    q.w = o[4 * v + 3];
    sk_st_global_v4(y + 4 * v, q);
  }
#endif
}

SK_KERNEL void SK_CAST_ENTRY(const sk_ctx* ctx, const sk_src_t* x, sk_dst_t* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  const int64_t cnt = e - b, t = threadIdx.x, nt = blockDim.x;
  if (cnt <= 0) return;
  x += b;
  y += b;
#ifdef SK_CAST_TO_16
  const uintptr_t p16 = (uintptr_t)y;
#else
  const uintptr_t p16 = (uintptr_t)x;
#endif
  // Elements before the 16-bit side's first 16-byte boundary (its pointer is 2-byte aligned).
  const int64_t mis = (int64_t)((p16 & 15u) >> 1);
  const int64_t head = mis == 0 ? 0 : (SK_CAST_VEC - mis < cnt ? SK_CAST_VEC - mis : cnt);
  const int64_t nv = (cnt - head) / SK_CAST_VEC;
  if (sk_aligned16(x + head) && sk_aligned16(y + head)) {
    const sk_src_t* xb = x + head;
    sk_dst_t* yb = y + head;
    int64_t v = t;
    for (; v + 3 * nt < nv; v += 4 * nt) {
      uint32_t w[4][SK_CAST_IN_WORDS];
#pragma unroll
      for (int u = 0; u < 4; ++u) sk_cast_load(xb + SK_CAST_VEC * (v + u * nt), w[u]);
#pragma unroll
      for (int u = 0; u < 4; ++u) sk_cast_store(yb + SK_CAST_VEC * (v + u * nt), w[u]);
    }
    for (; v < nv; v += nt) {
      uint32_t w[SK_CAST_IN_WORDS];
      sk_cast_load(xb + SK_CAST_VEC * v, w);
      sk_cast_store(yb + SK_CAST_VEC * v, w);
    }
    if (t < head) sk_cast_one(x, y, t);
    for (int64_t i = head + SK_CAST_VEC * nv + t; i < cnt; i += nt) sk_cast_one(x, y, i);
  } else {
    for (int64_t i = t; i < cnt; i += nt) sk_cast_one(x, y, i);
  }
}
