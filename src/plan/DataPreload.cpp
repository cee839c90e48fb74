// Data preload (preload-data): which inputs a core prefetches, which slice, and how far ahead.
//
// Guarantees, for a fused step (an unfused step and preload-data=none prefetch nothing; auto is the machine's
// MachineModel::defaultPreloadData):
//  - only inputs no op of the step writes are prefetched (buffer arguments read by the op, not runtime
//    scalars, whose buffer no op of the step writes through any argument): their contents cannot change
//    during the launch, so a prefetch issued at any point of it, before any wait, reads final data;
//  - core c of a queue prefetches for an op of that queue only when c < the op's block count, and then the
//    start of block c's slice by the "block" partition rule (plan/Ranges.cpp), also for an input declared
//    "all" (a row-split kernel such as the gemv builtins reads exactly that slice of its weights; a block that
//    reads the whole input reads it too): bytes [first + c * per, + min(per, preloadDataSliceBytes)) with per
//    the block's element count, so a prefetch never leaves the block's slice nor its buffer;
//  - first-block: an op that waits (a barrier before it, or a flag, counter or event edge) prefetches its own
//    slices when it starts, before the wait;
//  - lookahead: as first-block for an op whose slices no earlier op prefetched, and when a core starts op i
//    it also prefetches the slices of the later ops of its queue that no earlier op prefetched: op i + 1's
//    always, then each following op's while the slices of ops i + 1 .. j add up to no more than
//    preloadDataLookaheadBytes. Each op's slices are prefetched once, at the earliest op whose window holds
//    them, so the loads of op j overlap the waits and the work of the ops between (what a Graph + PDL run
//    gets by loading the next kernel's weights before griddepcontrol.wait, docs/PERFORMANCE.md 8b).
//
// And for the Graph + PDL variant of an unfused step (markGraphPdlSteps; the baseline of `sk-compile --baselines
// graph-pdl`), whatever preload-data says: its op prefetches the slices (as above) of the inputs that no op of
// the whole plan writes, before griddepcontrol.wait. Inputs an earlier launch writes are never prefetched: the
// kernel may start while that launch still runs.
//
// Why a function the emitters call (scheduleDataPreload with their target's MachineModel) and not a field the
// planner fills: the schedule follows from the step (ops, edges, queues, options) and the machine's budget alone,
// so a step built by hand (the codegen goldens) gets the same prefetches as a planned one, and no copy stored in
// the plan can go stale against the ops it describes.
#include "superkernel/plan/DataPreload.h"

#include <algorithm>

#include "plan/PlanInternal.h"

