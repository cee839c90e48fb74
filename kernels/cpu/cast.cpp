// Elementwise dtype conversion over n elements. One source, four builtins;
// exactly one selector macro must be defined (the builtin JSONs do that):
//   SK_CAST_F32_BF16 -> sk_cast_f32_bf16  (round to nearest even, NaN kept quiet)
//   SK_CAST_BF16_F32 -> sk_cast_bf16_f32  (exact)
//   SK_CAST_F32_F16  -> sk_cast_f32_f16   (IEEE half, round to nearest even,
//                                          subnormals, overflow to inf)
//   SK_CAST_F16_F32  -> sk_cast_f16_f32   (exact)
// Split: sk_block_range(n): x and y are "block". Static shape: -DSK_N=<n>.
#include "superkernel/cpu/kernel.h"

#ifdef SK_N
#define SKV_N ((int64_t)(SK_N))
#else
#define SKV_N n
#endif

__attribute__((unused)) static inline uint32_t sk_f32_bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
__attribute__((unused)) static inline float sk_bits_f32(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

#if defined(SK_CAST_F32_BF16)
static inline uint16_t sk_convert(float f) {
  uint32_t u = sk_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // NaN: keep it a (quiet) NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return (uint16_t)(u >> 16);
}
#define SK_CAST_ENTRY sk_cast_f32_bf16
#define SK_SRC_T float
#define SK_DST_T uint16_t
#elif defined(SK_CAST_BF16_F32)
static inline float sk_convert(uint16_t h) { return sk_bits_f32((uint32_t)h << 16); }
#define SK_CAST_ENTRY sk_cast_bf16_f32
#define SK_SRC_T uint16_t
#define SK_DST_T float
#elif defined(SK_CAST_F32_F16)
static inline uint16_t sk_convert(float f) {
  const uint32_t u = sk_f32_bits(f);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  // NaN
  if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); // rounds past 65504: inf
  if (absu < 0x38800000u) {
    // Half subnormal (or zero): value = m * 2^-24 with m < 1024. Scale the
    // float to that unit and round to nearest even via the FPU.
    const float scaled = sk_bits_f32(absu) * 16777216.0f;  // * 2^24, exact
    float r = __builtin_rintf(scaled);                     // default mode: nearest even
    return (uint16_t)(sign | (uint16_t)r);                 // r == 1024 is the smallest normal: still right
  }
  // Normal: rebias exponent (127 -> 15), round the 13 dropped mantissa bits.
  uint32_t v = absu - (112u << 23);
  v += 0xfffu + ((v >> 13) & 1u);
  return (uint16_t)(sign | (uint16_t)(v >> 13));
}
#define SK_CAST_ENTRY sk_cast_f32_f16
#define SK_SRC_T float
#define SK_DST_T uint16_t
#elif defined(SK_CAST_F16_F32)
static inline float sk_convert(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float
    const float v = (float)man * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return sk_bits_f32(sign | 0x7f800000u | (man << 13));  // inf / NaN
  return sk_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}
#define SK_CAST_ENTRY sk_cast_f16_f32
#define SK_SRC_T uint16_t
#define SK_DST_T float
#else
#error "cast.cpp: define one of SK_CAST_F32_BF16, SK_CAST_BF16_F32, SK_CAST_F32_F16, SK_CAST_F16_F32"
#endif

SK_KERNEL void SK_CAST_ENTRY(const sk_ctx* ctx, const SK_SRC_T* x, SK_DST_T* y, int64_t n) {
  (void)n;
  int64_t b, e;
  sk_block_range(ctx, SKV_N, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = sk_convert(x[i]);
}
