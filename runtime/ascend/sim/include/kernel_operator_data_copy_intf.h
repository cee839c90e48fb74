// Ascend C data movement for the simulator (target: ascend-sim; CANN's kernel_operator_data_copy_intf.h and
// kernel_struct_data_copy.h under bisheng): DataCopy between GM and the unified buffer (MTE2 in, MTE3 out;
// whole 32-byte blocks, contiguous or in strided bursts) and within the UB (V), and DataCopyPad (any length,
// bursts padded to 32-byte blocks in the UB). Each transfer is bounds-checked at both ends and checked
// against the other pipes' unsynchronised UB accesses and this core's pending GM writes (kernel_operator.h).
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_DATA_COPY_INTF_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_DATA_COPY_INTF_H

#include "kernel_tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

struct DataCopyParams {
  __aicore__ DataCopyParams() {}
  __aicore__ DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn,
                            const uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = 1;  // bursts
  uint16_t blockLen = 0;    // 32-byte blocks per burst
  union {
    uint16_t srcGap = 0;  // 32-byte blocks skipped between bursts in the source
    uint16_t srcStride;
  };
  union {
    uint16_t dstGap = 0;  // 32-byte blocks skipped between bursts in the destination
    uint16_t dstStride;
  };
};

// DataCopyPad: lengths and GM gaps in bytes; UB gaps in 32-byte blocks, each UB burst 32-byte aligned.
struct DataCopyExtParams {
  __aicore__ DataCopyExtParams() {}
  __aicore__ DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                               const uint32_t dstStrideIn, const uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <class T>
struct DataCopyPadExtParams {
  __aicore__ DataCopyPadExtParams() {}
  __aicore__ DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                                  T padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T();
};

}  // namespace AscendC

namespace sk_ascend_sim_vec {

// GM -> UB (MTE2) and UB -> GM (MTE3) of `b`: both ends' extents checked here (the tensor's element type
// is known here only), the transfer checked and done by the simulator.
template <class T>
inline void gmToUb(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, const Bursts& b,
                   const char* op) {
  if (b.bursts == 0 || b.len == 0) return;
  const uint64_t ubElems = (b.dstSpan() + sizeof(T) - 1) / sizeof(T), gmElems = (b.srcSpan() + sizeof(T) - 1) / sizeof(T);
  dst.skNeed(ubElems, op, "the destination");
  const uint8_t* g = reinterpret_cast<const uint8_t*>(src.skRange(gmElems, op));
  checker().gmToUb(core(), dst.skRef(), g, b, op);
}

template <class T>
inline void ubToGm(const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const Bursts& b,
                   const char* op) {
  if (b.bursts == 0 || b.len == 0) return;
  const uint64_t ubElems = (b.srcSpan() + sizeof(T) - 1) / sizeof(T), gmElems = (b.dstSpan() + sizeof(T) - 1) / sizeof(T);
  src.skNeed(ubElems, op, "the source");
  uint8_t* g = reinterpret_cast<uint8_t*>(dst.skRange(gmElems, op));
  checker().ubToGm(core(), g, src.skRef(), b, op);
}

inline void alignedLength(uint64_t bytes, const char* op) {
  if (bytes % kBlockBytes != 0) {
    fail("%s of %llu bytes: DataCopy moves whole 32-byte blocks (DataCopyPad copies other lengths)", op,
         static_cast<unsigned long long>(bytes));
  }
}

// DataCopy of `count` elements: one burst of whole 32-byte blocks.
template <class T>
inline Bursts contiguous(uint32_t count, const char* op) {
  const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
  alignedLength(bytes, op);
  return Bursts{1, bytes, bytes, bytes};
}

// DataCopy's DataCopyParams: blockCount bursts of blockLen blocks, srcStride / dstStride blocks between them.
inline Bursts strided(const AscendC::DataCopyParams& p) {
  const uint32_t len = p.blockLen * kBlockBytes;
  return Bursts{p.blockCount, len, len + p.srcStride * kBlockBytes, len + p.dstStride * kBlockBytes};
}

}  // namespace sk_ascend_sim_vec

