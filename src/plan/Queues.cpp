// Core and queue assignment on the machine model's core pools.
//
// Guarantees:
// - Every queue belongs to one pool: the pool that runs its ops' core type
//   (MachineModel::poolFor; on a single-pool machine, the only pool).
// - Fused SuperKernel: numCores = coresFor() (debug-core-num if set: its
//   machine, MachineModel::withDebugCoreNum; else every core of the machine). Pools are laid out in order, each owning
//   [poolBase, poolBase + count) (on one pool: all numCores cores). On a machine that runs one block per core
//   (MachineModel::oneBlockPerCore) with several pools, only the cores the launch needs (launchShape): the
//   plan's cores are the launch's.
//   stream-fusion=0: one queue per pool used (stream of its first op), ops in
//   recorded order. stream-fusion=1: one queue per (pool, stream) present,
//   ordered by pool then stream id, a pool's cores split evenly among its
//   queues (the first count % k get one more), each >= 1 core (segment
//   formation guarantees k <= cores). On a machine that runs one block per
//   core, still one queue per pool: a block's core is its block index in the
//   pool (ascend: GetBlockIdx), so two streams of a pool cannot have cores of
//   their own; the pool's ops run in recorded order on its cores, and the
//   queue's cores are the ones the launch runs its blocks on.
// - Unfused step: one queue, numCores = min(pool cores, blockDim) — the
//   executor's plain launch puts block b on worker b % numWorkers, which is
//   the same core mapping (coreOf, plan/Plan.h).
// - The kernel_sync rule is checked once, by validatePlan.
#include <algorithm>
#include <map>

#include "superkernel/frontend/OpListPaths.h"
#include "plan/PlanInternal.h"

namespace sk::plan {

namespace {
Expected<uint32_t> poolOf(const PlanContext& ctx, const PlannedOp& op) {
  auto p = ctx.config.machine.poolFor(ctx.plan.variants.at(op.variant).decl.coreType);
  if (!p) return oplist::pathError(ctx.list.origin, oplist::opPath(op.opIndex), p.error().message());
  return p;
}

// MachineModel::oneBlockPerCore with several pools: the SuperKernel launches as many cores as its ops' blocks
// need, not the whole machine. A launch's size counts the first pool's cores and the others follow in their
// ratio, so it is the smallest withDebugCoreNum(n) that holds every op's blocks in its pool (one queue per
// pool, whatever stream-fusion says). Pools no op uses get no cores, and a SuperKernel of one pool gets as
// many as it needs. The plan's cores are then the launch's (ascend: block dim n, or the one pool's cores).
Expected<MachineModel> launchShape(const PlanContext& ctx, const SuperKernelPlan& sk, const MachineModel& fm) {
  std::map<uint32_t, uint32_t> need;                 // pool -> cores it needs
  for (const PlannedOp& op : sk.ops) {
    SK_ASSIGN_OR_RETURN(uint32_t pool, poolOf(ctx, op));
    need[pool] = std::max(need[pool], op.blockDim);
  }
  // At most the pool (an op wider than it is coarsened to its cores: Coarsen.cpp).
  for (auto& [pool, cores] : need) cores = std::min(cores, fm.pools[pool].count);
  MachineModel shape = fm;
  if (need.size() > 1) {
    for (uint32_t n = 1; n <= fm.deviceCores(); ++n) {
      shape = fm.withDebugCoreNum(n);
      bool fits = true;
      for (const auto& [pool, cores] : need) fits = fits && cores <= shape.pools[pool].count;
      if (fits) break;
    }
  }
  for (uint32_t p = 0; p < shape.pools.size(); ++p) {
    auto it = need.find(p);
    if (it == need.end()) {
      shape.pools[p].count = 0;
    } else if (need.size() == 1) {
      shape.pools[p].count = it->second;
    }
  }
  return shape;
}

}  // namespace

Status assignQueues(const PlanContext& ctx, SuperKernelPlan& sk) {
  const MachineModel& m = ctx.config.machine;
  const bool onePool = m.pools.size() == 1;
  if (!sk.fused) {
    PlannedOp& op = sk.ops.at(0);
    SK_ASSIGN_OR_RETURN(uint32_t pool, poolOf(ctx, op));
    uint32_t cores = onePool ? m.totalCores() : m.pools[pool].count;
    sk.numCores = std::max<uint32_t>(1, std::min(cores, op.blockDim));
    sk.queues = {Queue{op.stream, 0, sk.numCores, {0}, pool}};
    op.queue = 0;
    return Status::success();
  }
  // debug-core-num: the pools shrink (MachineModel::withDebugCoreNum), still laid out in order.
  MachineModel fm = machineFor(sk.options, ctx.config);
  if (m.oneBlockPerCore && !onePool) {
    SK_ASSIGN_OR_RETURN(fm, launchShape(ctx, sk, fm));
  }
  sk.numCores = onePool ? coresFor(sk.options, ctx.config) : fm.totalCores();
  // (pool, stream) of every op; stream-fusion=0 folds streams into one queue per pool.
  std::vector<std::pair<uint32_t, uint32_t>> keyOf(sk.ops.size());
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> firstStream;  // queue key -> stream of its first op
  for (uint32_t i = 0; i < sk.ops.size(); ++i) {
    SK_ASSIGN_OR_RETURN(uint32_t pool, poolOf(ctx, sk.ops[i]));
    keyOf[i] = {pool, sk.options.streamFusion && !m.oneBlockPerCore ? sk.ops[i].stream : 0u};
    firstStream.emplace(keyOf[i], sk.ops[i].stream);
  }
  std::map<uint32_t, uint32_t> queuesInPool;
  for (const auto& [key, s] : firstStream) ++queuesInPool[key.first];
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> queueOf;
  std::map<uint32_t, uint32_t> nextInPool;  // pool -> queues placed so far
  std::map<uint32_t, uint32_t> nextCore;    // pool -> first free core
  for (const auto& [key, stream] : firstStream) {
    const uint32_t pool = key.first;
    const uint32_t poolCores = onePool ? sk.numCores : fm.pools[pool].count;
    const uint32_t k = queuesInPool[pool];
    if (k > poolCores)
      return internalError("SuperKernel " + sk.name + ": " + std::to_string(k) + " streams on " +
                           std::to_string(poolCores) + " cores (segment formation should have split)");
    const uint32_t qi = nextInPool[pool]++;
    const uint32_t n = poolCores / k + (qi < poolCores % k ? 1 : 0);
    uint32_t& first = nextCore.try_emplace(pool, onePool ? 0u : fm.poolBase(pool)).first->second;
    queueOf[key] = static_cast<uint32_t>(sk.queues.size());
    sk.queues.push_back(Queue{stream, first, n, {}, pool});
    first += n;
  }
  for (uint32_t i = 0; i < sk.ops.size(); ++i) {
    sk.ops[i].queue = queueOf.at(keyOf[i]);
    sk.queues[sk.ops[i].queue].ops.push_back(i);
  }
  return Status::success();
}

}  // namespace sk::plan
