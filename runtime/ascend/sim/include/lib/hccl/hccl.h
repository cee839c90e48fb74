// The AscendC::Hccl client, simulated (target ascend-sim; docs/COLLECTIVES.md "On ascend-sim"): the AI Core
// side of CANN's fused communication ("MC2"), as a kernel author writes it:
//
//   AscendC::Hccl hccl;
//   hccl.InitV2(AscendC::GetHcclContext<0>(), &tiling);
//   AscendC::HcclHandle h = hccl.AllReduce<true>(x, y, count, AscendC::HCCL_DATA_TYPE_FP32, AscendC::HCCL_REDUCE_SUM);
//   hccl.Wait(h);
//   hccl.Finalize();
//
// Names and parameters follow CANN's Ascend C HCCL API (Prepare calls AllReduce / AllGather / ReduceScatter /
// AlltoAll returning a handle, Commit, Wait, Finalize, GetRankDim (GetRankId is not simulated); HcclDataType and HcclReduceOp
// with HCCL's values); unverified against a CANN install (none here), so a real build includes CANN's header,
// never this one.
//
// What differs, and why:
// - On a device a Prepare call only writes the task into the context's message area; Commit tells the AI CPU
//   (or CCU) server to run it with HCCL, Wait blocks the core until the server reports it done. Here the task
//   runs at Wait (or at Finalize if committed and never waited), on the calling core's host thread, through the
//   simulator (sim_abi.h hccl_run) over the launching device's communicator: the other cores go on meanwhile.
// - The tiling. CANN's host side builds an Mc2 tiling (group name, op type, reduce type, algorithm) that InitV2
//   and SetCcTiling read; here it is SkHcclTiling: the collective's identity as superkernel's planner states it
//   (desc, the group as a rank mask, the tag every rank running the same plan agrees on), which the simulator
//   checks across ranks so ranks whose plans disagree fail with one error naming the op.
// - A Prepare call whose kind, data type or reduction differs from the tiling's traps (the server would run
//   what the tiling says).
#ifndef SUPERKERNEL_ASCEND_SIM_HCCL_H
#define SUPERKERNEL_ASCEND_SIM_HCCL_H

#include "kernel_operator.h"

#pragma GCC visibility push(hidden)

// The tiling the simulated client runs with (see above): desc = kind | reduce << 8 | dtype << 16 (kind 0
// all_reduce, 1 all_gather, 2 reduce_scatter, 3 all_to_all; reduce 1 sum, 2 max; dtype in the op list's order),
// ranks the group as a bit mask of ranks, tag the op's identity across ranks (docs/COLLECTIVES.md).
struct SkHcclTiling {
  uint64_t desc;
  uint64_t ranks;
  uint64_t tag;
};

namespace AscendC {

// HCCL's values (hccl_types.h).
enum HcclDataType : uint32_t {
  HCCL_DATA_TYPE_INT8 = 0,
  HCCL_DATA_TYPE_INT16 = 1,
  HCCL_DATA_TYPE_INT32 = 2,
  HCCL_DATA_TYPE_FP16 = 3,
  HCCL_DATA_TYPE_FP32 = 4,
  HCCL_DATA_TYPE_INT64 = 5,
  HCCL_DATA_TYPE_UINT64 = 6,
  HCCL_DATA_TYPE_UINT8 = 7,
  HCCL_DATA_TYPE_UINT16 = 8,
  HCCL_DATA_TYPE_UINT32 = 9,
  HCCL_DATA_TYPE_FP64 = 10,
  HCCL_DATA_TYPE_BFP16 = 11,
  HCCL_DATA_TYPE_RESERVED = 255,
};
enum HcclReduceOp : uint32_t {
  HCCL_REDUCE_SUM = 0,
  HCCL_REDUCE_PROD = 1,
  HCCL_REDUCE_MAX = 2,
  HCCL_REDUCE_MIN = 3,
  HCCL_REDUCE_RESERVED = 255,
};
enum class HcclServerType : uint32_t { HCCL_SERVER_TYPE_AICPU = 0, HCCL_SERVER_TYPE_CCU = 1 };
using HcclHandle = int8_t;

// The communicator context of group `index` (CANN: the GM area the host's HCCL set up for the op). Here the
// calling core itself: the simulator runs every task over the launching device's communicator.
template <uint32_t index>
inline GM_ADDR GetHcclContext() {
  static_assert(index == 0, "the simulated Hccl client has one communicator (context 0)");
  return reinterpret_cast<GM_ADDR>(const_cast<sk_ascend_sim_core*>(sk_ascend_sim_core_now()));
}

template <HcclServerType serverType = HcclServerType::HCCL_SERVER_TYPE_AICPU>
class Hccl {
 public:
  __aicore__ inline void InitV2(GM_ADDR context, const void* tiling) {
    if (context == nullptr || tiling == nullptr) Trap("Hccl::InitV2: no context or tiling");
    tiling_ = *static_cast<const SkHcclTiling*>(tiling);
    inited_ = true;
    count_ = 0;
  }
  // CANN's older Init(context, initTiling): the same here.
  __aicore__ inline void Init(GM_ADDR context, const void* tiling) { InitV2(context, tiling); }

