#include "superkernel/plan/MachineModel.h"

#include <fmt/format.h>

#include <algorithm>

namespace sk {

MachineModel MachineModel::singlePool(std::string target, uint32_t cores, std::string owner, std::string noun) {
  MachineModel m;
  m.target = std::move(target);
  m.pools = {CorePool{CoreType::Vector, cores}};
  m.coreOwner = std::move(owner);
  m.coreNoun = std::move(noun);
  return m;
}

std::string MachineModel::describeCores(uint32_t n) const { return fmt::format("the {}'s {} {}", coreOwner, n, coreNoun); }

MachineModel MachineModel::withDebugCoreNum(uint32_t n) const {
  MachineModel m = *this;
  if (pools.empty() || n == 0) return m;
  const uint64_t first = pools[0].count;
  for (CorePool& p : m.pools) p.count = std::max<uint32_t>(1, static_cast<uint32_t>(p.count * uint64_t{n} / first));
  return m;
}

uint32_t MachineModel::deviceCores() const { return pools.size() == 1 ? totalCores() : pools.at(0).count; }

uint32_t MachineModel::unitsHeld(uint32_t pool, uint32_t blocks) const {
  if (pool >= pools.size() || pools[pool].count == 0) return deviceCores();
  const uint64_t count = pools[pool].count;
  const uint64_t cores = std::min<uint64_t>(blocks, count);
  return static_cast<uint32_t>((cores * deviceCores() + count - 1) / count);
}

uint32_t MachineModel::totalCores() const {
  uint32_t n = 0;
  for (const CorePool& p : pools) n += p.count;
  return n;
}

uint32_t MachineModel::poolBase(uint32_t pool) const {
  uint32_t base = 0;
  for (uint32_t p = 0; p < pool && p < pools.size(); ++p) base += pools[p].count;
  return base;
}

Expected<uint32_t> MachineModel::poolFor(CoreType type) const {
  if (pools.size() == 1) return 0u;
  for (uint32_t p = 0; p < pools.size(); ++p)
    if (pools[p].kind == type) return p;
  std::string kinds;
  for (const CorePool& p : pools) kinds += (kinds.empty() ? "" : ", ") + std::string(coreTypeName(p.kind));
  return badInput(fmt::format("target {} has no core pool for core_type {} (its pools: {})", target,
                              coreTypeName(type), kinds));
}

Status MachineModel::check() const {
  if (pools.empty()) return badInput(fmt::format("target {}: the machine model has no core pool", target));
  for (const CorePool& p : pools)
    if (p.count < 1) return badInput(fmt::format("target {}: a {} core pool has no cores", target, coreTypeName(p.kind)));
  return Status::success();
}

}  // namespace sk
