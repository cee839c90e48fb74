// The sync cost model: among the correct syncs of an op boundary, the cheapest by the machine's costs.
//
// Runs after selectSync and reduceEdges, before placeBarriers, on fused steps with sync-model=on, per-edge
// syncs (early-start 1 or 2, no debug-sync-all) and known costs (MachineModel::syncCosts). The correctness
// rules chose each edge's kind; this pass only replaces the flag and counter waits of a consumer by the
// one kind that satisfies all of them at once, a barrier of its queue, where that is cheaper.
//
// Guarantees:
// - Only stronger syncs: an edge the pass changes becomes a Barrier edge of the same queue (placeBarriers
//   then puts the barrier before its consumer, which orders it after every block of every earlier op of
//   the queue: more than any flag or counter wait asked for). Local and Event edges are never touched.
// - An edge whose producer comes before the queue's latest barrier ahead of its consumer is dropped: that
//   barrier already ordered the whole producer before the consumer's every block (each core of a queue
//   runs its ops in program order, and nobody passes the barrier before every core reached it).
// - A consumer gets a barrier only when (1) it did not declare early start (its waits overlap its own
//   kernel's prologue; a barrier before the call would lose that), (2) every op of its queue since the
//   previous barrier is one of its ancestors (the barrier then waits for nothing its edges did not
//   already wait for, transitively: it cannot serialize independent work), and (3) the barrier costs no
//   more than its edges: barrierNs <= the most any one core of the queue spends in the edges' waits,
//   flagNs per distinct producer block on another core that the core's blocks wait for, and per counter
//   edge counterNs * (P + C) / 2n, P and C the cores of the n-core queue that run the producer's and the
//   consumer's blocks (each at least 2). barrierNs and counterNs are both what all n cores pay on one
//   line (the calibration's all-to-all chains), and that grows with n; a barrier always has all n on its
//   line, a counter only the producer's arrivals and the consumer's waiters. Without the share, at 16
//   cores every counter looked as dear as a 16-core barrier and the decode stacks lost 9-33% to barriers
//   (sk_bench_suite on a 16-core Xeon, 2026-11-28); on 2 cores the share is always 1.
// - Each changed edge keeps the kind the rules chose in Edge::modelFrom; the counts (boundaries made
//   barriers, edges replaced, edges dropped, boundaries kept and why) go to PlanReport::syncModel.
// - sync-model=off, early-start=0, debug-sync-all=1 or unknown costs: the step is left exactly as the
//   correctness rules made it.
#include <algorithm>
#include <set>

#include "plan/PlanInternal.h"

