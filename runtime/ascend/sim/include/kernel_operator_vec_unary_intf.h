// Ascend C unary vector instructions for the simulator (target: ascend-sim; CANN's
// kernel_operator_vec_unary_intf.h and kernel_operator_vec_duplicate_intf.h under bisheng), the count
// forms: Exp, Ln, Abs, Sqrt, Rsqrt, Reciprocal, Relu, and Duplicate (a scalar into every element).
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_UNARY_INTF_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_UNARY_INTF_H

#include "superkernel/ascend/vector_ops.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

template <class T>
__aicore__ inline void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Exp");
  sk_ascend_sim_vec::unary("Exp", dst, src, count, [](float a) { return __builtin_expf(a); });
}
template <class T>
__aicore__ inline void Ln(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Ln");
  sk_ascend_sim_vec::unary("Ln", dst, src, count, [](float a) { return __builtin_logf(a); });
}
template <class T>
__aicore__ inline void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Abs");
  sk_ascend_sim_vec::unary("Abs", dst, src, count, [](auto a) { return a < 0 ? -a : a; });
}
template <class T>
__aicore__ inline void Sqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Sqrt");
  sk_ascend_sim_vec::unary("Sqrt", dst, src, count, [](float a) { return __builtin_sqrtf(a); });
}
template <class T>
__aicore__ inline void Rsqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Rsqrt");
  sk_ascend_sim_vec::unary("Rsqrt", dst, src, count, [](float a) { return 1.0f / __builtin_sqrtf(a); });
}
template <class T>
__aicore__ inline void Reciprocal(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "Reciprocal");
  sk_ascend_sim_vec::unary("Reciprocal", dst, src, count, [](float a) { return 1.0f / a; });
}
template <class T>
__aicore__ inline void Relu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Relu");
  sk_ascend_sim_vec::unary("Relu", dst, src, count, [](auto a) { return a > 0 ? a : decltype(a)(0); });
}

template <class T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const typename sk_ascend_sim_vec::NoDeduce<T>::type& scalarValue,
                                 const int32_t& count) {
  SK_ASCEND_SIM_NUMERIC(T, "Duplicate");
  const uint32_t k = sk_ascend_sim_vec::checkedCount(count, "Duplicate");
  sk_ascend_sim_vec::VecOp v("Duplicate");
  T* d = v.write(dst, k, "dst");
  for (uint32_t i = 0; i < k; ++i) d[i] = scalarValue;
}

}  // namespace AscendC

#pragma GCC visibility pop

#endif
