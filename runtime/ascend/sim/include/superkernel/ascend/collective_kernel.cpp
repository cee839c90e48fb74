// The sub-kernel every collective op lowers to on ascend-sim (docs/COLLECTIVES.md, "On ascend-sim";
// src/plan/Collectives.cpp makes its launches: one block, buffers "all", COLL_T the element type; ascend's
// scalars are compile-time, so n_in, n_out, desc, ranks and tag arrive as SK_N_IN, SK_N_OUT, SK_DESC, SK_RANKS
// and SK_TAG). The SuperKernel waits for the producers of `in` before calling it and signals its consumers
// after it, as for any sub-kernel; the other cores run the ops that do not depend on it (early start).
//
// Inside, the one vector core that runs the block is an MC2 kernel's communication part, written with the
// AscendC Hccl client (lib/hccl/hccl.h): InitV2 on the context and tiling, the Prepare call of the op's kind
// with commit, Wait, Finalize. In the simulator, Wait runs the task on this core's thread over the device's
// communicator; a failure (ranks that disagree, a peer that never answers, no communicator) fails the launch
// with the communicator's message naming the op. On an NPU the same calls hand the task to the AI CPU server,
// which runs it with HCCL over the op's group: target ascend builds runtime/ascend/device's twin of this file
// against CANN's own client instead (unverified: no CANN here).
#include "kernel_operator.h"
#include "lib/hccl/hccl.h"

#ifndef SK_ASCEND_SIMULATOR
#error "collectives on ascend run only in the ascend simulator (target ascend-sim) so far: docs/COLLECTIVES.md"
#endif
#if !defined(SK_N_IN) || !defined(SK_N_OUT) || !defined(SK_DESC) || !defined(SK_RANKS) || !defined(SK_TAG)
#error "sk_collective_kernel (ascend): n_in, n_out, desc, ranks and tag are compile-time (-DSK_N_IN=... )"
#endif

namespace {

// HCCL's data type of COLL_T (the element type the planner compiled this object for).
template <typename T>
constexpr AscendC::HcclDataType SkHcclDataType() {
  using namespace AscendC;
  if constexpr (std::is_same_v<T, float>) return HCCL_DATA_TYPE_FP32;
  else if constexpr (std::is_same_v<T, double>) return HCCL_DATA_TYPE_FP64;
  else if constexpr (std::is_same_v<T, int8_t>) return HCCL_DATA_TYPE_INT8;
  else if constexpr (std::is_same_v<T, int16_t>) return HCCL_DATA_TYPE_INT16;
  else if constexpr (std::is_same_v<T, int32_t>) return HCCL_DATA_TYPE_INT32;
  else if constexpr (std::is_same_v<T, int64_t>) return HCCL_DATA_TYPE_INT64;
  else if constexpr (std::is_same_v<T, uint8_t>) return HCCL_DATA_TYPE_UINT8;
  else if constexpr (std::is_same_v<T, uint16_t>) return HCCL_DATA_TYPE_UINT16;
  else if constexpr (std::is_same_v<T, uint32_t>) return HCCL_DATA_TYPE_UINT32;
  else if constexpr (std::is_same_v<T, uint64_t>) return HCCL_DATA_TYPE_UINT64;
  else if constexpr (sizeof(T) == 2) return ((SK_DESC >> 16) & 0xff) == 3 ? HCCL_DATA_TYPE_BFP16 : HCCL_DATA_TYPE_FP16;
  else return HCCL_DATA_TYPE_RESERVED;  // traps in the Prepare call
}

}  // namespace

extern "C" __global__ __aicore__ void sk_collective_kernel(GM_ADDR in, GM_ADDR out) {
  // The host's Mc2 tiling on a device; here the planner's identity of the collective (lib/hccl/hccl.h).
  const SkHcclTiling tiling = {static_cast<uint64_t>(SK_DESC), static_cast<uint64_t>(SK_RANKS),
                               static_cast<uint64_t>(SK_TAG)};
  constexpr AscendC::HcclDataType dt = SkHcclDataType<COLL_T>();
  constexpr uint64_t kind = static_cast<uint64_t>(SK_DESC) & 0xff;
  constexpr AscendC::HcclReduceOp reduce =
      ((static_cast<uint64_t>(SK_DESC) >> 8) & 0xff) == 2 ? AscendC::HCCL_REDUCE_MAX : AscendC::HCCL_REDUCE_SUM;
  AscendC::Hccl hccl;
  hccl.InitV2(AscendC::GetHcclContext<0>(), &tiling);
  const uint64_t ranks = hccl.GetRankDim();
  AscendC::HcclHandle h = -1;
  if constexpr (kind == 0) {
    h = hccl.AllReduce<true>(in, out, SK_N_IN, dt, reduce);
  } else if constexpr (kind == 1) {
    h = hccl.AllGather<true>(in, out, SK_N_IN, dt, 0);
  } else if constexpr (kind == 2) {
    h = hccl.ReduceScatter<true>(in, out, SK_N_OUT, dt, reduce, 0);
  } else {
    h = hccl.AlltoAll<true>(in, out, ranks ? SK_N_IN / ranks : 0, dt, 0);
  }
  hccl.Wait(h);
  hccl.Finalize();
}
