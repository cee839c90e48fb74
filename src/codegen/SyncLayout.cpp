#include "superkernel/codegen/SyncLayout.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

namespace sk {

Status checkStepShape(const FusionPlan& plan, const SuperKernelPlan& sk) {
  if (sk.numCores == 0) return internalError("numCores is 0");
  if (sk.ops.empty()) return internalError("no ops");
  if (sk.queues.empty()) return internalError("no queues");
  std::vector<int> queueOf(sk.ops.size(), -1);
  for (size_t q = 0; q < sk.queues.size(); ++q) {
    const Queue& qu = sk.queues[q];
    if (qu.numCores == 0 || qu.firstCore + uint64_t{qu.numCores} > sk.numCores) {
      return internalError(fmt::format("queue {} uses cores [{}, {}) outside [0, {})", q, qu.firstCore,
                                       uint64_t{qu.firstCore} + qu.numCores, sk.numCores));
    }
    for (size_t r = 0; r < q; ++r) {
      const Queue& o = sk.queues[r];
      if (qu.firstCore < o.firstCore + o.numCores && o.firstCore < qu.firstCore + qu.numCores) {
        return internalError(fmt::format("queues {} and {} share cores", r, q));
      }
    }
    for (uint32_t i : qu.ops) {
      if (i >= sk.ops.size()) return internalError(fmt::format("queue {} lists op {} of {}", q, i, sk.ops.size()));
      if (queueOf[i] != -1) return internalError(fmt::format("op {} is in two queues", sk.ops[i].name));
      queueOf[i] = static_cast<int>(q);
    }
  }
  for (size_t i = 0; i < sk.ops.size(); ++i) {
    const PlannedOp& op = sk.ops[i];
    if (queueOf[i] < 0 || static_cast<uint32_t>(queueOf[i]) != op.queue) {
      return internalError(fmt::format("op {} is not in its queue {}", op.name, op.queue));
    }
    if (op.blockDim == 0) return internalError(fmt::format("op {} has block_dim 0", op.name));
    if (op.variant >= plan.variants.size()) {
      return internalError(fmt::format("op {} uses variant {} of {}", op.name, op.variant, plan.variants.size()));
    }
    if (op.preloadVariant >= 0 && static_cast<size_t>(op.preloadVariant) >= plan.variants.size()) {
      return internalError(fmt::format("op {} preloads variant {} of {}", op.name, op.preloadVariant,
                                       plan.variants.size()));
    }
    const KernelDecl& decl = plan.variants[op.variant].decl;
    if (op.args.size() != decl.params.size()) {
      return internalError(fmt::format("op {} binds {} arguments, kernel {} declares {}", op.name, op.args.size(),
                                       decl.name, decl.params.size()));
    }
    for (size_t a = 0; a < op.args.size(); ++a) {
      const BoundArg& arg = op.args[a];
      if (arg.kind != decl.params[a].kind) {
        return internalError(fmt::format("op {} argument {}: kind differs from the declaration", op.name,
                                         decl.params[a].name));
      }
      if (arg.touchesBuffer() && (arg.buffer < 0 || static_cast<size_t>(arg.buffer) >= sk.buffers.size())) {
        return internalError(fmt::format("op {} argument {}: buffer index {} of {}", op.name,
                                         decl.params[a].name, arg.buffer, sk.buffers.size()));
      }
    }
    // The one kernel_sync rule (plan/Plan.h): all blocks at once.
    if (!kernelSyncFits(op, sk.queues[op.queue])) {
      return badInput(fmt::format("op {} uses sk_kernel_sync with block_dim {} but its queue has {} core(s); "
                                  "all blocks must run at once",
                                  op.name, op.blockDim, sk.queues[op.queue].numCores));
    }
  }
  for (const Edge& e : sk.edges) {
    if (e.producer >= sk.ops.size() || e.consumer >= sk.ops.size()) {
      return internalError(fmt::format("edge {} -> {} out of range", e.producer, e.consumer));
    }
    const PlannedOp& p = sk.ops[e.producer];
    const PlannedOp& c = sk.ops[e.consumer];
    const bool sameQueue = p.queue == c.queue;
    switch (e.sync) {
      case SyncKind::None:
        break;
      case SyncKind::Local:
        // Program order orders only ops of one queue (one pool); which blocks
        // share a core is the planner's proof.
        if (!sameQueue) {
          return internalError(fmt::format("local edge {} -> {} crosses queues", p.name, c.name));
        }
        break;
      case SyncKind::Barrier:
        if (!sameQueue || !c.barrierBefore) {
          return internalError(fmt::format("barrier edge {} -> {} without a barrier before {} in its queue", p.name,
                                           c.name, c.name));
        }
        break;
      case SyncKind::Flag:
        if (e.flagRanges.size() != c.blockDim) {
          return internalError(fmt::format("flag edge {} -> {}: {} ranges for {} consumer blocks", p.name, c.name,
                                           e.flagRanges.size(), c.blockDim));
        }
        for (const auto& [lo, hi] : e.flagRanges) {
          if (lo <= hi && hi >= p.blockDim) {
            return internalError(fmt::format("flag edge {} -> {}: producer block {} of {}", p.name, c.name, hi,
                                             p.blockDim));
          }
        }
        break;
      case SyncKind::Counter:
      case SyncKind::Event:
        break;
    }
  }
  return Status::success();
}

bool isIdentityRanges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  for (size_t b = 0; b < ranges.size(); ++b)
    if (ranges[b].first != b || ranges[b].second != b) return false;
  return true;
}