  template <bool commit = false>
  __aicore__ inline HcclHandle AllReduce(GM_ADDR sendBuf, GM_ADDR recvBuf, uint64_t count, HcclDataType dataType,
                                         HcclReduceOp op, uint8_t repeat = 1) {
    return Prepare(commit, 0, dataType, ReduceOf(op), sendBuf, recvBuf, count, count, repeat);
  }
  // sendCount elements from each rank; recvBuf holds them in rank order (strideCount 0: packed).
  template <bool commit = false>
  __aicore__ inline HcclHandle AllGather(GM_ADDR sendBuf, GM_ADDR recvBuf, uint64_t sendCount, HcclDataType dataType,
                                         uint64_t strideCount, uint8_t repeat = 1) {
    if (strideCount != 0 && strideCount != sendCount) Trap("Hccl::AllGather: only packed output (strideCount 0)");
    return Prepare(commit, 1, dataType, 0, sendBuf, recvBuf, sendCount, sendCount * GetRankDim(), repeat);
  }
  // recvCount elements to each rank: this rank's slice of the combined sendBuf (rank-dim slices).
  template <bool commit = false>
  __aicore__ inline HcclHandle ReduceScatter(GM_ADDR sendBuf, GM_ADDR recvBuf, uint64_t recvCount,
                                             HcclDataType dataType, HcclReduceOp op, uint64_t strideCount,
                                             uint8_t repeat = 1) {
    if (strideCount != 0 && strideCount != recvCount) Trap("Hccl::ReduceScatter: only packed input (strideCount 0)");
    return Prepare(commit, 2, dataType, ReduceOf(op), sendBuf, recvBuf, recvCount * GetRankDim(), recvCount, repeat);
  }
  // dataCount elements to and from each rank.
  template <bool commit = false>
  __aicore__ inline HcclHandle AlltoAll(GM_ADDR sendBuf, GM_ADDR recvBuf, uint64_t dataCount, HcclDataType dataType,
                                        uint64_t strideCount = 0, uint8_t repeat = 1) {
    if (strideCount != 0 && strideCount != dataCount) Trap("Hccl::AlltoAll: only packed buffers (strideCount 0)");
    const uint64_t n = dataCount * GetRankDim();
    return Prepare(commit, 3, dataType, 0, sendBuf, recvBuf, n, n, repeat);
  }

  __aicore__ inline void Commit(HcclHandle handle) { At(handle, "Commit").committed = true; }

  // Blocks until the task is done: here it runs now (a failure fails the launch and never returns).
  __aicore__ inline int32_t Wait(HcclHandle handle) {
    Task& t = At(handle, "Wait");
    if (!t.committed) Trap("Hccl::Wait on a task that was never committed (Commit, or a Prepare call with commit=true)");
    Run(t);
    return 0;
  }

