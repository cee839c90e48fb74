// CANN's collective library (libhccl) by dlopen, for target ascend's collectives (docs/COLLECTIVES.md, "On an
// NPU"): like libascendcl (AclRuntime.h), nothing of CANN is needed at build time, and a device without it
// says what is missing only when a plan with a collective runs.
//
// Bound calls, with the prototypes CANN states:
// - HcclGetRootInfo, HcclCommInitRootInfo, HcclCommDestroy: hccl/hccl.h, documented in
//   CANN's HCCL API reference ("HcclCommInitRootInfo", hiascend.com hcclapiref/hcclcpp_07_0005 and _0006;
//   cann/hcomm docs/zh/api_ref/comm_mgr_c/HcclCommInitRootInfo.md).
// - HcclAllocComResource(HcclComm, u32 streamMode, void** commContext): hccl/hccl_ex.h (CANN's hcomm
//   sources). It returns the device address of the communicator's context, the "message area" the AI Core's
//   AscendC::Hccl client takes (Init(context), atlasascendc_api_07_0871). It is exported but absent from the
//   public API reference found: what streamMode means is not documented; 0 is passed (an assumption).
// Unverified: no CANN toolkit or Ascend device is present where this project is built and tested.
#pragma once

#include <cstdint>
#include <string>

#include "superkernel/support/Error.h"

namespace sk::ascend {

using HcclStatus = int;  // HcclResult
constexpr HcclStatus kHcclSuccess = 0;
/// sizeof(HcclRootInfo): HCCL_ROOT_INFO_BYTES in hccl/hccl_types.h.
constexpr size_t kHcclRootInfoBytes = 4108;

struct HcclApi {
  std::string path;  // the library loaded
  HcclStatus (*getRootInfo)(void* rootInfo) = nullptr;
  HcclStatus (*commInitRootInfo)(uint32_t nRanks, const void* rootInfo, uint32_t rank, void** comm) = nullptr;
  HcclStatus (*commDestroy)(void* comm) = nullptr;
  HcclStatus (*allocComResource)(void* comm, uint32_t streamMode, void** commContext) = nullptr;
  const char* (*getErrorString)(HcclStatus) = nullptr;  // optional: HcclGetErrorString, when exported

  /// "<call> failed: HCCL error <err>[: <HcclGetErrorString>]".
  std::string describe(const char* call, HcclStatus err) const;
};

/// libhccl, loaded once: $SK_HCCL (a path), else libhccl.so through the loader's path, else
/// $ASCEND_HOME_PATH/lib64/libhccl.so. A Runtime error naming each place tried and what to set when none
/// loads, or the calls a loaded one lacks.
Expected<const HcclApi*> hcclRuntime();

}  // namespace sk::ascend