bool SyncLayout::anyWaits() const {
  return std::any_of(waits.begin(), waits.end(), [](const auto& w) { return !w.empty(); });
}

bool SyncLayout::anySignals() const {
  for (size_t i = 0; i < counterOf.size(); ++i)
    if (signals(i)) return true;
  return false;
}

Expected<std::vector<PoolSyncPoint>> poolSyncPoints(const std::vector<PoolSyncOp>& ops,
                                                    const std::vector<PoolSyncEdge>& edges,
                                                    bool barrierAfterEveryOp) {
  const size_t n = ops.size();
  for (const PoolSyncOp& op : ops)
    if (op.pool >= 32) return internalError(fmt::format("op {}: pool {} (a sync point names pools 0..31)", op.name, op.pool));
  for (const PoolSyncEdge& e : edges) {
    if (e.producer >= n || e.consumer >= n || e.producer >= e.consumer) {
      return internalError(fmt::format("pool sync edge {} -> {} of {} ops", e.producer, e.consumer, n));
    }
  }
  auto bit = [](uint32_t pool) { return 1u << pool; };
  std::vector<PoolSyncPoint> points(n);
  // seen[o]: the pools whose every core knows op o completed (a point signalled by o's pool and waited by
  // theirs, or a full barrier since).
  std::vector<uint32_t> seen(n, 0);
  for (size_t c = 0; c < n; ++c) {
    const PoolSyncOp& cur = ops[c];
    if (barrierAfterEveryOp && c > 0) std::fill(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(c), ~0u);
    PoolSyncPoint& sp = points[c];
    for (const PoolSyncEdge& e : edges) {
      if (e.consumer != c || e.local || (seen[e.producer] & bit(cur.pool))) continue;
      sp.pools |= bit(ops[e.producer].pool);
      sp.why.push_back(e.what);
    }
    // An op that signals early start itself leaves its pool's other cores to signal at the next point.
    if (c > 0 && ops[c - 1].ownEarlyStart) {
      sp.pools |= bit(ops[c - 1].pool);
      sp.why.push_back(ops[c - 1].name + " signals early start itself");
    }
    // An op that waits itself needs a point to wait at, even without a data edge.
    if (cur.ownEarlyStart && sp.pools == 0) {
      sp.pools = c > 0 ? bit(ops[c - 1].pool) : bit(cur.pool);
      sp.why.push_back(cur.name + " waits for early start itself");
    }
    if (sp.pools == 0) continue;
    for (size_t o = 0; o < c; ++o)
      if (sp.pools & bit(ops[o].pool)) seen[o] |= bit(ops[o].pool) | bit(cur.pool);
  }
  return points;
}

