// FusionPlan: what the planner decides, as plain values (DESIGN section 5).
//
// The plan is self-contained: codegen reads only this (kernel declarations,
// buffer dtypes and the decided synchronization are copied in), never the
// OpList it came from. Every step of execution is a SuperKernelPlan: a fused
// segment, or a single unfused op (fused == false) run as one executor launch.
// Steps run in vector order; that order respects every dependency.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "superkernel/frontend/OpList.h"
#include "superkernel/frontend/Options.h"
#include "superkernel/plan/MachineModel.h"

namespace sk {

enum class SyncKind : uint8_t { None, Local, Flag, Counter, Barrier, Event };
enum class DepKind : uint8_t { RAW, WAR, WAW };
const char* syncKindName(SyncKind k);
const char* depKindName(DepKind k);

/// One distinct compiled sub-kernel: a kernel declaration with its merged
/// macros (kernel macros overridden by the op's). Ops share variants, so a
/// 1,200-op plan from 20 kernels compiles ~20 objects.
struct KernelVariant {
  KernelDecl decl;                          // sourcePath resolved (builtins too)
  std::map<std::string, std::string> macros;
  /// Unique link name of the entry in this variant's object: the source is
  /// compiled with -D<entry>=<symbol>. Stable: "<entry>__v<12 hex>" from the
  /// kernel name, entry and macros.
  std::string symbol;
  /// Code size of `symbol` in bytes, read from the object by the driver
  /// (0 until then). Drives the preload schedule's byte counts.
  uint64_t codeBytes = 0;
  /// MachineModel::staticArguments: this variant is one op's object, built
  /// for the values below (and `symbol` carries a hash of them).
  bool specialised = false;
  /// The op's literal scalar arguments, in parameter order (specialised only).
  std::vector<ScalarValue> staticScalars;
  /// The op's runtime scalars (specialised only): parameter name and slot
  /// (BoundArg::runtimeSlot), in parameter order. The object reads the value
  /// from the launch's slot, never compiles it in.
  std::vector<std::pair<std::string, uint32_t>> runtimeScalars;
  /// Its block count inside a SuperKernel; 0: an unfused launch (specialised only).
  uint32_t staticBlocks = 0;
  /// Inside a SuperKernel with early-start=1, the kernel's own early-start
  /// calls are honoured (specialised only).
  bool ownEarlyStart = false;
};

/// A buffer of one SuperKernel, in manifest order (= run()'s buffers[]).
struct PlanBuffer {
  std::string name;
  DType dtype = DType::F32;
  uint64_t elements = 0;
  uint32_t listIndex = 0;                   // index into OpList::buffers
  /// No op of any step of the plan writes it (its contents are final before the first launch): set only for
  /// the Graph + PDL variant (CompileRequest::graphPdl), whose unfused steps prefetch these inputs' slices
  /// before griddepcontrol.wait (plan/DataPreload.cpp). false: not known, never prefetched across launches.
  bool readOnlyInPlan = false;
};

/// One argument of a planned op, in the kernel's parameter order.
struct BoundArg {
  ParamKind kind = ParamKind::Buffer;
  DType dtype = DType::F32;
  Access access = Access::Read;
  Partition partition = Partition::All;
  int buffer = -1;                          // index into SuperKernelPlan::buffers
  uint64_t offset = 0;                      // elements, views
  uint64_t count = 0;                       // elements the argument covers
  ScalarValue scalar = int64_t{0};
  /// A runtime scalar (kind Scalar, frontend RuntimeScalar): the value is
  /// element `offset` of buffer `buffer`, read when the op is called. It
  /// touches that element like a read argument of partition "all" (count 1),
  /// so dependencies and syncs treat it as one.
  bool runtime = false;
  /// Runtime scalars: the index of its source in SuperKernelPlan::runtimeValues.
  uint32_t runtimeSlot = 0;
  /// Whether the argument reads or writes a buffer of the manifest: a buffer
  /// argument or a runtime scalar.
  bool touchesBuffer() const { return kind == ParamKind::Buffer || runtime; }
};

struct PlannedOp {
  uint32_t opIndex = 0;                     // index into OpList::ops
  std::string name;
  uint32_t variant = 0;                     // index into FusionPlan::variants
  uint32_t blockDim = 1;
  uint32_t queue = 0;                       // index into SuperKernelPlan::queues
  uint32_t stream = 0;
  /// Kernel declares early_start and early-start == 1: it calls
  /// sk_wait_inputs itself; otherwise waits happen before the call.
  bool earlyStart = false;
  bool kernelSync = false;
  /// A sync_all among the queue's cores before this op runs (an incoming
  /// Barrier edge, early-start=0, or debug-sync-all after the previous op).
  bool barrierBefore = false;
  /// Variant whose code to prefetch when this op starts (-1: none); bytes
  /// per preload-code (per-func: symbol size rounded up to 2 KiB, max 16 KiB).
  int preloadVariant = -1;
  std::vector<BoundArg> args;
};

/// An edge of the dependency graph after transitive reduction.
struct Edge {
  uint32_t producer = 0;                    // index into SuperKernelPlan::ops
  uint32_t consumer = 0;
  DepKind dep = DepKind::RAW;
  SyncKind sync = SyncKind::None;
  std::string buffer;                       // the buffer that carries it ("" : event-order edge)
  /// Flag edges: for consumer block b, the producer blocks [first, second]
  /// whose ranges overlap b's (first > second: none). Size = consumer blockDim.
  /// The hull over all conflicting arguments; same-core blocks are not
  /// excluded. Empty for every other kind (Counter/Event: all blocks).
  std::vector<std::pair<uint32_t, uint32_t>> flagRanges;
  /// The kind the correctness rules chose when the sync cost model (plan/SyncCost.cpp) changed it to
  /// `sync`; None: unchanged.
  SyncKind modelFrom = SyncKind::None;
};

/// A core queue: one stream's ops in order, on cores [firstCore, firstCore+numCores)
/// of one core pool. Block b of an op in this queue runs on coreOf(queue, b).
struct Queue {
  uint32_t stream = 0;
  uint32_t firstCore = 0;
  uint32_t numCores = 1;
  std::vector<uint32_t> ops;                // indices into SuperKernelPlan::ops
  uint32_t pool = 0;                        // index into MachineModel::pools
};

/// The one block -> core mapping every stage uses (planner, validation,
/// emitters, the cpu executor's unfused launch): block b of an op in queue
/// q runs on core q.firstCore + b % q.numCores.
inline uint32_t coreOf(const Queue& q, uint32_t block) { return q.firstCore + block % q.numCores; }
/// The one kernel_sync rule: a kernel that calls sk_kernel_sync needs all its
/// blocks at once, at most one per core of `cores`.
inline bool kernelSyncFits(uint32_t blockDim, uint32_t cores) { return blockDim <= cores; }

/// An op on another stream that runs beside a fused step instead of splitting
/// it (MachineModel::sideLaunches): its own unfused step, started together
/// with the SuperKernel, ordered with it only by GM words. Its dependencies
/// are data edges, like every other (kernels touch memory only through their
/// arguments), and all of them point backwards in recorded order, so the
/// waits cannot form a cycle.
struct SideLaunch {
  uint32_t step = 0;                        // FusionPlan::steps index of its unfused step (besideStep = this step)
  uint32_t stream = 0;
  /// SuperKernel ops it depends on (it starts once they completed on every
  /// core) and that depend on it (they start once it completed), ascending.
  std::vector<uint32_t> after, before;
};

/// Where a step's runtime scalars come from (SuperKernelPlan::runtimeValues):
/// element `element` of manifest buffer `buffer`, read as `dtype`.
struct RuntimeValue {
  int buffer = -1;
  uint64_t element = 0;
  DType dtype = DType::I64;
  bool operator==(const RuntimeValue&) const = default;
};

struct SuperKernelPlan {
  std::string name;                         // scope name, "#k" suffix after a split
  bool fused = false;                       // false: one unfused op
  std::string scope;
  /// Why this segment ended here (or why the op is unfused); shown in reports.
  std::string endReason;
  Options options;                          // effective (list, then scope options)
  uint32_t numCores = 1;                    // run()'s block_dim
  std::vector<Queue> queues;
  std::vector<PlannedOp> ops;               // a topological order
  std::vector<Edge> edges;
  std::vector<PlanBuffer> buffers;
  /// The distinct sources of the step's runtime scalars, in order of first use
  /// (Bind). A back end whose objects cannot take a value at the call (ascend)
  /// passes their addresses with the launch; an op names them by slot.
  std::vector<RuntimeValue> runtimeValues;
  /// Fused: launches of other streams that run beside this SuperKernel, in
  /// recorded order (their steps follow this one).
  std::vector<SideLaunch> sides;
  /// Unfused: the fused step this op runs beside (-1: it runs on its own, in step order).
  int besideStep = -1;
  /// Unfused: built as the Graph + PDL variant (CompileRequest::graphPdl): the kernel waits for the previous
  /// launch at griddepcontrol.wait and lets the next one start early (cuda; nothing changes elsewhere).
  bool graphPdl = false;
};

struct SyncCounts {
  std::map<SyncKind, uint32_t> edges;       // by kind
  uint32_t barriers = 0;                    // sync_all points emitted
};

/// What the sync cost model (plan/SyncCost.cpp) did, over all steps.
struct SyncModelReport {
  bool on = false;                          // sync-model=on and the target has costs
  std::string costs;                        // "barrier 340 ns, counter 400 ns, flag 380 ns (defaults ...)"
  uint32_t boundaries = 0;                  // op boundaries it turned into a barrier
  uint32_t toBarrier = 0;                   // flag and counter edges those barriers replace
  uint32_t dropped = 0;                     // edges an earlier barrier of the same queue already orders
  uint32_t keptCheaper = 0;                 // boundaries whose edges cost less than a barrier
  uint32_t keptIndependent = 0;             // boundaries where a barrier would also wait for unrelated ops
  uint32_t keptEarlyStart = 0;              // boundaries of early-start ops (their waits overlap the kernel)
};

struct PlanReport {
  uint32_t opsBefore = 0;                   // launches in the op list
  uint32_t launchesAfter = 0;               // steps (SuperKernels + unfused ops)
  uint32_t superKernels = 0;                // fused steps
  uint32_t sideLaunches = 0;                // unfused steps that run beside a SuperKernel
  SyncCounts syncs;
  SyncModelReport syncModel;
  std::vector<std::string> splits;          // "sk1 ended at ops[5] (add_3): <reason>"
  /// One line per collective op (plan/Collectives.cpp): what it is, the step
  /// it runs in, the ops it waits for and the ops that run beside it.
  std::vector<std::string> collectives;
  std::vector<std::string> warnings;
};

struct FusionPlan {
  std::string target = "cpu";
  std::string arch = "native";
  /// The machine it was made for (PlanConfig::machine).
  MachineModel machine = MachineModel::singlePool("cpu", 1);
  std::vector<KernelVariant> variants;
  std::vector<SuperKernelPlan> steps;       // execution order
  PlanReport report;
};

struct PlanConfig {
  /// The target's cores and rules (the back end's static machine model, Backend::machineModel).
  MachineModel machine = MachineModel::singlePool("cpu", 1);
  bool fuse = true;                         // false: every launch its own step (the reference)
};

/// Plan an op list (validated first). `options` is the merged list/CLI option
/// set; scope options apply on top per SuperKernel.
Expected<FusionPlan> planOpList(const OpList& list, const Options& options, const PlanConfig& config);

/// The kernel_sync rule for one planned op in its queue.
inline bool kernelSyncFits(const PlannedOp& op, const Queue& q) {
  return !op.kernelSync || kernelSyncFits(op.blockDim, q.numCores);
}

/// No-hang validation of one SuperKernel: per-core order plus waits acyclic,
/// every wait has a signaller, block counts fit the cores.
Status validatePlan(const SuperKernelPlan& sk);

/// "barrier 340 ns, counter 400 ns, flag 380 ns (<source>)", or "none (...)" when the target has no costs.
std::string describeSyncCosts(const SyncCosts& costs);
/// The sync model's line of the plan report: what it changed and why ("" when it did not run).
std::string describeSyncModel(const SyncModelReport& r);

/// Human-readable report (ops before/after, segments and why they split,
/// edges by sync kind).
std::string formatPlanReport(const FusionPlan& plan);
/// The first element block b of B touches through argument `a` (the "block" partition rule of DESIGN
/// section 3, plan/Ranges.cpp; "all": the argument's first element), for code that addresses a block's
/// slice (the cpu emitter's data preload, which applies the "block" rule to "all" inputs too).
uint64_t blockFirstElement(const BoundArg& a, uint32_t B, uint32_t b);

/// Graphviz DOT: ops as nodes clustered by SuperKernel, edges labelled by sync kind.
std::string planToDot(const FusionPlan& plan);

}  // namespace sk
