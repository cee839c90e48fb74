// The target-neutral sync layout of one SuperKernel step: what every emitter
// needs and none should decide on its own. From the plan's edges it
// allocates completion-counter slots (one per producer of a counter or event
// edge), flag slots (one per block of a producer of a flag edge) and
// kernel_sync slots, deduplicates each consumer's waits (two edges from one
// producer need one wait; a counter wait covers any flag wait), collects
// the variants the step references, and writes the step's manifest. An
// emitter only prints this in its own language.
//
// Before any of that it checks the step's shape (checkStepShape): indices,
// queues and edge kinds the printed code relies on, so a planner bug is an
// Internal error naming the op instead of generated code that hangs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"

namespace sk {

/// One wait of a consumer op on one producer.
struct SyncWait {
  enum class Kind : uint8_t {
    Counter,    // all producer blocks: sk_done[counter] >= blocks x epoch
    FlagOne,    // consumer block b waits for producer block b's flag
    FlagTable,  // consumer block b waits for the producer blocks ranges[b]
  };
  Kind kind = Kind::Counter;
  uint32_t producer = 0;                    // op index
  uint32_t counter = 0;                     // Counter: slot
  uint32_t flagBase = 0;                    // Flag*: first flag slot of the producer
  int table = -1;                           // FlagTable: index into SyncLayout::flagTables
  uint64_t blocks = 0;                      // Counter: producer blocks
  const Edge* edge = nullptr;               // the edge this wait stands for (names, kinds)
};

/// The per-consumer-block producer ranges of a FlagTable wait.
struct FlagTable {
  uint32_t consumer = 0;                    // op index
  uint32_t producer = 0;
  const std::vector<std::pair<uint32_t, uint32_t>>* ranges = nullptr;  // size = consumer blockDim
};

/// A sync point of a machine whose cross-core primitive is pool-wide (ascend: SetNextTaskStart on the
/// signalling pools' cores, WaitPreTaskEnd on the waiting ones): before op c, the cores of every pool in
/// `pools` signal that their earlier ops completed and the cores of those pools and of c's pool wait for it.
/// Per-edge counters and flags do not exist there, so the kind of a non-local edge does not matter; which
/// edges are local is the planner's decision (SyncKind::Local), never the emitter's.
struct PoolSyncPoint {
  uint32_t pools = 0;              // bit p: pool p's cores signal; 0: no sync point before the op
  std::vector<std::string> why;    // the edges and early-start needs that put it there, for comments
};

/// poolSyncPoints' view of an op and an edge: a step the planner laid out (layoutPoolSync) or one built by hand.
struct PoolSyncOp {
  std::string name;
  uint32_t pool = 0;               // index into MachineModel::pools (< 32)
  /// The op signals and waits early start itself (PlannedOp::earlyStart): the point before the next op must
  /// complete its signal, and the op's own wait needs a point before it.
  bool ownEarlyStart = false;
};
struct PoolSyncEdge {
  uint32_t producer = 0, consumer = 0;  // op indices
  bool local = false;                    // program order on one core orders it
  std::string what;                      // "consumer <- producer (RAW on buf)"
};

/// The sync points before each op (size ops.size()). A point is placed before an op with a non-local edge
/// from a producer whose completion the op's pool does not know yet; after a point, the cores of each
/// signalling pool and of the op's pool know every earlier op of the signalling pools completed, so a later
/// edge from those ops needs no second point. With a full barrier after every op (debug-sync-all), every
/// core knows everything before it. Errors: an index out of range, a pool >= 32.
Expected<std::vector<PoolSyncPoint>> poolSyncPoints(const std::vector<PoolSyncOp>& ops,
                                                    const std::vector<PoolSyncEdge>& edges,
                                                    bool barrierAfterEveryOp);

struct SyncLayout {
  std::vector<int> counterOf;               // per op: its completion counter slot, -1 none
  std::vector<int> flagBaseOf;              // per op: its first flag slot, -1 none
  std::vector<int> kernelSyncOf;            // per op: its kernel_sync slot, -1 none
  uint32_t numCounters = 0, numFlags = 0, numKernelSyncs = 0;
  std::vector<std::vector<SyncWait>> waits; // per consumer op, deduplicated, in edge order
  std::vector<FlagTable> flagTables;        // in the order the waits created them
  std::vector<uint32_t> variants;           // variants the step calls or preloads (sorted, unique)

  bool signals(size_t op) const { return counterOf[op] >= 0 || flagBaseOf[op] >= 0; }
  bool anyWaits() const;
  bool anySignals() const;
};

/// The shape checks the printed code relies on (validatePlan proves no
/// hang; these catch indices that would make the code wrong).
Status checkStepShape(const FusionPlan& plan, const SuperKernelPlan& sk);

/// checkStepShape, then the layout of `sk`.
Expected<SyncLayout> layoutSync(const FusionPlan& plan, const SuperKernelPlan& sk);

/// checkStepShape, then the pool-wide sync points before each op of `sk` (poolSyncPoints over its queues'
/// pools; an edge of kind None or Local needs none), for targets whose only cross-core primitive spans a
/// pool. Apart from layoutSync: the other targets never pay for it.
Expected<std::vector<PoolSyncPoint>> layoutPoolSync(const FusionPlan& plan, const SuperKernelPlan& sk);

/// The step's manifest, one line of stable JSON: {"format":"superkernel.manifest",
/// "version":1,"name","target","num_cores","options","fused","buffers":[{"name",
/// "dtype","elements"}],"ops":[{"name","symbol","block_dim","queue"}],"variants":[..]}
std::string stepManifest(const FusionPlan& plan, const SuperKernelPlan& sk, std::string_view target,
                         const SyncLayout& layout);

/// True when ranges[b] == {b, b} for every b (a one-to-one flag wait).
bool isIdentityRanges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);

}  // namespace sk
