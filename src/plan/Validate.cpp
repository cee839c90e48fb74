// validatePlan: a SuperKernel that could hang (or silently race) is an
// error, never a hang (DESIGN section 5).
//
// Checks, in order:
// 1. Shape: numCores >= 1; queues inside [0, numCores), disjoint, >= 1 core;
//    every op in exactly one queue and op.queue agrees; blockDim >= 1;
//    buffer indices valid; a kernel_sync op's blockDim <= its queue's cores
//    (its blocks must all be resident at once, one per core).
// 2. Every wait has a signaller: edge endpoints exist, producer precedes
//    consumer (ops are a topological order), sync kind is not None, Flag
//    ranges are sized blockDim(consumer) and inside [0, blockDim(producer)),
//    Barrier edges stay in one queue with barrierBefore on the consumer.
// 3. Declared syncs cover the data: for Local edges every needed producer
//    block runs earlier on the consumer block's core; for Flag edges every
//    needed producer block is inside flagRanges[b] (needs recomputed from
//    the bound args, exactly as the planner does).
// 4. No deadlock: a graph of per-core program points — each core runs its
//    queue's ops in order, its blocks b = core-first, +numCores, ... in
//    ascending order, a barrier node joins all queue cores before an op with
//    barrierBefore, a kernel_sync node joins all of an op's blocks between
//    their start and end — plus wait edges (producer block end -> consumer
//    block start; a consumer waiting inside its body at sk_wait_inputs is
//    only less constrained, so starts are the conservative choice) must be
//    acyclic (Kahn's algorithm).
#include <deque>

#include "plan/PlanInternal.h"

