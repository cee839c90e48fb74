// The CANN device's HCCL communicators over the Session's Communicator (HcclGroups.h).
#include "backends/ascend/HcclGroups.h"

#include <cstring>

#include <fmt/format.h>

#include "backends/ascend/HcclRuntime.h"
#include "superkernel/frontend/OpList.h"
#include "support/CollectiveTag.h"

namespace sk::ascend {

std::string groupRanks(uint64_t mask) {
  std::string s;
  for (uint32_t r = 0; r < 64; ++r)
    if (mask >> r & 1) s += fmt::format("{}{}", s.empty() ? "ranks " : ",", r);
  return s.empty() ? "no ranks" : s;
}

HcclGroups::~HcclGroups() {
  if (groups_.empty()) return;  // never loads libhccl for a device that ran no collective
  auto api = hcclRuntime();
  if (!api) return;
  for (auto& [mask, g] : groups_)
    if (g.comm) (void)(*api)->commDestroy(g.comm);
}

Expected<HcclGroups::Group> HcclGroups::make(uint64_t mask) {
  const std::string what = "the HCCL communicator of " + groupRanks(mask);
  if (!comm_)
    return runtimeError(what + ": this ascend device has no communicator (create the Session with "
                               "SessionOptions::communicator, e.g. sk::mpiCommunicator(), or run sk-compile under "
                               "mpirun)");
  std::vector<uint32_t> members;
  for (uint32_t r = 0; r < 64; ++r)
    if (mask >> r & 1) members.push_back(r);
  const uint32_t rank = comm_->rank();
  uint32_t index = 0;
  while (index < members.size() && members[index] != rank) ++index;
  if (index == members.size()) return runtimeError(fmt::format("{}: rank {} is not in the group", what, rank));
  if (members.back() >= comm_->size())
    return runtimeError(fmt::format("{}: this run has {} rank(s) (start it with mpirun -np {})", what, comm_->size(),
                                    members.back() + 1));
  SK_ASSIGN_OR_RETURN(const HcclApi* api, hcclRuntime());

  // The first member's root info to every member: an all-gather of i32 words, the first member's part kept.
  static_assert(kHcclRootInfoBytes % 4 == 0);
  constexpr int64_t kWords = kHcclRootInfoBytes / 4;
  std::vector<int32_t> mine(kWords, 0), all(static_cast<size_t>(kWords) * members.size(), 0);
  if (index == 0)
    if (HcclStatus e = api->getRootInfo(mine.data()); e != kHcclSuccess)
      return runtimeError(what + ": " + api->describe("HcclGetRootInfo", e));
  const std::string name = "sk.hccl.root_info." + groupRanks(mask);
  const uint64_t desc = uint64_t(CollectiveKind::AllGather) | uint64_t(DType::I32) << 16;
  const sk_collective_args args{mine.data(), all.data(), kWords, kWords * static_cast<int64_t>(members.size()), desc,
                                mask, collectiveTag(name, 0)};
  SK_RETURN_IF_ERROR(comm_->run(args, name, waitMs_, [] { return false; }));

  Group g;
  if (HcclStatus e = api->commInitRootInfo(static_cast<uint32_t>(members.size()), all.data(), index, &g.comm);
      e != kHcclSuccess)
    return runtimeError(what + ": " + api->describe(fmt::format("HcclCommInitRootInfo({} ranks, rank {})",
                                                                members.size(), index).c_str(), e));
  if (HcclStatus e = api->allocComResource(g.comm, 0, &g.context); e != kHcclSuccess || !g.context) {
    (void)api->commDestroy(g.comm);
    return runtimeError(what + ": " + (e != kHcclSuccess ? api->describe("HcclAllocComResource", e)
                                                         : std::string("HcclAllocComResource gave no context")));
  }
  return g;
}

Expected<std::vector<uint64_t>> HcclGroups::table(const std::vector<uint64_t>& masks) {
  std::lock_guard lock(mu_);
  std::vector<uint64_t> t;
  for (uint64_t mask : masks) {
    auto it = groups_.find(mask);
    if (it == groups_.end()) {
      SK_ASSIGN_OR_RETURN(Group g, make(mask));
      it = groups_.emplace(mask, g).first;
    }
    t.push_back(mask);
    t.push_back(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(it->second.context)));
  }
  t.push_back(0);
  t.push_back(0);
  return t;
}

}  // namespace sk::ascend
