// Elementwise dtype conversion over n elements. One source, four builtins;
// exactly one selector macro is defined (the builtin JSONs do that):
//   SK_CAST_F32_BF16 -> sk_cast_f32_bf16  (round to nearest even, NaN kept quiet)
//   SK_CAST_BF16_F32 -> sk_cast_bf16_f32  (exact)
//   SK_CAST_F32_F16  -> sk_cast_f32_f16   (IEEE half, round to nearest even,
//                                          subnormals, overflow to inf)
//   SK_CAST_F16_F32  -> sk_cast_f16_f32   (exact)
// The same bits as the cpu builtins (kernels/cpu/cast.cpp). The scalar unit has
// no half type, so the f16 conversions are integer bit arithmetic; the f32 ->
// f16 subnormal case rounds with integer shifts where the cpu kernel uses rintf.
// Split: SkBlockRange(n): x, y "block". Compile-time: SK_N.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "cast (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

__aicore__ inline uint32_t SkF32Bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
__aicore__ inline float SkBitsF32(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

#if defined(SK_CAST_F32_BF16)
__aicore__ inline uint16_t SkConvert(float f) {
  uint32_t u = SkF32Bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN: keep it quiet
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}
#define SK_CAST_ENTRY sk_cast_f32_bf16
#define SK_SRC_T float
#define SK_DST_T uint16_t
#elif defined(SK_CAST_BF16_F32)
__aicore__ inline float SkConvert(uint16_t h) { return SkBf16ToFloat(h); }
#define SK_CAST_ENTRY sk_cast_bf16_f32
#define SK_SRC_T uint16_t
#define SK_DST_T float
#elif defined(SK_CAST_F32_F16)
__aicore__ inline uint16_t SkConvert(float f) {
  const uint32_t u = SkF32Bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (absu >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (absu < 0x38800000u) {
    // Half subnormal (or zero): the result is round(|f| / 2^-24) to nearest
    // even, at most 1024 (which is the smallest normal's bits: still right).
    // |f| = m * 2^(e - 150) with the implicit bit in m, so |f| / 2^-24 is
    // m >> (126 - e), rounded on the bits shifted out.
    const uint32_t e = absu >> 23;
    if (e < 102) return sign;  // f32 subnormal, or below 2^-25: rounds to 0
    const uint32_t m = (absu & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias the exponent (127 -> 15), round the 13 dropped mantissa bits.
  uint32_t v = absu - (112u << 23);
  v += 0xfffu + ((v >> 13) & 1u);
  return static_cast<uint16_t>(sign | (v >> 13));
}
#define SK_CAST_ENTRY sk_cast_f32_f16
#define SK_SRC_T float
#define SK_DST_T uint16_t
#elif defined(SK_CAST_F16_F32)
__aicore__ inline float SkConvert(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    if (man == 0) return SkBitsF32(sign);  // signed zero
    // Subnormal man * 2^-24: normalise so the top set bit becomes the implicit one.
    exp = 113;  // 2^-14's f32 exponent, lowered once per shift below
    while (!(man & 0x400u)) {
      man <<= 1;
      --exp;
    }
    return SkBitsF32(sign | (exp << 23) | ((man & 0x3ffu) << 13));
  }
  if (exp == 31) return SkBitsF32(sign | 0x7f800000u | (man << 13));  // inf / NaN
  return SkBitsF32(sign | ((exp + 112u) << 23) | (man << 13));
}
#define SK_CAST_ENTRY sk_cast_f16_f32
#define SK_SRC_T uint16_t
#define SK_DST_T float
#else
#error "cast.cpp (ascend): define one of SK_CAST_F32_BF16, SK_CAST_BF16_F32, SK_CAST_F32_F16, SK_CAST_F16_F32"
#endif

extern "C" __global__ __aicore__ void SK_CAST_ENTRY(GM_ADDR x, GM_ADDR y) {
  __gm__ const SK_SRC_T* xs = SK_ASCEND_GM(const SK_SRC_T, x);
  __gm__ SK_DST_T* ys = SK_ASCEND_GM(SK_DST_T, y);
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  for (int64_t i = b; i < e; ++i) ys[i] = SkConvert(xs[i]);
}
