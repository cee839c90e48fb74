// The planner's passes (Halide-style: one transformation per file, each
// with a header comment saying what it guarantees). Planner.cpp runs them
// top to bottom:
//
//   resolveKernels -> buildVariants -> formSegments -> for each segment:
//   bindSegment -> assignQueues -> coarsenBlocks -> specializeVariants -> findDependencies (+ addEventEdges)
//   -> selectSync -> reduceEdges -> costSync -> placeBarriers -> schedulePreload -> linkSides (a fused segment's side
//   launches, each then planned as an unfused step) -> validatePlan; then dropUnusedVariants (Specialize.cpp), reportInapplicable
//   (Applicability.cpp) and fillReport. The machine model (PlanConfig::machine) is the only thing
//   about the target the passes read.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "superkernel/plan/Plan.h"

namespace sk::plan {

/// Producer blocks [lo, hi] (inclusive); lo > hi means none.
struct BlockInterval {
  uint32_t lo = 1, hi = 0;
  bool empty() const { return lo > hi; }
  static BlockInterval none() { return {1, 0}; }
  void merge(BlockInterval o) {  // hull (waiting on a superset is safe)
    if (o.empty()) return;
    if (empty()) { *this = o; return; }
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
  }
};

/// Elements [lo, hi) of a buffer.
struct ElemRange {
  uint64_t lo = 0, hi = 0;
  bool empty() const { return lo >= hi; }
};

/// What block b of B touches through argument `a` (DESIGN section 3:
/// "block" = the b-th of B equal contiguous slices, last takes the
/// remainder; "all" = the whole argument).
ElemRange blockRange(const BoundArg& a, uint32_t B, uint32_t b);
/// The blocks of a producer (blockDim Bp, argument pa) whose ranges overlap r.
BlockInterval overlappingBlocks(const BoundArg& pa, uint32_t Bp, ElemRange r);

/// Per consumer block, the producer blocks it needs (hull over every
/// conflicting argument pair: same buffer, element ranges overlap, one of
/// them writes). Empty vector: no dependency between the two ops.
struct Requirement {
  std::vector<BlockInterval> need;          // size = consumer blockDim, or empty
  DepKind dep = DepKind::RAW;               // strongest kind seen: RAW > WAW > WAR
  int buffer = -1;                          // SuperKernelPlan buffer carrying `dep`
};
Requirement requirement(const PlannedOp& producer, const PlannedOp& consumer);

/// A segment of the op list: what becomes one step.
struct Segment {
  std::vector<uint32_t> ops;                // launch indices into OpList::ops, recorded order
  uint32_t firstListOp = 0, endListOp = 0;  // [first, end) of OpList::ops it spans
  bool fused = false;
  std::string scope;
  std::string name;
  std::string endReason;                    // "ops[5] (x): <reason>" or "end of op list"
  Options options;
  /// Fused: launches of other streams that run beside it, each a single-op
  /// segment, in recorded order (Segments.cpp says when; Sides.cpp links them).
  std::vector<Segment> sides;
};

struct PlanContext {
  const OpList& list;
  Options options;                          // list + caller options
  PlanConfig config;
  std::map<std::string, KernelDecl> kernels;  // resolved declarations by name
  std::vector<int> opVariant;               // per OpList op; -1 for record/wait
  FusionPlan plan;
};

/// An edge before reduction, with what the consumer needs per block.
struct DepEdge {
  Edge edge;
  std::vector<BlockInterval> need;
  /// Every consumer block needs at least one producer block.
  bool covering() const;
};

// Collectives.cpp
bool hasCollectives(const OpList& list);
/// The list with each collective a launch of the target's collective kernel;
/// `described` gets each one's report text by op index.
Expected<OpList> lowerCollectives(const OpList& list, const MachineModel& machine,
                                  std::map<uint32_t, std::string>& described);
void reportCollectives(FusionPlan& plan, const std::map<uint32_t, std::string>& described);
/// Each collective of a fused step on another queue than the collective
/// before it (in recorded order) gets an event edge from that one: every
/// rank then runs a step's collectives in recorded order.
void orderCollectives(const SuperKernelPlan& sk, const std::map<uint32_t, std::string>& described,
                      std::vector<DepEdge>& edges);
// Variants.cpp
Status resolveKernels(PlanContext& ctx);
Status buildVariants(PlanContext& ctx);
// Segments.cpp
Expected<std::vector<Segment>> formSegments(PlanContext& ctx);
// Bind.cpp
SuperKernelPlan bindSegment(const PlanContext& ctx, const Segment& seg);
/// Whether list launches a and b conflict: some buffer range both touch, one
/// of them writing (the data-edge rule of Dependencies.cpp, for whole ops).
bool launchesConflict(const PlanContext& ctx, uint32_t a, uint32_t b);
// Sides.cpp
void linkSides(const PlanContext& ctx, const Segment& seg, SuperKernelPlan& sk, uint32_t firstSideStep);
// Queues.cpp
Status assignQueues(const PlanContext& ctx, SuperKernelPlan& sk);
// Coarsen.cpp
void coarsenBlocks(const PlanContext& ctx, SuperKernelPlan& sk);
// Specialize.cpp
Status specializeVariants(PlanContext& ctx, SuperKernelPlan& sk);
void dropUnusedVariants(FusionPlan& plan);
// Dependencies.cpp
std::vector<DepEdge> findDependencies(const SuperKernelPlan& sk);
void addEventEdges(const PlanContext& ctx, const Segment& seg, const SuperKernelPlan& sk, std::vector<DepEdge>& edges);
/// An ordering edge p -> c (no data): every block of c waits for all of p.
DepEdge eventEdge(const SuperKernelPlan& sk, uint32_t p, uint32_t c);
/// Edges sorted by consumer then producer (what reduction and readers expect).
void sortEdges(std::vector<DepEdge>& edges);
// SyncSelection.cpp
void selectSync(const SuperKernelPlan& sk, std::vector<DepEdge>& edges, const MachineModel& machine,
                std::vector<std::string>& warnings);
void placeBarriers(SuperKernelPlan& sk);
// Reduction.cpp
std::vector<Edge> reduceEdges(const SuperKernelPlan& sk, std::vector<DepEdge> edges, std::vector<std::string>& warnings);
// SyncCost.cpp
void costSync(SuperKernelPlan& sk, const MachineModel& machine, SyncModelReport& report);
// Preload.cpp
void schedulePreload(SuperKernelPlan& sk);
// Report.cpp
void fillReport(FusionPlan& plan);
// Applicability.cpp
void reportInapplicable(PlanContext& ctx);

/// A set of ops of one step (bit i: op i), for the passes that track what each op depends on.
struct OpBits {
  std::vector<uint64_t> w;
  explicit OpBits(size_t n = 0) : w((n + 63) / 64) {}
  bool test(size_t i) const { return (w[i / 64] >> (i % 64)) & 1; }
  void set(size_t i) { w[i / 64] |= uint64_t{1} << (i % 64); }
  void merge(const OpBits& o) {
    for (size_t i = 0; i < w.size(); ++i) w[i] |= o.w[i];
  }
};

/// Above this many ops in one step, the passes that keep a bitset of ops per op (reduceEdges, costSync)
/// would cost too much: they leave the step as it is (correct, just not minimal or cheapest).
inline constexpr size_t kMaxBitsetOps = 8192;

/// Coarsen.cpp's rule: in a fused step, an op of kernel k with more blocks than its queue's cores runs as one
/// block per core (its outputs do not depend on block_dim, and nothing ties a block to its index).
inline bool coarsensToCores(const KernelDecl& k) { return k.blockDimInvariant && !k.earlyStart && !k.kernelSync; }

/// The one place debug-core-num is applied: the machine a fused SuperKernel
/// runs on (MachineModel::withDebugCoreNum when set, else the whole machine)
/// and its cores.
inline MachineModel machineFor(const Options& o, const PlanConfig& c) {
  return o.debugCoreNum > 0 ? c.machine.withDebugCoreNum(static_cast<uint32_t>(o.debugCoreNum)) : c.machine;
}
inline uint32_t coresFor(const Options& o, const PlanConfig& c) {
  return o.debugCoreNum > 0 ? machineFor(o, c).totalCores() : c.machine.totalCores();
}

}  // namespace sk::plan