namespace sk {

namespace {

Error bad(const SuperKernelPlan& sk, const std::string& msg) {
  return internalError("plan " + sk.name + " could hang or race: " + msg);
}

std::string opName(const SuperKernelPlan& sk, uint32_t i) {
  return i < sk.ops.size() ? "op " + std::to_string(i) + " (" + sk.ops[i].name + ")" : "op " + std::to_string(i);
}

Status checkShape(const SuperKernelPlan& sk) {
  if (sk.numCores < 1) return bad(sk, "numCores is 0");
  if (sk.queues.empty() && !sk.ops.empty()) return bad(sk, "no queues");
  std::vector<int> coreOwner(sk.numCores, -1);
  for (size_t qi = 0; qi < sk.queues.size(); ++qi) {
    const Queue& q = sk.queues[qi];
    if (q.numCores < 1) return bad(sk, "queue " + std::to_string(qi) + " has no cores");
    if (q.firstCore >= sk.numCores || q.numCores > sk.numCores - q.firstCore)
      return bad(sk, "queue " + std::to_string(qi) + " cores outside [0, " + std::to_string(sk.numCores) + ")");
    for (uint32_t c = q.firstCore; c < q.firstCore + q.numCores; ++c) {
      if (coreOwner[c] >= 0) return bad(sk, "core " + std::to_string(c) + " belongs to two queues");
      coreOwner[c] = static_cast<int>(qi);
    }
  }
  std::vector<int> seen(sk.ops.size(), 0);
  for (size_t qi = 0; qi < sk.queues.size(); ++qi)
    for (size_t pos = 0; pos < sk.queues[qi].ops.size(); ++pos) {
      uint32_t o = sk.queues[qi].ops[pos];
      if (o >= sk.ops.size()) return bad(sk, "queue " + std::to_string(qi) + " names a missing op");
      if (sk.ops[o].queue != qi) return bad(sk, opName(sk, o) + " is listed in queue " + std::to_string(qi) + " but says queue " + std::to_string(sk.ops[o].queue));
      if (pos > 0 && sk.queues[qi].ops[pos - 1] >= o) return bad(sk, "queue " + std::to_string(qi) + " is not in op order");
      ++seen[o];
    }
  for (uint32_t o = 0; o < sk.ops.size(); ++o) {
    const PlannedOp& op = sk.ops[o];
    if (seen[o] != 1) return bad(sk, opName(sk, o) + " is in " + std::to_string(seen[o]) + " queues");
    if (op.blockDim < 1) return bad(sk, opName(sk, o) + " has block_dim 0");
    if (!kernelSyncFits(op, sk.queues[op.queue]))
      return badInput("plan " + sk.name + ": kernel_sync " + opName(sk, o) + " has " + std::to_string(op.blockDim) +
                      " blocks but its queue only " + std::to_string(sk.queues[op.queue].numCores) + " cores");
    for (const BoundArg& a : op.args)
      if (a.touchesBuffer() && (a.buffer < 0 || static_cast<size_t>(a.buffer) >= sk.buffers.size()))
        return bad(sk, opName(sk, o) + " names a missing buffer");
  }
  return Status::success();
}

Status checkEdges(const SuperKernelPlan& sk) {
  for (const Edge& e : sk.edges) {
    if (e.producer >= sk.ops.size() || e.consumer >= sk.ops.size())
      return bad(sk, "an edge names a missing op (no signaller)");
    std::string what = "edge " + opName(sk, e.producer) + " -> " + opName(sk, e.consumer);
    if (e.producer >= e.consumer) return bad(sk, what + ": producer does not precede consumer");
    const PlannedOp& p = sk.ops[e.producer];
    const PlannedOp& c = sk.ops[e.consumer];
    switch (e.sync) {
      case SyncKind::None: return bad(sk, what + ": sync kind none");
      case SyncKind::Flag:
        if (e.flagRanges.size() != c.blockDim)
          return bad(sk, what + ": " + std::to_string(e.flagRanges.size()) + " flag ranges for " +
                             std::to_string(c.blockDim) + " consumer blocks");
        for (const auto& [lo, hi] : e.flagRanges)
          if (lo <= hi && hi >= p.blockDim) return bad(sk, what + ": flag range waits for a producer block that does not exist");
        [[fallthrough]];
      case SyncKind::Local:
        if (p.queue != c.queue) return bad(sk, what + ": " + syncKindName(e.sync) + " edge across queues");
        break;
      case SyncKind::Barrier:
        if (p.queue != c.queue) return bad(sk, what + ": barrier across queues");
        if (!c.barrierBefore) return bad(sk, what + ": barrier edge without barrierBefore on the consumer");
        break;
      case SyncKind::Counter:
      case SyncKind::Event: break;
    }
    if (e.sync != SyncKind::Local && e.sync != SyncKind::Flag) continue;
    // Declared syncs must cover what the consumer actually touches.
    plan::Requirement r = plan::requirement(p, c);
    const Queue& q = sk.queues[c.queue];
    for (uint32_t b = 0; b < c.blockDim && !r.need.empty(); ++b) {
      plan::BlockInterval k = r.need[b];
      if (k.empty()) continue;
      if (e.sync == SyncKind::Local) {
        for (uint32_t x = k.lo; x <= k.hi; ++x)
          if (coreOf(q, x) != coreOf(q, b))
            return bad(sk, what + ": local edge but consumer block " + std::to_string(b) + " needs producer block " +
                               std::to_string(x) + " of another core");
      } else {
        auto [lo, hi] = e.flagRanges[b];
        if (lo > hi || k.lo < lo || k.hi > hi)
          return bad(sk, what + ": flag range of consumer block " + std::to_string(b) + " misses producer blocks it needs");
      }
    }
  }
  return Status::success();
}

Status checkAcyclic(const SuperKernelPlan& sk) {
  // Node ids: start/end per (op, block), then per-op barrier, kernel_sync and done nodes.
  std::vector<size_t> base(sk.ops.size() + 1, 0);
  for (size_t o = 0; o < sk.ops.size(); ++o) base[o + 1] = base[o] + 2 * size_t{sk.ops[o].blockDim};
  size_t blockNodes = base.back();
  size_t n = blockNodes + 3 * sk.ops.size();
  auto start = [&](size_t o, uint32_t b) { return base[o] + 2 * size_t{b}; };
  auto end = [&](size_t o, uint32_t b) { return base[o] + 2 * size_t{b} + 1; };
  auto barrierNode = [&](size_t o) { return blockNodes + 3 * o; };
  auto syncNode = [&](size_t o) { return blockNodes + 3 * o + 1; };
  auto doneNode = [&](size_t o) { return blockNodes + 3 * o + 2; };
  std::vector<std::vector<size_t>> out(n);
  auto edge = [&](size_t a, size_t b) { out[a].push_back(b); };

  for (size_t o = 0; o < sk.ops.size(); ++o) {
    const PlannedOp& op = sk.ops[o];
    for (uint32_t b = 0; b < op.blockDim; ++b) {
      if (op.kernelSync) {
        edge(start(o, b), syncNode(o));
        edge(syncNode(o), end(o, b));
      } else {
        edge(start(o, b), end(o, b));
      }
      edge(end(o, b), doneNode(o));
    }
  }
  for (const Queue& q : sk.queues)
    for (uint32_t c = q.firstCore; c < q.firstCore + q.numCores; ++c) {
      std::optional<size_t> prev;
      for (uint32_t o : q.ops) {
        const PlannedOp& op = sk.ops[o];
        if (op.barrierBefore) {
          if (prev) edge(*prev, barrierNode(o));
          prev = barrierNode(o);
        }
        for (uint32_t b = c - q.firstCore; b < op.blockDim; b += q.numCores) {
          if (prev) edge(*prev, start(o, b));
          prev = end(o, b);
        }
      }
    }
  for (const Edge& e : sk.edges) {
    const PlannedOp& c = sk.ops[e.consumer];
    for (uint32_t b = 0; b < c.blockDim; ++b) {
      switch (e.sync) {
        case SyncKind::Flag: {
          auto [lo, hi] = e.flagRanges[b];
          for (uint32_t k = lo; k <= hi && lo <= hi; ++k) edge(end(e.producer, k), start(e.consumer, b));
          break;
        }
        case SyncKind::Counter:
        case SyncKind::Event: edge(doneNode(e.producer), start(e.consumer, b)); break;
        default: break;  // local: program order; barrier: the barrier node
      }
    }
  }
  std::vector<uint32_t> indeg(n, 0);
  for (const auto& v : out)
    for (size_t t : v) ++indeg[t];
  std::deque<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (!indeg[i]) ready.push_back(i);
  size_t done = 0;
  while (!ready.empty()) {
    size_t v = ready.front();
    ready.pop_front();
    ++done;
    for (size_t t : out[v])
      if (--indeg[t] == 0) ready.push_back(t);
  }
  if (done == n) return Status::success();
  for (size_t o = 0; o < sk.ops.size(); ++o)
    for (uint32_t b = 0; b < sk.ops[o].blockDim; ++b)
      if (indeg[start(o, b)])
        return bad(sk, "deadlock: " + opName(sk, static_cast<uint32_t>(o)) + " block " + std::to_string(b) +
                           " waits in a cycle of program order and waits");
  return bad(sk, "deadlock: a barrier or kernel_sync waits in a cycle");
}

}  // namespace

// 5. Side launches (fused only): every op they wait for or that waits for
//    them exists, each list ascending, and every `after` op precedes every
//    `before` op (else the SuperKernel would wait for a launch that waits
//    for it).
Status checkSides(const SuperKernelPlan& sk) {
  if (!sk.fused && !sk.sides.empty()) return bad(sk, "an unfused step with side launches");
  for (const SideLaunch& side : sk.sides) {
    const std::string what = "side launch (step " + std::to_string(side.step) + ")";
    for (const std::vector<uint32_t>* list : {&side.after, &side.before}) {
      for (size_t i = 0; i < list->size(); ++i) {
        if ((*list)[i] >= sk.ops.size()) return bad(sk, what + " names a missing op");
        if (i > 0 && (*list)[i - 1] >= (*list)[i]) return bad(sk, what + ": op list not ascending");
      }
    }
    if (!side.after.empty() && !side.before.empty() && side.after.back() >= side.before.front())
      return bad(sk, what + ": waits for " + opName(sk, side.after.back()) + ", which runs after " +
                         opName(sk, side.before.front()) + " that waits for it");
  }
  return Status::success();
}

Status validatePlan(const SuperKernelPlan& sk) {
  SK_RETURN_IF_ERROR(checkShape(sk));
  SK_RETURN_IF_ERROR(checkEdges(sk));
  SK_RETURN_IF_ERROR(checkSides(sk));
  return checkAcyclic(sk);
}

}  // namespace sk