namespace sk::plan {

namespace {

// Per op, the ops it depends on through any kept edge, transitively (ops are in topological order).
std::vector<OpBits> ancestors(const SuperKernelPlan& sk) {
  std::vector<OpBits> anc(sk.ops.size(), OpBits(sk.ops.size()));
  std::vector<std::vector<uint32_t>> into(sk.ops.size());
  for (const Edge& e : sk.edges) into[e.consumer].push_back(e.producer);
  for (size_t c = 0; c < sk.ops.size(); ++c)
    for (uint32_t p : into[c]) {
      anc[c].set(p);
      anc[c].merge(anc[p]);
    }
  return anc;
}

// The share of the measured counterNs that one counter edge costs. counterNs is the all-to-all counter of
// the whole queue (calibration and defaults: every one of the queue's n cores arrives on the line and every
// one waits on it), and that cost grows with the cores on the line: the boundary benchmark on a 16-core Xeon
// measured 1.14 us at 8 workers and 2.26 us at 16, about 140 ns per core either way. An edge's counter has
// only the producer's cores arriving and only the consumer's cores waiting, so it costs (arriving + waiting)
// / 2n of it. A hand-off between cores involves at least two of them (the calibration's smallest case), so
// neither side counts below 2: on a 2-core queue every counter costs the whole counterNs, as measured.
double counterShare(const Queue& q, uint32_t producerBlocks, uint32_t consumerBlocks) {
  const uint32_t n = std::max<uint32_t>(q.numCores, 1);
  const uint32_t least = std::min<uint32_t>(2, n);
  auto side = [&](uint32_t blocks) { return std::max(std::min(blocks, n), least); };
  return static_cast<double>(side(producerBlocks) + side(consumerBlocks)) / (2.0 * n);
}

// The most one core of queue q spends waiting on `in` (consumer c's flag and counter edges), in ns.
double edgeWaitCost(const SuperKernelPlan& sk, const Queue& q, uint32_t c, const std::vector<Edge*>& in,
                    const SyncCosts& costs) {
  const PlannedOp& op = sk.ops[c];
  double worst = 0;
  for (uint32_t core = 0; core < q.numCores && core < op.blockDim; ++core) {
    double cost = 0;
    for (const Edge* e : in) {
      if (e->sync == SyncKind::Counter) {
        cost += costs.counterNs * counterShare(q, sk.ops[e->producer].blockDim, op.blockDim);
        continue;
      }
      std::set<uint32_t> remote;  // producer blocks on another core that this core's blocks wait for
      for (uint32_t b = core; b < op.blockDim; b += q.numCores) {
        const auto& [lo, hi] = e->flagRanges[b];
        for (uint32_t p = lo; p <= hi && lo <= hi; ++p)
          if (coreOf(q, p) != coreOf(q, b)) remote.insert(p);
      }
      cost += costs.flagNs * static_cast<double>(remote.size());
    }
    worst = std::max(worst, cost);
  }
  return worst;
}

}  // namespace

void costSync(SuperKernelPlan& sk, const MachineModel& machine, SyncModelReport& report) {
  const SyncCosts& costs = machine.syncCosts;
  if (!sk.fused || !sk.options.syncModel || sk.options.earlyStart == 0 || sk.options.debugSyncAll ||
      !costs.known() || sk.ops.size() > kMaxBitsetOps)
    return;
  report.on = true;
  const std::vector<OpBits> anc = ancestors(sk);
  std::vector<std::vector<size_t>> into(sk.ops.size());
  for (size_t i = 0; i < sk.edges.size(); ++i) into[sk.edges[i].consumer].push_back(i);
  std::vector<bool> drop(sk.edges.size(), false);

  for (const Queue& q : sk.queues) {
    std::vector<size_t> pos(sk.ops.size(), 0);
    for (size_t i = 0; i < q.ops.size(); ++i) pos[q.ops[i]] = i;
    size_t since = 0;  // position of the queue's latest barrier op (0: none yet, nothing before it)
    for (size_t i = 0; i < q.ops.size(); ++i) {
      const uint32_t c = q.ops[i];
      std::vector<Edge*> in;
      for (size_t ei : into[c]) {
        Edge& e = sk.edges[ei];
        if (e.sync != SyncKind::Flag && e.sync != SyncKind::Counter) continue;
        if (since > 0 && pos[e.producer] < since) {
          drop[ei] = true;
          ++report.dropped;
        } else {
          in.push_back(&e);
        }
      }
      if (in.empty()) continue;
      if (sk.ops[c].earlyStart) {
        ++report.keptEarlyStart;
        continue;
      }
      bool tight = true;
      for (size_t j = since; j < i && tight; ++j) tight = anc[c].test(q.ops[j]);
      if (!tight) {
        ++report.keptIndependent;
        continue;
      }
      if (costs.barrierNs > edgeWaitCost(sk, q, c, in, costs)) {
        ++report.keptCheaper;
        continue;
      }
      for (Edge* e : in) {
        e->modelFrom = e->sync;
        e->sync = SyncKind::Barrier;
        e->flagRanges.clear();
        ++report.toBarrier;
      }
      ++report.boundaries;
      since = i;
    }
  }
  std::vector<Edge> kept;
  kept.reserve(sk.edges.size());
  for (size_t i = 0; i < sk.edges.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(sk.edges[i]));
  sk.edges = std::move(kept);
}

}  // namespace sk::plan
