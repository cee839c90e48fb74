// Transitive reduction of the edges of one SuperKernel.
//
// A plain op-level reduction is unsound when syncs are partial: with
// A->B local and B->C flag, C's block b is only ordered after the A blocks
// that its B blocks followed, not after all of A. So an edge is dropped only
// when what remains guarantees it:
// - full(C): ops all of whose blocks finish before any block of C starts.
//   A kept Counter/Barrier/Event edge X->C adds X and full(X); a kept
//   Local/Flag edge X->C whose every consumer block needs >= 1 X block adds
//   full(X) (each C block follows some X block, which followed full(X)).
// - A Counter/Flag/Barrier/Event edge A->C is dropped iff A is in full(C).
// - A Local edge emits nothing (program order on the core satisfies it
//   whether or not the edge is listed), so it is dropped iff A reaches C
//   through kept edges at all (the classic reduction, for the report).
// Edges into C are examined from the latest producer to the earliest, so
// every path through a later op is known when an earlier one is decided.
// Above kMaxBitsetOps ops the bitsets would cost too much; all edges are then
// kept (correct, just not minimal) and a warning says so.
#include <algorithm>

#include "plan/PlanInternal.h"

namespace sk::plan {

namespace {

bool isFull(SyncKind k) { return k == SyncKind::Counter || k == SyncKind::Barrier || k == SyncKind::Event; }
}  // namespace

std::vector<Edge> reduceEdges(const SuperKernelPlan& sk, std::vector<DepEdge> edges, std::vector<std::string>& warnings) {
  size_t n = sk.ops.size();
  std::vector<Edge> kept;
  if (n > kMaxBitsetOps) {
    warnings.push_back("SuperKernel " + sk.name + ": " + std::to_string(n) + " ops, transitive reduction skipped");
    for (auto& d : edges) kept.push_back(std::move(d.edge));
    return kept;
  }
  std::vector<std::vector<size_t>> incoming(n);
  for (size_t i = 0; i < edges.size(); ++i) incoming[edges[i].edge.consumer].push_back(i);
  std::vector<OpBits> reach(n, OpBits(n)), full(n, OpBits(n));
  std::vector<bool> keep(edges.size(), false);
  for (size_t c = 0; c < n; ++c) {
    auto& in = incoming[c];
    std::sort(in.begin(), in.end(), [&](size_t a, size_t b) { return edges[a].edge.producer > edges[b].edge.producer; });
    for (size_t ei : in) {
      const DepEdge& d = edges[ei];
      uint32_t a = d.edge.producer;
      bool redundant = d.edge.sync == SyncKind::Local ? reach[c].test(a) : full[c].test(a);
      if (redundant) continue;
      keep[ei] = true;
      reach[c].merge(reach[a]);
      reach[c].set(a);
      if (isFull(d.edge.sync)) {
        full[c].merge(full[a]);
        full[c].set(a);
      } else if (d.covering()) {
        full[c].merge(full[a]);
      }
    }
  }
  for (size_t i = 0; i < edges.size(); ++i)
    if (keep[i]) kept.push_back(std::move(edges[i].edge));
  std::sort(kept.begin(), kept.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.consumer, a.producer) < std::tie(b.consumer, b.producer);
  });
  return kept;
}

}  // namespace sk::plan
