// Ascend C reductions for the simulator (target: ascend-sim; CANN's kernel_operator_vec_reduce_intf.h under
// bisheng): ReduceSum, ReduceMax / ReduceMin (with the index) and WholeReduceSum (per repeat). Sums are f32
// in a fixed order: each 256-byte repeat in order, then the repeats in order (the hardware's exact order
// is not modelled).
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_REDUCE_INTF_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_VEC_REDUCE_INTF_H

#include "superkernel/ascend/vector_ops.h"

#pragma GCC visibility push(hidden)

namespace sk_ascend_sim_vec {

// Reductions: each 256-byte repeat summed in order in f32, then the repeats' sums in order.
template <class T>
inline float sumOf(const T* x, uint32_t n, T* partial) {
  const uint32_t per = kRepeatBytes / sizeof(T);
  float total = 0.0f;
  for (uint32_t r = 0; r * per < n; ++r) {
    float s = 0.0f;
    for (uint32_t i = r * per; i < n && i < (r + 1) * per; ++i) s += static_cast<float>(x[i]);
    if (partial) partial[r] = static_cast<T>(s);
    total += s;
  }
  return total;
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

// dst[0] = the sum of src[0, count); sharedTmpBuffer receives the per-repeat sums (one element per 256 bytes
// of input), as on the device it is clobbered.
template <class T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "ReduceSum");
  const uint32_t k = sk_ascend_sim_vec::checkedCount(count, "ReduceSum");
  sk_ascend_sim_vec::VecOp v("ReduceSum");
  const uint32_t repeats = (k * static_cast<uint32_t>(sizeof(T)) + sk_ascend_sim_vec::kRepeatBytes - 1) / sk_ascend_sim_vec::kRepeatBytes;
  const T* x = v.read(src, k, "src");
  T* w = v.write(sharedTmpBuffer, repeats, "sharedTmpBuffer");
  const float s = sk_ascend_sim_vec::sumOf(x, k, w);
  v.write(dst, 1, "dst")[0] = static_cast<T>(s);
}

template <class T, bool isMax>
inline void skReduceExtreme(const char* op, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                            const LocalTensor<T>& tmp, int32_t count, bool calIndex) {
  const uint32_t k = sk_ascend_sim_vec::checkedCount(count, op);
  if (k == 0) sk_ascend_sim_vec::fail("%s of 0 elements", op);
  sk_ascend_sim_vec::VecOp v(op);
  const T* x = v.read(src, k, "src");
  v.write(tmp, 1, "sharedTmpBuffer");
  uint32_t best = 0;
  for (uint32_t i = 1; i < k; ++i) {
    const float a = static_cast<float>(x[i]), b = static_cast<float>(x[best]);
    if (isMax ? a > b : a < b) best = i;
  }
  T* d = v.write(dst, calIndex ? 2 : 1, "dst");
  const T value = x[best];
  d[0] = value;
  if (calIndex) {  // the index's bits in the second element, as the device stores it
    if (sizeof(T) == 4) {
      const uint32_t idx = best;
      memcpy(&d[1], &idx, 4);
    } else {
      const uint16_t idx = static_cast<uint16_t>(best);
      memcpy(&d[1], &idx, 2);
    }
  }
}

// dst[0] = the largest (smallest) of src[0, count); with calIndex, dst[1] holds its index's bits (read them
// with a reinterpret, e.g. ReinterpretCast<uint32_t>() for float).
template <class T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = 0) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "ReduceMax");
  skReduceExtreme<T, true>("ReduceMax", dst, src, sharedTmpBuffer, count, calIndex);
}
template <class T>
__aicore__ inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = 0) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "ReduceMin");
  skReduceExtreme<T, false>("ReduceMin", dst, src, sharedTmpBuffer, count, calIndex);
}

// Per repeat r (repeatTime of them): the sum of the first `mask` elements of the repeat's 8 blocks (block
// b at srcBlkStride * b blocks, repeat r at srcRepStride * r blocks) into dst[r * dstRepStride].
template <class T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride,
                                      const int32_t srcBlkStride, const int32_t srcRepStride) {
  SK_ASCEND_SIM_FLOAT_ONLY(T, "WholeReduceSum");
  using namespace sk_ascend_sim_vec;
  const char* op = "WholeReduceSum";
  const int32_t perRepeat = static_cast<int32_t>(kRepeatBytes / sizeof(T)), perBlock = static_cast<int32_t>(kBlockBytes / sizeof(T));
  if (mask < 1 || mask > perRepeat) fail("%s: mask %d (1..%d elements of a repeat)", op, mask, perRepeat);
  if (repeatTime < 0 || repeatTime > 255) fail("%s: repeatTime %d (0..255)", op, repeatTime);
  if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) fail("%s: negative stride", op);
  VecOp v(op);
  const int32_t lastBlock = (mask - 1) / perBlock;
  const uint64_t srcElems = repeatTime == 0 ? 0 : (static_cast<uint64_t>(repeatTime - 1) * srcRepStride + static_cast<uint64_t>(lastBlock) * srcBlkStride) * perBlock + perBlock;
  const T* x = v.read(src, srcElems, "src");
  T* d = v.write(dst, repeatTime == 0 ? 0 : static_cast<uint64_t>(repeatTime - 1) * dstRepStride + 1, "dst");
  for (int32_t r = 0; r < repeatTime; ++r) {
    float s = 0.0f;
    for (int32_t i = 0; i < mask; ++i) {
      const int32_t blk = i / perBlock, in = i % perBlock;
      s += static_cast<float>(x[(static_cast<int64_t>(r) * srcRepStride + static_cast<int64_t>(blk) * srcBlkStride) * perBlock + in]);
    }
    d[static_cast<int64_t>(r) * dstRepStride] = static_cast<T>(s);
  }
}

}  // namespace AscendC

#pragma GCC visibility pop

#endif
