// Ascend C Gather for the simulator (target: ascend-sim; CANN's kernel_operator_vec_gather_intf.h under
// bisheng): elements of a tensor picked by byte offsets held in another.
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_GATHER_INTF_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_GATHER_INTF_H

#include "superkernel/ascend/vector_ops.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

// dst[i] = the element of src at byte offset srcBaseAddr + srcOffset[i], i < count (the vector unit's gather):
// offsets in bytes, each a whole element inside src; dst may not overlap src or srcOffset.
template <class T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                              const uint32_t srcBaseAddr, const uint32_t count) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Gather: 16- or 32-bit elements");
  using namespace sk_ascend_sim_vec;
  VecOp v("Gather");
  const uint32_t* off = v.read(srcOffset, count, "srcOffset");
  const uint64_t srcBytes = static_cast<uint64_t>(src.GetSize()) * sizeof(T);
  uint64_t span = 0;  // elements of src read: up to the largest offset
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t at = static_cast<uint64_t>(srcBaseAddr) + off[i];
    if (at % sizeof(T) != 0) fail("Gather: srcOffset[%u] = %u (+ srcBaseAddr %u) is not a whole element of %u bytes", i, off[i], srcBaseAddr, static_cast<unsigned>(sizeof(T)));
    if (at >= srcBytes) fail("Gather: srcOffset[%u] = %u (+ srcBaseAddr %u) past src, a LocalTensor of %llu bytes", i, off[i], srcBaseAddr, static_cast<unsigned long long>(srcBytes));
    if (at / sizeof(T) + 1 > span) span = at / sizeof(T) + 1;
  }
  const T* x = v.read(src, span, "src");
  const uint64_t d0 = dst.skOff(), d1 = d0 + static_cast<uint64_t>(count) * sizeof(T);
  const uint64_t s0 = src.skOff(), s1 = s0 + span * sizeof(T), o0 = srcOffset.skOff(), o1 = o0 + static_cast<uint64_t>(count) * 4;
  if (count > 0 && ((d0 < s1 && s0 < d1) || (d0 < o1 && o0 < d1))) fail("Gather: dst overlaps src or srcOffset");
  T* d = v.write(dst, count, "dst");
  for (uint32_t i = 0; i < count; ++i) d[i] = x[(srcBaseAddr + off[i]) / sizeof(T)];
}

}  // namespace AscendC

#pragma GCC visibility pop

#endif