namespace AscendC {

// GM -> UB (MTE2), `count` elements; count * sizeof(T) a multiple of 32 bytes.
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  sk_ascend_sim_vec::gmToUb(dst, src, sk_ascend_sim_vec::contiguous<T>(count, "DataCopy (GM -> UB)"),
                            "DataCopy (GM -> UB)");
}
// UB -> GM (MTE3).
template <class T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  sk_ascend_sim_vec::ubToGm(dst, src, sk_ascend_sim_vec::contiguous<T>(count, "DataCopy (UB -> GM)"),
                            "DataCopy (UB -> GM)");
}
// Strided: blockCount bursts of blockLen 32-byte blocks, srcStride / dstStride blocks skipped between them.
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
  sk_ascend_sim_vec::gmToUb(dst, src, sk_ascend_sim_vec::strided(p), "DataCopy (GM -> UB, DataCopyParams)");
}
template <class T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  sk_ascend_sim_vec::ubToGm(dst, src, sk_ascend_sim_vec::strided(p), "DataCopy (UB -> GM, DataCopyParams)");
}
// UB -> UB, on the vector pipe.
template <class T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  using namespace sk_ascend_sim_vec;
  const char* op = "DataCopy (UB -> UB)";
  const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
  alignedLength(bytes, op);
  dst.skNeed(count, op, "the destination");
  src.skNeed(count, op, "the source");
  Core& c = core();
  const Checker& ck = checker();
  const uint32_t e = ck.issue(c, kV);
  ck.accessUb(c, kV, e, src.skOff(), bytes, false, op);
  ck.accessUb(c, kV, e, dst.skOff(), bytes, true, op);
  memmove(c.ub + dst.skOff(), c.ub + src.skOff(), bytes);
}

// GM -> UB of any length: blockCount bursts of blockLen bytes, srcStride bytes skipped in GM between them;
// each burst lands 32-byte aligned in UB with dstStride blocks between bursts. With isPad, the burst's
// last 32-byte block is filled past the data with paddingValue (rightPadding elements; left padding is not
// modelled).
template <class T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                                   const DataCopyPadExtParams<T>& pad) {
  using namespace sk_ascend_sim_vec;
  const char* op = "DataCopyPad (GM -> UB)";
  if (pad.leftPadding != 0) fail("%s with leftPadding: not modelled by the simulator", op);
  const uint32_t ubLen = (p.blockLen + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  if (pad.isPad && p.blockLen + pad.rightPadding * sizeof(T) > ubLen) {
    fail("%s: rightPadding %u element(s) past the burst's last 32-byte block", op, pad.rightPadding);
  }
  const Bursts b{p.blockCount, p.blockLen, p.blockLen + p.srcStride, ubLen + p.dstStride * kBlockBytes};
  if (pad.isPad && p.blockCount > 0) dst.skNeed((b.dstSpan() - p.blockLen + ubLen) / sizeof(T), op, "the destination");
  gmToUb(dst, src, b, op);
  if (pad.isPad) {
    T* u = dst.skData();
    for (uint32_t i = 0; i < p.blockCount; ++i)
      for (uint32_t k = 0; k < pad.rightPadding; ++k) u[(i * b.dstPitch + p.blockLen) / sizeof(T) + k] = pad.paddingValue;
  }
}
template <class T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p) {
  DataCopyPad(dst, src, p, DataCopyPadExtParams<T>());
}
// UB -> GM of any length: each burst read from a 32-byte aligned UB position (srcStride blocks between
// bursts), written with dstStride bytes skipped in GM between bursts.
template <class T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
  using namespace sk_ascend_sim_vec;
  const uint32_t ubLen = (p.blockLen + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  ubToGm(dst, src, Bursts{p.blockCount, p.blockLen, ubLen + p.srcStride * kBlockBytes, p.blockLen + p.dstStride},
         "DataCopyPad (UB -> GM)");
}

}  // namespace AscendC

#pragma GCC visibility pop

#endif
