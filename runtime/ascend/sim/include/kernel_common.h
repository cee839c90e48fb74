// The Ascend C vector model's vocabulary, for the simulator (target: ascend-sim; CANN's kernel_common.h and
// friends under bisheng): the 16-bit float types the device compiler has (half, bfloat16_t), the event ids,
// the buffer positions (TPosition), the pipe-to-pipe events (HardEvent), cast rounding modes and reduction
// orders. Names and values follow the public Ascend C API.
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_COMMON_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_COMMON_H

#include "superkernel/ascend/sim_core.h"
#include "superkernel/ascend/vector_state.h"

#pragma GCC visibility push(hidden)

// ---- scalar types the vector unit has and the host compiler may not ----------------------------------
// IEEE binary16, round to nearest even from f32 (bit arithmetic: clang on x86 may have no _Float16).
inline uint16_t sk_ascend_sim_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));  // quiet NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // inf, or rounds past 65504
  if (ax < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (ax < 0x33000000u) return static_cast<uint16_t>(sign);  // at most half the smallest subnormal
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - (ax >> 23);
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = (ax - 0x38000000u) >> 13;  // rebias 127 -> 15
  const uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}
inline float sk_ascend_sim_f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    if (m == 0) {
      x = sign;
    } else {
      const float v = __builtin_ldexpf(static_cast<float>(m), -24);
      memcpy(&x, &v, 4);
      x |= sign;
    }
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112u) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}
inline uint16_t sk_ascend_sim_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float sk_ascend_sim_bf16_to_f32(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

// `half` and `bfloat16_t` are types of the device compiler; here 16-bit storage converting through f32.
// Arithmetic on them is f32 arithmetic rounded once (f32 has more than twice half's precision, so +,-,*,/
// and sqrt rounded from f32 equal the correctly rounded half results).
struct half {
  uint16_t sk_bits;
  half() = default;
  template <class U, class = typename std::enable_if<std::is_arithmetic<U>::value>::type>
  half(U v) : sk_bits(sk_ascend_sim_f32_to_f16(static_cast<float>(v))) {}
  operator float() const { return sk_ascend_sim_f16_to_f32(sk_bits); }
  half& operator+=(float v) { return *this = half(float(*this) + v); }
  half& operator-=(float v) { return *this = half(float(*this) - v); }
  half& operator*=(float v) { return *this = half(float(*this) * v); }
  half& operator/=(float v) { return *this = half(float(*this) / v); }
};
struct bfloat16_t {
  uint16_t sk_bits;
  bfloat16_t() = default;
  template <class U, class = typename std::enable_if<std::is_arithmetic<U>::value>::type>
  bfloat16_t(U v) : sk_bits(sk_ascend_sim_f32_to_bf16(static_cast<float>(v))) {}
  operator float() const { return sk_ascend_sim_bf16_to_f32(sk_bits); }
};
static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit storage");

// Event ids of SetFlag / WaitFlag (global names in the CANN headers too).
enum event_t : int32_t {
  EVENT_ID0 = 0,
  EVENT_ID1 = 1,
  EVENT_ID2 = 2,
  EVENT_ID3 = 3,
  EVENT_ID4 = 4,
  EVENT_ID5 = 5,
  EVENT_ID6 = 6,
  EVENT_ID7 = 7,
};

namespace AscendC {

enum class TPosition : uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  C2PIPE2GM,
  C2PIPE2LOCAL,
  MAX,
};
using QuePosition = TPosition;

// Pipe-to-pipe events, named source_destination. The simulator models the vector core's pipes (S, V,
// MTE2, MTE3); an event naming a cube pipe (M, MTE1, FIX) fails the launch as not modelled.
enum class HardEvent : uint8_t {
  MTE2_MTE1,
  MTE1_MTE2,
  MTE1_M,
  M_MTE1,
  MTE2_V,
  V_MTE2,
  MTE3_V,
  V_MTE3,
  M_V,
  V_M,
  V_V,
  MTE3_MTE1,
  MTE1_MTE3,
  MTE1_V,
  MTE2_M,
  M_MTE2,
  V_MTE1,
  M_FIX,
  FIX_M,
  MTE3_MTE2,
  MTE2_MTE3,
  S_V,
  V_S,
  S_MTE2,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  MTE2_FIX,
  FIX_MTE2,
  FIX_S,
  M_S,
  FIX_MTE3,
  MAX,
};
using TEventID = int8_t;

enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD,
};

enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

// The values the simulator's checker tells apart by number (superkernel/ascend/vector_state.h,
// runtime/ascend/sim/src/VectorChecker.cpp).
static_assert(static_cast<int>(TPosition::VECIN) == sk_ascend_sim_vec::kVecIn &&
                  static_cast<int>(TPosition::VECOUT) == sk_ascend_sim_vec::kVecOut &&
                  static_cast<int>(TPosition::VECCALC) == sk_ascend_sim_vec::kVecCalc,
              "TPosition as the checker numbers it");
static_assert(static_cast<int>(HardEvent::MTE2_V) == 4 && static_cast<int>(HardEvent::V_V) == 10 &&
                  static_cast<int>(HardEvent::MTE3_MTE2) == 19 && static_cast<int>(HardEvent::MTE3_S) == 26 &&
                  static_cast<int>(HardEvent::MAX) == sk_ascend_sim_vec::kHardEvents,
              "HardEvent as the checker numbers it");

}  // namespace AscendC

#pragma GCC visibility pop

#endif
