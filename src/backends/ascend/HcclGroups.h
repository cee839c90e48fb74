// The CANN device's HCCL communicators, one per collective group of its plans (docs/COLLECTIVES.md, "On an
// NPU"): made the first time a launch needs the group, from the Session's Communicator (MPI), and kept until
// the device goes.
//
// How one is made, as CANN's HCCL API reference describes root-info initialisation (HcclGetRootInfo,
// HcclCommInitRootInfo): the group's first rank calls HcclGetRootInfo, the Communicator hands its bytes to
// every member (an all-gather over the group, of which each member keeps the first rank's part: the
// Communicator has no broadcast, and an all-gather has its checks and wait limit), and every member calls
// HcclCommInitRootInfo(group size, root info, its index in the group). Then HcclAllocComResource gives the
// device address of the communicator's context, which the launch passes the collective sub-kernel
// (AscendC::Hccl::Init(context)). Every member of a group runs the same plan (the planner's collective
// signature), so every member reaches the same launch and makes the same communicator at the same point.
//
// Unverified: no CANN toolkit or Ascend device is present where this project is built and tested.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "superkernel/runtime/Communicator.h"
#include "superkernel/support/Error.h"

namespace sk::ascend {

class HcclGroups {
 public:
  HcclGroups(std::shared_ptr<Communicator> communicator, uint32_t waitMs)
      : comm_(std::move(communicator)), waitMs_(waitMs) {}
  ~HcclGroups();
  HcclGroups(const HcclGroups&) = delete;
  HcclGroups& operator=(const HcclGroups&) = delete;

  /// The launch's table for the collective sub-kernels (launch argument `hccl`): per group of `masks` (rank
  /// masks, the descriptor's order) the pair {mask, context address}, then {0, 0}. Makes each group's
  /// communicator on first use. Runtime error naming the group: no Communicator, this rank not in the group,
  /// the group larger than the run, libhccl missing, an HCCL call failing.
  Expected<std::vector<uint64_t>> table(const std::vector<uint64_t>& masks);

 private:
  struct Group {
    void* comm = nullptr;     // HcclComm
    void* context = nullptr;  // device address (HcclAllocComResource)
  };
  Expected<Group> make(uint64_t mask);

  std::shared_ptr<Communicator> comm_;
  uint32_t waitMs_;
  std::mutex mu_;
  std::map<uint64_t, Group> groups_;
};

/// "ranks 0,1" for a rank mask.
std::string groupRanks(uint64_t mask);

}  // namespace sk::ascend
