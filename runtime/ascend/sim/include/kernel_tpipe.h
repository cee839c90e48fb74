// Ascend C queues and pipes for the simulator (target: ascend-sim; CANN's kernel_tpipe.h and
// kernel_tquebind.h under bisheng): TPipe (one per kernel, owning the UB allocations of its queues and
// buffers), TQueBind / TQue (buffers handed between the pipe that fills them and the pipe that drains
// them, carrying the sync between the two) and TBuf (a plain buffer, no sync). The checks each call makes
// are the simulator's (runtime/ascend/sim/src/VectorChecker.cpp); kernel_operator.h says what they catch.
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_TPIPE_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_TPIPE_H

#include "kernel_tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

// One per kernel (a second one alive on the core is an error). Its end is PipeBarrier<PIPE_ALL> (every pipe
// drained) and checks nothing was left behind.
class TPipe : public sk_ascend_sim_vec::PipeState {
 public:
  __aicore__ inline TPipe() { sk_ascend_sim_vec::checker().pipeBegin(sk_ascend_sim_vec::core(), *this); }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;
  // noexcept(false): a misuse found at the end fails the launch by unwinding the core, as every error does.
  // When the core is already unwinding, it just lets go of the UB.
  __aicore__ inline ~TPipe() noexcept(false) {
    const sk_ascend_sim_vec::Checker& ck = sk_ascend_sim_vec::checker();
    ck.pipeEnd(sk_ascend_sim_vec::core(), *this, !ck.unwinding());
  }

  // `num` buffers of `len` bytes (rounded up to 32) for a queue.
  template <class Q>
  __aicore__ inline bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
    static_assert(std::is_base_of<sk_ascend_sim_vec::QueueState, Q>::value, "InitBuffer(queue, num, len) takes a TQue");
    if (que.isBuf_) sk_ascend_sim_vec::fail("TPipe::InitBuffer(buf, num, len) on a TBuf: a TBuf takes InitBuffer(buf, len)");
    sk_ascend_sim_vec::checker().pipeInitBuffer(sk_ascend_sim_vec::core(), *this, que, num, len);
    return true;
  }
  // One buffer of `len` bytes for a TBuf.
  template <class B>
  __aicore__ inline bool InitBuffer(B& buf, uint32_t len) {
    static_assert(std::is_base_of<sk_ascend_sim_vec::QueueState, B>::value, "InitBuffer(buf, len) takes a TBuf");
    if (!buf.isBuf_) sk_ascend_sim_vec::fail("TPipe::InitBuffer(que, len) on a TQue: a queue takes InitBuffer(que, num, len)");
    sk_ascend_sim_vec::checker().pipeInitBuffer(sk_ascend_sim_vec::core(), *this, buf, 1, len);
    return true;
  }

  // Releases every buffer (PipeBarrier<PIPE_ALL> first); the checks of the TPipe's end.
  __aicore__ inline void Destroy() { sk_ascend_sim_vec::checker().pipeEnd(sk_ascend_sim_vec::core(), *this, true); }
  // Frees the UB for new InitBuffer calls, like Destroy, but the TPipe stays this core's.
  __aicore__ inline void Reset() {
    Destroy();
    sk_ascend_sim_vec::core().pipe = this;
  }

  template <HardEvent evt>
  __aicore__ inline TEventID AllocEventID() {
    return skEventId(evt, true);
  }
  template <HardEvent evt>
  __aicore__ inline void ReleaseEventID(TEventID id) {
    sk_ascend_sim_vec::checker().releaseEventId(sk_ascend_sim_vec::core(), *this, static_cast<int>(evt), id);
  }
  // The id AllocEventID would return next, without allocating it.
  __aicore__ inline TEventID FetchEventID(HardEvent evt) { return skEventId(evt, false); }
  template <HardEvent evt>
  __aicore__ inline TEventID FetchEventID() {
    return FetchEventID(evt);
  }

 private:
  TEventID skEventId(HardEvent evt, bool allocate) {
    const int id = sk_ascend_sim_vec::checker().eventId(sk_ascend_sim_vec::core(), *this, static_cast<int>(evt), allocate);
    return static_cast<TEventID>(id);
  }
};

__aicore__ inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(sk_ascend_sim_vec::core().pipe); }