namespace sk {

PreloadData effectivePreloadData(PreloadData option, const MachineModel& m) {
  return option == PreloadData::Auto ? m.defaultPreloadData : option;
}

std::vector<std::vector<DataPreload>> scheduleDataPreload(const SuperKernelPlan& sk, const MachineModel& m) {
  const size_t n = sk.ops.size();
  std::vector<std::vector<DataPreload>> out(n);
  const bool pdlWeights = !sk.fused && sk.graphPdl;
  const PreloadData mode = pdlWeights ? PreloadData::FirstBlock : effectivePreloadData(sk.options.preloadData, m);
  if ((!sk.fused && !pdlWeights) || mode == PreloadData::None || mode == PreloadData::Auto) return out;

  // Buffers some op of this step writes (for the PDL variant: that any op of the plan may write): a read of
  // any other buffer (weights) cannot depend on a wait.
  std::vector<bool> written(sk.buffers.size(), false);
  for (size_t b = 0; b < sk.buffers.size(); ++b) written[b] = pdlWeights && !sk.buffers[b].readOnlyInPlan;
  for (const PlannedOp& op : sk.ops)
    for (const BoundArg& a : op.args)
      if (a.kind == ParamKind::Buffer && !a.runtime && a.access != Access::Read && a.buffer >= 0)
        written[static_cast<size_t>(a.buffer)] = true;

  // Ops that wait before they run: what the first-block rule prefetches for (the PDL variant's op always
  // waits, at griddepcontrol.wait).
  std::vector<bool> waits(n, pdlWeights);
  for (size_t i = 0; i < n; ++i) waits[i] = waits[i] || sk.ops[i].barrierBefore;
  for (const Edge& e : sk.edges)
    if (e.sync == SyncKind::Flag || e.sync == SyncKind::Counter || e.sync == SyncKind::Event) waits[e.consumer] = true;

  // Each op's slices, and their bytes per core.
  std::vector<std::vector<DataPreload>> slices(n);
  std::vector<uint64_t> bytes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const PlannedOp& op = sk.ops[i];
    for (size_t ai = 0; ai < op.args.size(); ++ai) {
      const BoundArg& a = op.args[ai];
      if (a.kind != ParamKind::Buffer || a.runtime || a.access != Access::Read || a.buffer < 0 ||
          written[static_cast<size_t>(a.buffer)] || a.count == 0)
        continue;
      const uint64_t esize = dtypeSize(a.dtype);
      BoundArg split = a;
      split.partition = Partition::Block;
      const uint64_t first = blockFirstElement(split, op.blockDim, 0);
      const uint64_t stride = op.blockDim > 1 ? blockFirstElement(split, op.blockDim, 1) - first : 0;
      const uint64_t per = op.blockDim > 1 ? a.count / op.blockDim : a.count;
      const uint64_t take = std::min<uint64_t>(per * esize, m.preloadDataSliceBytes);
      if (take == 0) continue;
      DataPreload d;
      d.forOp = static_cast<uint32_t>(i);
      d.arg = static_cast<uint32_t>(ai);
      d.buffer = a.buffer;
      d.offsetBytes = first * esize;
      d.strideBytes = stride * esize;
      d.bytes = take;
      d.blocks = op.blockDim;
      slices[i].push_back(d);
      bytes[i] += take;
    }
  }
  auto issue = [&](size_t at, size_t of) { out[at].insert(out[at].end(), slices[of].begin(), slices[of].end()); };

  for (const Queue& q : sk.queues) {
    if (mode == PreloadData::FirstBlock) {
      for (uint32_t i : q.ops)
        if (waits[i]) issue(i, i);
      continue;
    }
    // lookahead
    std::vector<bool> issued(q.ops.size(), false);
    for (size_t k = 0; k < q.ops.size(); ++k) {
      const uint32_t i = q.ops[k];
      if (!issued[k] && waits[i]) issue(i, i);
      issued[k] = true;
      uint64_t ahead = 0;
      for (size_t kk = k + 1; kk < q.ops.size(); ++kk) {
        ahead += bytes[q.ops[kk]];
        if (kk > k + 1 && ahead > m.preloadDataLookaheadBytes) break;
        if (!issued[kk]) issue(i, q.ops[kk]);
        issued[kk] = true;
      }
    }
  }
  return out;
}

void markGraphPdlSteps(FusionPlan& plan) {
  // A list buffer any op writes, through any step (a runtime argument counts: it may change between runs).
  std::vector<bool> written;
  for (const SuperKernelPlan& step : plan.steps)
    for (const PlannedOp& op : step.ops)
      for (const BoundArg& a : op.args) {
        if (a.kind != ParamKind::Buffer || a.buffer < 0 || (a.access == Access::Read && !a.runtime)) continue;
        const uint32_t list = step.buffers[static_cast<size_t>(a.buffer)].listIndex;
        if (written.size() <= list) written.resize(list + 1, false);
        written[list] = true;
      }
  for (SuperKernelPlan& step : plan.steps) {
    step.graphPdl = !step.fused;
    for (PlanBuffer& b : step.buffers)
      b.readOnlyInPlan = step.graphPdl && (b.listIndex >= written.size() || !written[b.listIndex]);
  }
}

}  // namespace sk