  // No more tasks: runs what was committed and never waited for (CANN's server finishes them before it exits).
  __aicore__ inline void Finalize() {
    for (uint32_t i = 0; i < count_; ++i)
      if (tasks_[i].committed && !tasks_[i].done) Run(tasks_[i]);
    inited_ = false;
  }

  __aicore__ inline uint32_t GetRankDim() const { return static_cast<uint32_t>(__builtin_popcountll(tiling_.ranks)); }

 private:
  struct Task {
    sk_ascend_sim_hccl_task args;
    bool committed;
    bool done;
  };
  static constexpr uint32_t kMaxTasks = 16;

  [[noreturn]] static void Trap(const char* what) {
    const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
    c->ops->trap(c, what);
    abort();  // trap unwinds the core; never reached
  }

  static uint64_t ReduceOf(HcclReduceOp op) {
    switch (op) {
      case HCCL_REDUCE_SUM: return 1;
      case HCCL_REDUCE_MAX: return 2;
      default: Trap("Hccl: only HCCL_REDUCE_SUM and HCCL_REDUCE_MAX are simulated");
    }
  }

  // The op list's dtype index of an HCCL data type.
  static uint64_t DTypeOf(HcclDataType t) {
    switch (t) {
      case HCCL_DATA_TYPE_FP32: return 0;
      case HCCL_DATA_TYPE_FP64: return 1;
      case HCCL_DATA_TYPE_FP16: return 2;
      case HCCL_DATA_TYPE_BFP16: return 3;
      case HCCL_DATA_TYPE_INT8: return 4;
      case HCCL_DATA_TYPE_INT16: return 5;
      case HCCL_DATA_TYPE_INT32: return 6;
      case HCCL_DATA_TYPE_INT64: return 7;
      case HCCL_DATA_TYPE_UINT8: return 8;
      case HCCL_DATA_TYPE_UINT16: return 9;
      case HCCL_DATA_TYPE_UINT32: return 10;
      case HCCL_DATA_TYPE_UINT64: return 11;
      default: Trap("Hccl: an HcclDataType the simulator does not know");
    }
  }

  HcclHandle Prepare(bool commit, uint64_t kind, HcclDataType dataType, uint64_t reduce, GM_ADDR send, GM_ADDR recv,
                     uint64_t nIn, uint64_t nOut, uint8_t repeat) {
    if (!inited_) Trap("Hccl: a Prepare call before InitV2");
    if (repeat != 1) Trap("Hccl: repeat > 1 is not simulated");
    const uint64_t desc = kind | reduce << 8 | DTypeOf(dataType) << 16;
    if (desc != tiling_.desc) Trap("Hccl: the Prepare call's kind, data type or reduction is not its tiling's");
    if (count_ == kMaxTasks) Trap("Hccl: more than 16 tasks before Finalize");
    Task& t = tasks_[count_];
    t.args = sk_ascend_sim_hccl_task{send, recv, static_cast<int64_t>(nIn), static_cast<int64_t>(nOut), desc,
                                     tiling_.ranks, tiling_.tag};
    t.committed = commit;
    t.done = false;
    return static_cast<HcclHandle>(count_++);
  }

  Task& At(HcclHandle handle, const char* call) {
    if (handle < 0 || static_cast<uint32_t>(handle) >= count_) {
      const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
      char msg[96];
      snprintf(msg, sizeof msg, "Hccl::%s: handle %d was not returned by a Prepare call", call, int(handle));
      c->ops->trap(c, msg);
    }
    return tasks_[handle];
  }

  void Run(Task& t) {
    const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
    c->ops->hccl_run(c, &t.args);  // a failure unwinds this core with the launch's error
    t.done = true;
  }

  SkHcclTiling tiling_ = {};
  Task tasks_[kMaxTasks] = {};
  uint32_t count_ = 0;
  bool inited_ = false;
};

}  // namespace AscendC

#pragma GCC visibility pop

#endif