// A queue between the pipe that fills its buffers (src position: VECIN by MTE2, else V) and the pipe that
// drains them (dst position: VECOUT by MTE3, else V). EnQue carries the producer's sync to DeQue;
// FreeTensor carries the consumer's to the next AllocTensor of that buffer.
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind : public sk_ascend_sim_vec::QueueState {
 public:
  __aicore__ inline TQueBind() : QueueState(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), depth, false) {}
  __aicore__ inline ~TQueBind() noexcept(false) {
    if (registered_ && pipe_ != nullptr) {
      const sk_ascend_sim_vec::Checker& ck = sk_ascend_sim_vec::checker();
      ck.forgetQueue(sk_ascend_sim_vec::core(), *this, !ck.unwinding());
    }
  }

  template <class T>
  __aicore__ inline LocalTensor<T> AllocTensor() {
    sk_ascend_sim_vec::Core& c = sk_ascend_sim_vec::core();
    return skTensor<T>(c, sk_ascend_sim_vec::checker().allocTensor(c, *this), src);
  }
  template <class T>
  __aicore__ inline void AllocTensor(LocalTensor<T>& tensor) {
    tensor = AllocTensor<T>();
  }

  template <class T>
  __aicore__ inline bool EnQue(const LocalTensor<T>& tensor) {
    sk_ascend_sim_vec::checker().enQue(sk_ascend_sim_vec::core(), *this, tensor.skRef());
    return true;
  }

  template <class T>
  __aicore__ inline LocalTensor<T> DeQue() {
    sk_ascend_sim_vec::Core& c = sk_ascend_sim_vec::core();
    return skTensor<T>(c, sk_ascend_sim_vec::checker().deQue(c, *this), dst);
  }
  template <class T>
  __aicore__ inline void DeQue(LocalTensor<T>& tensor) {
    tensor = DeQue<T>();
  }

  template <class T>
  __aicore__ inline void FreeTensor(LocalTensor<T>& tensor) {
    sk_ascend_sim_vec::checker().freeTensor(sk_ascend_sim_vec::core(), *this, tensor.skRef());
  }

  __aicore__ inline bool HasTensorInQue() { return enqueued_ > 0; }
  __aicore__ inline int32_t GetTensorCountInQue() { return static_cast<int32_t>(enqueued_); }
  __aicore__ inline bool VacantInQue() { return static_cast<int32_t>(enqueued_) < depth_; }

 private:
  // The whole buffer of slot k, as the tensor its new owner holds.
  template <class T>
  static LocalTensor<T> skTensor(const sk_ascend_sim_vec::Core& c, int k, TPosition pos) {
    const sk_ascend_sim_vec::Slot& s = c.slots[k];
    LocalTensor<T> t;
    t.skInit(s.off, s.bytes, static_cast<uint32_t>(s.bytes / sizeof(T)), k, s.gen, pos);
    return t;
  }
};

template <TPosition pos, int32_t depth, auto mask = 0>
using TQue = TQueBind<pos, pos, depth, mask>;

// A plain buffer (no queue, no automatic sync): scratch space of the vector unit.
template <TPosition pos = TPosition::VECCALC>
class TBuf : public sk_ascend_sim_vec::QueueState {
 public:
  __aicore__ inline TBuf() : QueueState(static_cast<uint8_t>(pos), static_cast<uint8_t>(pos), 0, true) {}
  __aicore__ inline ~TBuf() {
    if (registered_ && pipe_ != nullptr) sk_ascend_sim_vec::checker().forgetQueue(sk_ascend_sim_vec::core(), *this, false);
  }
  template <class T>
  __aicore__ inline LocalTensor<T> Get() {
    return Get<T>(static_cast<uint32_t>(len_ / sizeof(T)));
  }
  // The first `len` elements of the buffer.
  template <class T>
  __aicore__ inline LocalTensor<T> Get(uint32_t len) {
    sk_ascend_sim_vec::Core& c = sk_ascend_sim_vec::core();
    sk_ascend_sim_vec::checker().bufGet(c, *this, len, static_cast<uint64_t>(len) * sizeof(T));
    const sk_ascend_sim_vec::Slot& s = c.slots[first_];
    LocalTensor<T> t;
    t.skInit(s.off, s.bytes, len, first_, s.gen, pos);
    return t;
  }
};

}  // namespace AscendC

#pragma GCC visibility pop

#endif
