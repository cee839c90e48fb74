// Ascend C tensors for the simulator (target: ascend-sim; CANN's kernel_tensor.h under bisheng):
// GlobalTensor (GM, bounds-checked when given a size) and LocalTensor (a view of a buffer in the unified
// buffer, valid while whoever got it from AllocTensor / DeQue / TBuf::Get still owns the buffer). Scalar
// access through either is an instruction of the S pipe, checked like any other (kernel_operator.h).
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_TENSOR_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_TENSOR_H

#include "kernel_common.h"
#include "superkernel/ascend/vector_check.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

template <class T>
class GlobalTensor {
 public:
  GlobalTensor() = default;
  __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    addr_ = buffer;
    size_ = bufferSize;
  }
  __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer) {
    addr_ = buffer;
    size_ = 0;
  }
  __aicore__ inline const __gm__ T* GetPhyAddr() const { return addr_; }
  __aicore__ inline __gm__ T* GetPhyAddr(const uint64_t offset) const { return addr_ + offset; }
  // 0 when SetGlobalBuffer was given no size (then transfers are not bounds-checked).
  __aicore__ inline uint64_t GetSize() const { return size_; }
  __aicore__ inline GlobalTensor operator[](const uint64_t offset) const {
    GlobalTensor t;
    t.addr_ = addr_ + offset;
    t.size_ = size_ == 0 ? 0 : (offset < size_ ? size_ - offset : 1);  // past the end: any use fails
    t.pastEnd_ = pastEnd_ || (size_ != 0 && offset >= size_);
    return t;
  }
  // Scalar GM access (the S pipe).
  __aicore__ inline T GetValue(const uint64_t offset) const {
    __gm__ T* p = skRange(offset + 1, "GlobalTensor::GetValue");
    sk_ascend_sim_vec::Core& c = sk_ascend_sim_vec::core();
    const sk_ascend_sim_vec::Checker& ck = sk_ascend_sim_vec::checker();
    ck.noteGm(c, "GlobalTensor::GetValue");
    ck.scalarGmRead(c, p + offset, sizeof(T), "GlobalTensor::GetValue");
    return p[offset];
  }
  __aicore__ inline void SetValue(const uint64_t offset, const T value) const {
    __gm__ T* p = skRange(offset + 1, "GlobalTensor::SetValue");
    sk_ascend_sim_vec::checker().noteGm(sk_ascend_sim_vec::core(), "GlobalTensor::SetValue");
    p[offset] = value;
  }

  // Simulator: the checked element range [0, n) of this tensor, for an operation named `op`.
  __gm__ T* skRange(uint64_t n, const char* op) const {
    if (addr_ == nullptr) sk_ascend_sim_vec::fail("%s: a GlobalTensor with no SetGlobalBuffer", op);
    if (pastEnd_ || (size_ != 0 && n > size_)) {
      sk_ascend_sim_vec::fail("%s: %llu element(s) from a GlobalTensor past its SetGlobalBuffer size", op,
                              static_cast<unsigned long long>(n));
    }
    return addr_;
  }

 private:
  __gm__ T* addr_ = nullptr;
  uint64_t size_ = 0;
  bool pastEnd_ = false;
};

template <class T>
class LocalTensor {
 public:
  LocalTensor() = default;
  __aicore__ inline uint32_t GetSize() const { return ref_.size; }
  __aicore__ inline void SetSize(const uint32_t size) {
    if (size * sizeof(T) > capBytes_) sk_ascend_sim_vec::fail("LocalTensor::SetSize(%u) past its buffer of %u bytes", size, capBytes_);
    ref_.size = size;
  }
  __aicore__ inline TPosition GetPosition() const { return pos_; }
  __aicore__ inline LocalTensor operator[](const uint32_t offset) const {
    if (offset > ref_.size) sk_ascend_sim_vec::fail("LocalTensor[%u] on a tensor of %u element(s)", offset, ref_.size);
    LocalTensor t = *this;
    t.ref_.off = ref_.off + offset * static_cast<uint32_t>(sizeof(T));
    t.ref_.size = ref_.size - offset;
    t.capBytes_ = capBytes_ - offset * static_cast<uint32_t>(sizeof(T));
    return t;
  }
  template <class U>
  __aicore__ inline LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.skInit(ref_.off, capBytes_, static_cast<uint32_t>(ref_.size * sizeof(T) / sizeof(U)), ref_.slot, ref_.gen, pos_);
    return t;
  }
  // The UB address (host memory here). Accesses through it are not checked for races.
  __aicore__ inline __ubuf__ T* GetPhyAddr() const { return reinterpret_cast<T*>(skUb("GetPhyAddr") + ref_.off); }
  __aicore__ inline __ubuf__ T* GetPhyAddr(const uint32_t offset) const { return GetPhyAddr() + offset; }
  // Scalar UB access (the S pipe): ordered after V / MTE2 writes only by a sync (e.g. HardEvent::V_S).
  __aicore__ inline T GetValue(const uint32_t index) const {
    skScalar(index, false, "LocalTensor::GetValue");
    return skData()[index];
  }
  __aicore__ inline void SetValue(const uint32_t index, const T value) const {
    skScalar(index, true, "LocalTensor::SetValue");
    skData()[index] = value;
  }

  // ---- simulator internals (public so the API's free functions can use them) ----
  void skInit(uint32_t off, uint32_t capBytes, uint32_t size, int slot, uint32_t gen, TPosition pos) {
    ref_ = sk_ascend_sim_vec::TensorRef{off, size, slot, gen};
    capBytes_ = capBytes;
    pos_ = pos;
  }
  const sk_ascend_sim_vec::TensorRef& skRef() const { return ref_; }
  uint32_t skOff() const { return ref_.off; }
  // Checks the tensor is live (its buffer still owned by whoever got this handle) and returns the UB.
  uint8_t* skUb(const char* op) const {
    sk_ascend_sim_vec::Core& c = sk_ascend_sim_vec::core();
    sk_ascend_sim_vec::checker().live(c, ref_, op);
    return c.ub;
  }
  // Checks `n` elements of this tensor exist and start 32-byte aligned (vector operands and DataCopy).
  void skNeed(uint64_t n, const char* op, const char* what) const {
    sk_ascend_sim_vec::checker().need(sk_ascend_sim_vec::core(), ref_, n, op, what);
  }
  T* skData() const { return reinterpret_cast<T*>(sk_ascend_sim_vec::tlCore.ub + ref_.off); }

 private:
  // Element `index` read or written by the S pipe.
  void skScalar(uint32_t index, bool write, const char* op) const {
    skUb(op);
    if (index >= ref_.size) {
      sk_ascend_sim_vec::fail("%s(%u) on a tensor of %u element(s)", op, index, ref_.size);
    }
    sk_ascend_sim_vec::Core& c = sk_ascend_sim_vec::core();
    const sk_ascend_sim_vec::Checker& ck = sk_ascend_sim_vec::checker();
    ck.accessUb(c, sk_ascend_sim_vec::kS, ck.issue(c, sk_ascend_sim_vec::kS),
                ref_.off + index * static_cast<uint32_t>(sizeof(T)), sizeof(T), write, op);
  }

  sk_ascend_sim_vec::TensorRef ref_;
  uint32_t capBytes_ = 0;
  TPosition pos_ = TPosition::VECCALC;
};

}  // namespace AscendC

#pragma GCC visibility pop

#endif