Expected<SyncLayout> layoutSync(const FusionPlan& plan, const SuperKernelPlan& sk) {
  SK_RETURN_IF_ERROR(checkStepShape(plan, sk));
  const size_t n = sk.ops.size();
  SyncLayout L;
  L.counterOf.assign(n, -1);
  L.flagBaseOf.assign(n, -1);
  L.kernelSyncOf.assign(n, -1);
  for (const Edge& e : sk.edges) {
    if ((e.sync == SyncKind::Counter || e.sync == SyncKind::Event) && L.counterOf[e.producer] < 0)
      L.counterOf[e.producer] = static_cast<int>(L.numCounters++);
  }
  for (const Edge& e : sk.edges) {
    if (e.sync == SyncKind::Flag && L.flagBaseOf[e.producer] < 0) {
      L.flagBaseOf[e.producer] = static_cast<int>(L.numFlags);
      L.numFlags += sk.ops[e.producer].blockDim;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (sk.ops[i].kernelSync) L.kernelSyncOf[i] = static_cast<int>(L.numKernelSyncs++);

  // Waits per consumer, deduplicated (two edges from one producer, e.g. RAW
  // on two buffers, need one wait; a counter wait covers any flag wait).
  L.waits.assign(n, {});
  for (const Edge& e : sk.edges) {
    if (e.sync != SyncKind::Flag && e.sync != SyncKind::Counter && e.sync != SyncKind::Event) continue;
    auto& list = L.waits[e.consumer];
    if (e.sync == SyncKind::Flag) {
      bool covered = std::any_of(list.begin(), list.end(), [&](const SyncWait& w) {
        return w.producer == e.producer && (w.kind == SyncWait::Kind::Counter || w.edge->flagRanges == e.flagRanges);
      });
      if (covered) continue;
      SyncWait w;
      w.kind = isIdentityRanges(e.flagRanges) ? SyncWait::Kind::FlagOne : SyncWait::Kind::FlagTable;
      w.producer = e.producer;
      w.flagBase = static_cast<uint32_t>(L.flagBaseOf[e.producer]);
      if (w.kind == SyncWait::Kind::FlagTable) {
        w.table = static_cast<int>(L.flagTables.size());
        L.flagTables.push_back(FlagTable{e.consumer, e.producer, &e.flagRanges});
      }
      w.edge = &e;
      list.push_back(w);
    } else {
      // A counter wait replaces earlier flag waits on the same producer.
      list.erase(std::remove_if(list.begin(), list.end(), [&](const SyncWait& w) { return w.producer == e.producer; }),
                 list.end());
      SyncWait w;
      w.kind = SyncWait::Kind::Counter;
      w.producer = e.producer;
      w.counter = static_cast<uint32_t>(L.counterOf[e.producer]);
      w.blocks = sk.ops[e.producer].blockDim;
      w.edge = &e;
      list.push_back(w);
    }
  }

  // Variants the source references: called ones and preloaded ones.
  std::set<uint32_t> used;
  for (const PlannedOp& op : sk.ops) {
    used.insert(op.variant);
    if (op.preloadVariant >= 0 && sk.options.preloadCode != PreloadCode::None)
      used.insert(static_cast<uint32_t>(op.preloadVariant));
  }
  L.variants.assign(used.begin(), used.end());

  return L;
}

Expected<std::vector<PoolSyncPoint>> layoutPoolSync(const FusionPlan& plan, const SuperKernelPlan& sk) {
  SK_RETURN_IF_ERROR(checkStepShape(plan, sk));
  std::vector<PoolSyncOp> ops;
  ops.reserve(sk.ops.size());
  for (const PlannedOp& op : sk.ops) ops.push_back({op.name, sk.queues[op.queue].pool, op.earlyStart});
  std::vector<PoolSyncEdge> edges;
  for (const Edge& e : sk.edges) {
    if (e.sync == SyncKind::None) continue;
    edges.push_back({e.producer, e.consumer, e.sync == SyncKind::Local,
                     fmt::format("{} <- {} ({} on {})", sk.ops[e.consumer].name, sk.ops[e.producer].name,
                                 depKindName(e.dep), e.buffer.empty() ? "order" : e.buffer)});
  }
  return poolSyncPoints(ops, edges, sk.options.debugSyncAll);
}

std::string stepManifest(const FusionPlan& plan, const SuperKernelPlan& sk, std::string_view target,
                         const SyncLayout& layout) {
  nlohmann::json m;
  m["format"] = "superkernel.manifest";
  m["version"] = 1;
  m["name"] = sk.name;
  m["target"] = std::string(target);
  m["num_cores"] = sk.numCores;
  m["options"] = sk.options.canonical();
  m["fused"] = sk.fused;
  m["buffers"] = nlohmann::json::array();
  for (const PlanBuffer& b : sk.buffers)
    m["buffers"].push_back({{"name", b.name}, {"dtype", dtypeName(b.dtype)}, {"elements", b.elements}});
  m["ops"] = nlohmann::json::array();
  for (const PlannedOp& op : sk.ops)
    m["ops"].push_back({{"name", op.name},
                        {"symbol", plan.variants[op.variant].symbol},
                        {"block_dim", op.blockDim},
                        {"queue", op.queue}});
  m["variants"] = nlohmann::json::array();
  for (uint32_t vi : layout.variants) m["variants"].push_back(plan.variants[vi].symbol);
  return m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // never throws on a name
}

}  // namespace sk
