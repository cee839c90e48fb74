// Dependency edges of one SuperKernel (DESIGN section 5).
//
// Guarantees: for every pair of ops (producer earlier in recorded order)
// whose element ranges on some buffer overlap where at least one writes,
// exactly one DepEdge exists, carrying the strongest kind (RAW > WAW > WAR),
// the buffer of that kind, and per consumer block the producer blocks it
// needs (Ranges.cpp). Disjoint views of one buffer give no edge.
// addEventEdges (stream-fusion=1): a wait on stream t for an event recorded
// on stream s adds an Event edge from the last op of s before the record to
// the first op of t after the wait (both in this segment), unless a data
// edge already joins them. Data edges carry every real dependency (kernels
// touch memory only through their arguments), so this one edge is what the
// event adds: the ordering marker a reader of the plan expects to see.
#include <algorithm>
#include <set>
#include <tuple>

#include "plan/PlanInternal.h"

namespace sk::plan {

bool DepEdge::covering() const {
  if (need.empty()) return false;
  for (const auto& n : need)
    if (n.empty()) return false;
  return true;
}

std::vector<DepEdge> findDependencies(const SuperKernelPlan& sk) {
  std::vector<DepEdge> edges;
  // Ops touching each buffer so far: only those can conflict with a later op.
  std::vector<std::vector<uint32_t>> touching(sk.buffers.size());
  for (uint32_t c = 0; c < sk.ops.size(); ++c) {
    std::set<uint32_t> candidates;
    std::set<int> bufs;
    for (const BoundArg& a : sk.ops[c].args)
      if (a.touchesBuffer()) bufs.insert(a.buffer);
    for (int b : bufs)
      for (uint32_t p : touching[static_cast<size_t>(b)]) candidates.insert(p);
    for (uint32_t p : candidates) {
      Requirement r = requirement(sk.ops[p], sk.ops[c]);
      if (r.need.empty()) continue;
      DepEdge e;
      e.edge.producer = p;
      e.edge.consumer = c;
      e.edge.dep = r.dep;
      e.edge.buffer = sk.buffers[static_cast<size_t>(r.buffer)].name;
      e.need = std::move(r.need);
      edges.push_back(std::move(e));
    }
    for (int b : bufs) touching[static_cast<size_t>(b)].push_back(c);
  }
  return edges;
}

void addEventEdges(const PlanContext& ctx, const Segment& seg, const SuperKernelPlan& sk, std::vector<DepEdge>& edges) {
  if (!sk.fused || !sk.options.streamFusion) return;
  std::map<uint32_t, uint32_t> skIndex;    // OpList index -> sk op index
  for (uint32_t i = 0; i < sk.ops.size(); ++i) skIndex[sk.ops[i].opIndex] = i;
  std::set<std::pair<uint32_t, uint32_t>> joined;
  for (const auto& e : edges) joined.insert({e.edge.producer, e.edge.consumer});

  std::map<uint32_t, int> lastOf;           // stream -> last sk op so far
  std::map<std::string, std::pair<uint32_t, int>> recorded;  // event -> (stream, producer)
  std::map<uint32_t, std::set<uint32_t>> pending;            // stream -> producers to order after
  for (uint32_t li = seg.firstListOp; li < seg.endListOp; ++li) {
    const Op& op = ctx.list.ops[li];
    if (op.kind == Op::Kind::Record) {
      auto it = lastOf.find(op.stream);
      recorded[op.event] = {op.stream, it == lastOf.end() ? -1 : it->second};
    } else if (op.kind == Op::Kind::Wait) {
      auto it = recorded.find(op.event);
      if (it != recorded.end() && it->second.first != op.stream && it->second.second >= 0)
        pending[op.stream].insert(static_cast<uint32_t>(it->second.second));
    } else if (auto s = skIndex.find(li); s != skIndex.end()) {
      uint32_t c = s->second;
      for (uint32_t p : pending[op.stream]) {
        if (joined.count({p, c})) continue;
        joined.insert({p, c});
        edges.push_back(eventEdge(sk, p, c));
      }
      pending[op.stream].clear();
      lastOf[op.stream] = static_cast<int>(c);
    }
  }
  sortEdges(edges);
}

DepEdge eventEdge(const SuperKernelPlan& sk, uint32_t p, uint32_t c) {
  DepEdge e;
  e.edge.producer = p;
  e.edge.consumer = c;
  e.edge.dep = DepKind::RAW;
  e.edge.sync = SyncKind::Event;
  e.need.assign(sk.ops[c].blockDim, BlockInterval{0, sk.ops[p].blockDim - 1});
  return e;
}

void sortEdges(std::vector<DepEdge>& edges) {
  std::sort(edges.begin(), edges.end(), [](const DepEdge& a, const DepEdge& b) {
    return std::tie(a.edge.consumer, a.edge.producer) < std::tie(b.edge.consumer, b.edge.producer);
  });
}

}  // namespace sk::plan
