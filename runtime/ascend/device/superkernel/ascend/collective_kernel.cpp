// The sub-kernel every collective op lowers to on target ascend (docs/COLLECTIVES.md, "On an NPU"): the
// device twin of runtime/ascend/sim/include/superkernel/ascend/collective_kernel.cpp, compiled by bisheng
// against CANN's own Ascend C headers (kernel_operator.h, lib/hccl/hccl.h), never the simulator's.
// src/plan/Collectives.cpp makes its launches (one block, buffers "all", COLL_T the element type); n_in, n_out,
// desc, ranks and tag arrive as the compile-time SK_N_IN ... SK_TAG, as on ascend-sim.
//
// The HCCL context. CANN's fused (MC2) operators get theirs from their op framework through
// AscendC::GetHcclContext<0>() (atlasascendc_api_07_1219); a kernel launched directly (aclrtLaunchKernel, as
// the CANN device launches every SuperKernel) has no framework to set it, so the context is a kernel argument,
// as CANN's own direct-launch MC2 kernels take it. The CANN device makes one HCCL communicator per group
// (HcclCommInitRootInfo), gets its context's device address (HcclAllocComResource) and passes the table
// {rank mask, context} ... {0, 0} as the SuperKernel's argument sk_hccl, which the SuperKernel hands this
// sub-kernel after its buffers. Hccl::Init(context) without an init tiling is the client's documented form
// for a kernel with no Mc2 tiling (atlasascendc_api_07_0871, CANN 8.0 / 8.1 / 8.2; CANN 8.5 documents InitV2
// with a host-built Mc2InitTiling, whose builder, AscendC::Mc2CcTilingConfig, is a C++ class of CANN's host
// tiling library that this project cannot call without CANN).
//
// Unverified: no CANN toolkit or Ascend device is present where this project is built and tested; the
// names and parameters are CANN's documented ones (AllReduce / AllGather / ReduceScatter / AlltoAll with
// commit, Wait, Finalize; HcclDataType, HcclReduceOp).
#include "kernel_operator.h"
#include "lib/hccl/hccl.h"

#ifdef SK_ASCEND_SIMULATOR
#error "this is the NPU's collective sub-kernel (CANN's Hccl client); ascend-sim builds runtime/ascend/sim's"
#endif
#if !defined(SK_N_IN) || !defined(SK_N_OUT) || !defined(SK_DESC) || !defined(SK_RANKS) || !defined(SK_TAG)
#error "sk_collective_kernel (ascend): n_in, n_out, desc, ranks and tag are compile-time (-DSK_N_IN=... )"
#endif

// HcclDataType and HcclReduceOp: AscendC's, or HCCL's global ones where a CANN version declares them there.
using namespace AscendC;

namespace {

// HCCL's data type of COLL_T (the element type the planner compiled this object for).
template <typename T>
__aicore__ constexpr HcclDataType SkHcclDataType() {
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
  else return HCCL_DATA_TYPE_RESERVED;
}

// This collective's group's context in the launch's table (the host puts every group of the step there).
__aicore__ inline GM_ADDR SkHcclContextOf(GM_ADDR table) {
  __gm__ uint64_t* t = reinterpret_cast<__gm__ uint64_t*>(table);
  for (uint32_t i = 0; t[2 * i] != 0; ++i)
    if (t[2 * i] == static_cast<uint64_t>(SK_RANKS)) return reinterpret_cast<GM_ADDR>(t[2 * i + 1]);
  return nullptr;
}

}  // namespace

extern "C" __global__ __aicore__ void sk_collective_kernel(GM_ADDR in, GM_ADDR out, GM_ADDR sk_hccl) {
  GM_ADDR context = SkHcclContextOf(sk_hccl);
  // Never null on a table the CANN device built (it holds every group of the step): a launch without this
  // group's context is a host bug, which must stop the launch rather than skip the exchange.
  if (context == nullptr) __builtin_trap();
  constexpr HcclDataType dt = SkHcclDataType<COLL_T>();
  constexpr uint64_t kind = static_cast<uint64_t>(SK_DESC) & 0xff;
  constexpr HcclReduceOp reduce =
      ((static_cast<uint64_t>(SK_DESC) >> 8) & 0xff) == 2 ? HCCL_REDUCE_MAX : HCCL_REDUCE_SUM;
  AscendC::Hccl hccl;
  hccl.Init(context);
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
