// Ascend C Cast for the simulator (target: ascend-sim; CANN's kernel_operator_vec_vconv_intf.h under
// bisheng): f32 <-> f16, f32 <-> bf16 and f32 <-> int32, with the round modes the simulator models.
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_VCONV_INTF_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_VCONV_INTF_H

#include "superkernel/ascend/vector_ops.h"

#pragma GCC visibility push(hidden)

namespace sk_ascend_sim_vec {

// Cast between f32 and f16 / bf16 / int32. f32 -> f16 / bf16: CAST_NONE and CAST_RINT round to nearest even
// (other modes are not modelled); to f32: exact (CAST_NONE); f32 -> int32: CAST_RINT / FLOOR / CEIL / ROUND
// (half away from zero) / TRUNC, saturating, NaN -> 0.
inline int32_t toInt(float v, AscendC::RoundMode m) {
  using M = AscendC::RoundMode;
  float r;
  switch (m) {
    case M::CAST_RINT: r = __builtin_nearbyintf(v); break;
    case M::CAST_FLOOR: r = __builtin_floorf(v); break;
    case M::CAST_CEIL: r = __builtin_ceilf(v); break;
    case M::CAST_ROUND: r = __builtin_roundf(v); break;
    case M::CAST_TRUNC: r = __builtin_truncf(v); break;
    default: fail("Cast float -> int32_t: round mode %d (RINT, FLOOR, CEIL, ROUND or TRUNC)", static_cast<int>(m));
  }
  if (r != r) return 0;
  if (r >= 2147483648.0f) return INT32_MAX;
  if (r < -2147483648.0f) return INT32_MIN;
  return static_cast<int32_t>(r);
}

template <class D, class S>
inline D castOne(S v, AscendC::RoundMode m) {
  using M = AscendC::RoundMode;
  if constexpr (std::is_same<D, float>::value) {
    static_assert(std::is_same<S, half>::value || std::is_same<S, bfloat16_t>::value || std::is_same<S, int32_t>::value,
                  "Cast to float: from half, bfloat16_t or int32_t");
    if (std::is_same<S, int32_t>::value && m != M::CAST_NONE && m != M::CAST_RINT) {
      fail("Cast int32_t -> float: round mode %d (CAST_NONE or CAST_RINT)", static_cast<int>(m));
    }
    return static_cast<float>(v);
  } else if constexpr (std::is_same<D, int32_t>::value) {
    static_assert(std::is_same<S, float>::value, "Cast to int32_t: from float");
    return toInt(v, m);
  } else {
    static_assert(std::is_same<S, float>::value && (std::is_same<D, half>::value || std::is_same<D, bfloat16_t>::value),
                  "Cast: float <-> half, float <-> bfloat16_t, float <-> int32_t");
    if (m != M::CAST_NONE && m != M::CAST_RINT) {
      fail("Cast float -> 16-bit float: round mode %d is not modelled (CAST_NONE or CAST_RINT, nearest even)",
           static_cast<int>(m));
    }
    return D(v);
  }
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

template <class T, class U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& round_mode,
                            const uint32_t count) {
  sk_ascend_sim_vec::VecOp v("Cast");
  const U* x = v.read(src, count, "src");
  T* d = v.write(dst, count, "dst");
  // Distinct UB ranges unless in place with equal sizes; a narrowing cast in place reads before it writes.
  if (sizeof(T) > sizeof(U) && reinterpret_cast<const void*>(x) == reinterpret_cast<const void*>(d) && count > 1) {
    sk_ascend_sim_vec::fail("Cast in place to a wider type overwrites its own source");
  }
  for (uint32_t i = 0; i < count; ++i) d[i] = sk_ascend_sim_vec::castOne<T, U>(x[i], round_mode);
}

}  // namespace AscendC

#pragma GCC visibility pop

#endif
