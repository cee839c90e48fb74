// Ascend C binary vector instructions for the simulator (target: ascend-sim; CANN's
// kernel_operator_vec_binary_intf.h and kernel_operator_vec_binary_scalar_intf.h under bisheng), the count
// forms: Add, Sub, Mul, Div, Max, Min of two tensors, and Adds, Muls, Maxs, Mins of a tensor and a scalar.
// f16 is computed in f32 and rounded once (exact for these operations).
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_BINARY_INTF_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_BINARY_INTF_H

#include "superkernel/ascend/vector_ops.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

template <class T>
__aicore__ inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Add");
  sk_ascend_sim_vec::binary("Add", dst, src0, src1, count, [](auto a, auto b) { return a + b; });
}
template <class T>
__aicore__ inline void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Sub");
  sk_ascend_sim_vec::binary("Sub", dst, src0, src1, count, [](auto a, auto b) { return a - b; });
}
template <class T>
__aicore__ inline void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Mul");
  sk_ascend_sim_vec::binary("Mul", dst, src0, src1, count, [](auto a, auto b) { return a * b; });
}
template <class T>
__aicore__ inline void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Div");
  sk_ascend_sim_vec::binary("Div", dst, src0, src1, count, [](auto a, auto b) { return a / b; });
}
template <class T>
__aicore__ inline void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Max");
  sk_ascend_sim_vec::binary("Max", dst, src0, src1, count, [](auto a, auto b) { return a > b ? a : b; });
}
template <class T>
__aicore__ inline void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Min");
  sk_ascend_sim_vec::binary("Min", dst, src0, src1, count, [](auto a, auto b) { return a < b ? a : b; });
}

template <class T, bool isSetMask = true>
__aicore__ inline void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Adds");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Adds", dst, src, count, [s](auto a) { return a + s; });
}
template <class T, bool isSetMask = true>
__aicore__ inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Muls");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Muls", dst, src, count, [s](auto a) { return a * s; });
}
template <class T, bool isSetMask = true>
__aicore__ inline void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Maxs");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Maxs", dst, src, count, [s](auto a) { return a > s ? a : s; });
}
template <class T, bool isSetMask = true>
__aicore__ inline void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Mins");
  const sk_ascend_sim_vec::Wide<T> s = static_cast<sk_ascend_sim_vec::Wide<T>>(scalarValue);
  sk_ascend_sim_vec::unary("Mins", dst, src, count, [s](auto a) { return a < s ? a : s; });
}

}  // namespace AscendC

#pragma GCC visibility pop

#endif
