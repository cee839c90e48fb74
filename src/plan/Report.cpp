// Plan report: counts (fillReport) and the human-readable text.
//
// Guarantees: PlanReport counts match the plan (opsBefore = launches in the
// op list, launchesAfter = steps, superKernels = fused steps, edges by sync
// kind over all steps, barriers = sync_all points = ops with barrierBefore);
// splits has one line per fused SuperKernel saying where and why it ended.
#include <fmt/format.h>

#include "plan/PlanInternal.h"

namespace sk {

const char* syncKindName(SyncKind k) {
  switch (k) {
    case SyncKind::None: return "none";
    case SyncKind::Local: return "local";
    case SyncKind::Flag: return "flag";
    case SyncKind::Counter: return "counter";
    case SyncKind::Barrier: return "barrier";
    case SyncKind::Event: return "event";
  }
  return "none";
}

const char* depKindName(DepKind k) {
  switch (k) {
    case DepKind::RAW: return "RAW";
    case DepKind::WAR: return "WAR";
    case DepKind::WAW: return "WAW";
  }
  return "RAW";
}

namespace plan {

void fillReport(FusionPlan& plan) {
  PlanReport& r = plan.report;
  r.launchesAfter = static_cast<uint32_t>(plan.steps.size());
  r.superKernels = 0;
  r.sideLaunches = 0;
  r.syncs = {};
  r.splits.clear();
  for (const auto& sk : plan.steps) {
    if (sk.besideStep >= 0) ++r.sideLaunches;
    if (sk.fused) {
      ++r.superKernels;
      r.splits.push_back(sk.name + " ended at " + sk.endReason);
    }
    for (const auto& e : sk.edges) ++r.syncs.edges[e.sync];
    for (const auto& op : sk.ops)
      if (op.barrierBefore) ++r.syncs.barriers;
  }
}

}  // namespace plan

std::string describeSyncCosts(const SyncCosts& c) {
  if (!c.known()) return "none (" + (c.source.empty() ? std::string("the target has no sync costs") : c.source) + ")";
  return fmt::format("barrier {:.0f} ns, counter {:.0f} ns, flag {:.0f} ns ({})", c.barrierNs, c.counterNs, c.flagNs,
                     c.source);
}

std::string describeSyncModel(const SyncModelReport& r) {
  if (!r.on) return "";
  std::string s = fmt::format("{} boundar{} made barriers ({} flag/counter edges replaced, {} more already ordered by them)",
                              r.boundaries, r.boundaries == 1 ? "y" : "ies", r.toBarrier, r.dropped);
  s += fmt::format("; kept: {} cheaper than a barrier, {} where a barrier would wait for independent ops, {} early-start",
                   r.keptCheaper, r.keptIndependent, r.keptEarlyStart);
  return s + "; costs " + r.costs;
}

std::string formatPlanReport(const FusionPlan& plan) {
  const PlanReport& r = plan.report;
  std::string s;
  s += fmt::format("plan ({} {}): {} ops -> {} launches ({} SuperKernels, {} unfused{}), {} variants\n", plan.target,
                   plan.arch, r.opsBefore, r.launchesAfter, r.superKernels, r.launchesAfter - r.superKernels,
                   r.sideLaunches ? fmt::format(", {} of them beside a SuperKernel", r.sideLaunches) : std::string(),
                   plan.variants.size());
  s += "syncs:";
  for (SyncKind k : {SyncKind::Local, SyncKind::Flag, SyncKind::Counter, SyncKind::Barrier, SyncKind::Event}) {
    auto it = r.syncs.edges.find(k);
    s += fmt::format(" {}={}", syncKindName(k), it == r.syncs.edges.end() ? 0 : it->second);
  }
  s += fmt::format(", barriers={}\n", r.syncs.barriers);
  if (std::string m = describeSyncModel(r.syncModel); !m.empty()) s += "sync model: " + m + "\n";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const SuperKernelPlan& sk = plan.steps[i];
    if (!sk.fused) {
      s += fmt::format("[{}] {} {} (block_dim {}, {} cores): {}\n", i,
                       sk.besideStep >= 0 ? fmt::format("beside [{}]:", sk.besideStep) : std::string("unfused"),
                       sk.name, sk.ops.empty() ? 0 : sk.ops[0].blockDim, sk.numCores, sk.endReason);
      continue;
    }
    std::map<SyncKind, int> kinds;
    for (const auto& e : sk.edges) ++kinds[e.sync];
    int barriers = 0;
    for (const auto& op : sk.ops) barriers += op.barrierBefore;
    s += fmt::format("[{}] SuperKernel {} (scope {}): {} ops, {} cores, {} queue{}, {} edges (", i, sk.name, sk.scope,
                     sk.ops.size(), sk.numCores, sk.queues.size(), sk.queues.size() == 1 ? "" : "s", sk.edges.size());
    bool first = true;
    for (const auto& [k, n] : kinds) {
      s += fmt::format("{}{} {}", first ? "" : ", ", n, syncKindName(k));
      first = false;
    }
    s += fmt::format("), {} barriers\n", barriers);
    for (size_t q = 0; q < sk.queues.size(); ++q)
      s += fmt::format("    queue {}: stream {}, cores [{}, {}), {} ops\n", q, sk.queues[q].stream,
                       sk.queues[q].firstCore, sk.queues[q].firstCore + sk.queues[q].numCores, sk.queues[q].ops.size());
    for (const auto& e : sk.edges)
      s += fmt::format("    {} -> {}: {} {}{}{}\n", sk.ops[e.producer].name, sk.ops[e.consumer].name, syncKindName(e.sync),
                       depKindName(e.dep), e.buffer.empty() ? " (event order)" : " on " + e.buffer,
                       e.modelFrom == SyncKind::None
                           ? std::string()
                           : fmt::format(" (sync model: {} -> {}, cheaper)", syncKindName(e.modelFrom), syncKindName(e.sync)));
    auto names = [&](const std::vector<uint32_t>& ops) {
      std::string n;
      for (uint32_t o : ops) n += (n.empty() ? "" : ", ") + sk.ops[o].name;
      return n.empty() ? std::string("nothing") : n;
    };
    for (const SideLaunch& side : sk.sides)
      s += fmt::format("    side launch [{}] {} on stream {}: starts after {}; before {}\n", side.step,
                       plan.steps.at(side.step).name, side.stream, names(side.after), names(side.before));
    s += fmt::format("    ended at {}\n", sk.endReason);
  }
  for (const auto& c : r.collectives) s += "collective " + c + "\n";
  for (const auto& w : r.warnings) s += "warning: " + w + "\n";
  return s;
}

}  // namespace sk
