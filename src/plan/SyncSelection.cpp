// Synchronization per edge (DESIGN section 5) and barrier placement.
//
// Guarantees, per edge (cheapest correct kind):
// - Event: producer and consumer in different queues (stream-fusion=1); the
//   consumer waits for all producer blocks (a counter on the producer).
//   Also with early-start=0: a barrier only spans one queue's cores.
// - Barrier: early-start=0, same queue: a sync_all before the consumer.
// - Local: same queue (so one core pool) and, for every consumer block b,
//   every producer block it needs runs on b's core (coreOf, plan/Plan.h;
//   always true on a one-core queue) — earlier in program order, so nothing
//   to emit.
// - Counter: every consumer block needs every producer block.
// - Flag: otherwise; flagRanges[b] = [lo, hi], the hull of the producer
//   blocks consumer block b needs (lo > hi: none). Same-core producer blocks
//   inside the hull are kept (their flag is set by the time b runs, so the
//   wait costs one load) so that a range is always one interval.
// - Flag slots past the machine's budget (MachineModel::maxFlagSlots; one
//   slot per block of a producer with a flag edge): the edges of the
//   producers that do not fit, in op order, become Counter edges (correct,
//   coarser), reported in the plan's warnings.
// placeBarriers: barrierBefore on the consumer of every Barrier edge; with
// debug-sync-all on every op after the first of its queue (edges keep their
// kinds; the barrier satisfies them).
#include "plan/PlanInternal.h"

namespace sk::plan {

void selectSync(const SuperKernelPlan& sk, std::vector<DepEdge>& edges, const MachineModel& machine,
                std::vector<std::string>& warnings) {
  for (DepEdge& d : edges) {
    Edge& e = d.edge;
    const PlannedOp& p = sk.ops[e.producer];
    const PlannedOp& c = sk.ops[e.consumer];
    e.flagRanges.clear();
    if (e.sync == SyncKind::Event || p.queue != c.queue) {
      e.sync = SyncKind::Event;
      continue;
    }
    if (sk.options.earlyStart == 0) {
      e.sync = SyncKind::Barrier;
      continue;
    }
    const Queue& q = sk.queues[c.queue];
    bool local = true, all = true;
    for (uint32_t b = 0; b < c.blockDim; ++b) {
      const BlockInterval& k = d.need[b];
      // Two or more consecutive producer blocks span two cores unless the queue has one.
      if (!k.empty() && q.numCores > 1 && !(k.lo == k.hi && coreOf(q, k.lo) == coreOf(q, b))) local = false;
      if (k.empty() || k.lo != 0 || k.hi != p.blockDim - 1) all = false;
    }
    if (local) e.sync = SyncKind::Local;
    else if (all) e.sync = SyncKind::Counter;
    else {
      e.sync = SyncKind::Flag;
      for (const auto& k : d.need) e.flagRanges.emplace_back(k.lo, k.hi);
    }
  }
  if (machine.maxFlagSlots == 0) return;
  std::vector<bool> flagged(sk.ops.size(), false);
  for (const DepEdge& d : edges)
    if (d.edge.sync == SyncKind::Flag) flagged[d.edge.producer] = true;
  std::vector<bool> demote(sk.ops.size(), false);
  uint64_t used = 0;
  uint32_t demoted = 0;
  for (uint32_t p = 0; p < sk.ops.size(); ++p) {
    if (!flagged[p]) continue;
    if (used + sk.ops[p].blockDim <= machine.maxFlagSlots) {
      used += sk.ops[p].blockDim;
    } else {
      demote[p] = true;
    }
  }
  for (DepEdge& d : edges) {
    if (d.edge.sync != SyncKind::Flag || !demote[d.edge.producer]) continue;
    d.edge.sync = SyncKind::Counter;
    d.edge.flagRanges.clear();
    ++demoted;
  }
  if (demoted > 0)
    warnings.push_back(sk.name + ": " + std::to_string(demoted) + " flag edge(s) use counters instead: target " +
                       machine.target + " has " + std::to_string(machine.maxFlagSlots) + " flag slots");
}

void placeBarriers(SuperKernelPlan& sk) {
  for (const Edge& e : sk.edges)
    if (e.sync == SyncKind::Barrier) sk.ops[e.consumer].barrierBefore = true;
  if (sk.options.debugSyncAll && sk.fused)
    for (const Queue& q : sk.queues)
      for (size_t i = 1; i < q.ops.size(); ++i) sk.ops[q.ops[i]].barrierBefore = true;
}

}  // namespace sk::plan
