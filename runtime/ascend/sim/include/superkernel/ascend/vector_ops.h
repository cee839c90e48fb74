// What every simulated Ascend C vector instruction shares (target: ascend-sim only): the element types it
// takes, its computation type, the operand checks and UB accesses on the V pipe (through the simulator's
// checker) and the element-wise loops. Internals of the kernel_operator_vec_*_intf.h headers.
#ifndef SUPERKERNEL_ASCEND_SIM_VECTOR_OPS_H
#define SUPERKERNEL_ASCEND_SIM_VECTOR_OPS_H

#include "kernel_tensor.h"

#pragma GCC visibility push(hidden)

namespace sk_ascend_sim_vec {

template <class T>
struct Arith {
  static constexpr bool kFloat = std::is_same<T, float>::value || std::is_same<T, half>::value;
  static constexpr bool kInt = std::is_same<T, int16_t>::value || std::is_same<T, int32_t>::value;
};
// Computation type: f32 for f32 and f16 (rounded once to f16 on store), the integer itself otherwise.
template <class T>
using Wide = typename std::conditional<std::is_same<T, half>::value, float, T>::type;

template <class T>
struct NoDeduce {
  using type = T;
};

#define SK_ASCEND_SIM_FLOAT_ONLY(T, name) \
  static_assert(sk_ascend_sim_vec::Arith<T>::kFloat, name ": float or half only")
#define SK_ASCEND_SIM_NUMERIC(T, name)                                                      \
  static_assert(sk_ascend_sim_vec::Arith<T>::kFloat || sk_ascend_sim_vec::Arith<T>::kInt, \
                name ": float, half, int16_t or int32_t")

// A vector instruction: checks its operands, records its UB reads and write on the V pipe.
struct VecOp {
  Core& c;
  const Checker& ck;
  uint32_t e;
  const char* op;
  explicit VecOp(const char* name) : c(core()), ck(checker()), e(ck.vecBegin(c, name)), op(name) {}
  template <class T>
  T* read(const AscendC::LocalTensor<T>& t, uint64_t n, const char* what) {
    return access(t, n, false, what);
  }
  template <class T>
  T* write(const AscendC::LocalTensor<T>& t, uint64_t n, const char* what) {
    return access(t, n, true, what);
  }

 private:
  template <class T>
  T* access(const AscendC::LocalTensor<T>& t, uint64_t n, bool isWrite, const char* what) {
    ck.need(c, t.skRef(), n, op, what);
    ck.accessUb(c, kV, e, t.skOff(), static_cast<uint32_t>(n * sizeof(T)), isWrite, op);
    return t.skData();
  }
};

inline uint32_t checkedCount(int32_t n, const char* op) {
  if (n < 0) fail("%s with count %d", op, n);
  return static_cast<uint32_t>(n);
}

template <class T, class F>
inline void binary(const char* op, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                   const AscendC::LocalTensor<T>& b, int32_t n, F f) {
  const uint32_t k = checkedCount(n, op);
  VecOp v(op);
  const T* x = v.read(a, k, "src0");
  const T* y = v.read(b, k, "src1");
  T* d = v.write(dst, k, "dst");
  for (uint32_t i = 0; i < k; ++i) d[i] = static_cast<T>(f(static_cast<Wide<T>>(x[i]), static_cast<Wide<T>>(y[i])));
}

template <class T, class F>
inline void unary(const char* op, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a, int32_t n,
                  F f) {
  const uint32_t k = checkedCount(n, op);
  VecOp v(op);
  const T* x = v.read(a, k, "src");
  T* d = v.write(dst, k, "dst");
  for (uint32_t i = 0; i < k; ++i) d[i] = static_cast<T>(f(static_cast<Wide<T>>(x[i])));
}

}  // namespace sk_ascend_sim_vec

#pragma GCC visibility pop

#endif
