// The machine model the planner reads (DESIGN section 9): what cores a
// target has and the rules that differ per target. A back end's Device
// describes its machine with one of these; the planner never names a target.
//
// Cores come in pools ({kind, count}): cpu has one pool of W workers; cuda
// one pool of resident CTAs; ascend a cube pool and a vector pool in a 1:2
// ratio. A SuperKernel's cores are the pools laid out in order (pool p owns
// cores [base(p), base(p) + count)); a queue belongs to one pool; block b of
// an op runs on core coreOf(queue, b) (plan/Plan.h), the one mapping every
// stage uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/frontend/OpList.h"
#include "superkernel/frontend/Options.h"
#include "superkernel/support/Error.h"

namespace sk {

struct CorePool {
  CoreType kind = CoreType::Vector;         // blocks of kernels of this core type run here
  uint32_t count = 1;
  bool operator==(const CorePool&) const = default;
};

/// What one core spends at an op boundary on each kind of cross-core wait, in nanoseconds: what the
/// planner's sync cost model (plan/SyncCost.cpp) compares. Measured per machine by the back end's
/// calibration (Backend::calibrateSync, `sk-compile --calibrate`, cached under the cache directory),
/// overridden by $SK_SYNC_COSTS, else the back end's defaults. All zero: the target has no costs, and the
/// model leaves the correctness rules' choices alone (sync-model=on then changes nothing).
struct SyncCosts {
  double barrierNs = 0;   // a full barrier among the queue's cores (one arrival each on one reused line)
  double counterNs = 0;   // a wait on one producer op's completion counter (a line of its own per producer)
  double flagNs = 0;      // a wait on one producer block's flag set on another core
  /// Where the numbers come from, for the plan report: "defaults (...)", "calibrated <file>", "$SK_SYNC_COSTS".
  std::string source;
  bool known() const { return barrierNs > 0 && counterNs > 0 && flagNs > 0; }
  bool operator==(const SyncCosts&) const = default;
};

/// An option the target parses (one op list serves every target) but does
/// not implement: a non-default value is reported in the plan's warnings.
struct InapplicableOption {
  std::string key;                          // "split-mode"
  std::string why;                          // "the cpu back end runs one code copy per sub-kernel"
};

struct MachineModel {
  std::string target = "cpu";
  std::vector<CorePool> pools = {CorePool{}};
  /// split-mode when the options leave it unset.
  int defaultSplitMode = 1;
  /// preload-code when the options say auto (the default).
  PreloadCode defaultPreloadCode = PreloadCode::PerFunc;
  /// preload-data when the options say auto, and the data preload rule's budget (plan/DataPreload.cpp). The
  /// defaults are cpu's: first-block, 2 KiB of each input's slice (32 cache lines: the first loads of a small
  /// block, nothing when the data is cached already), and lookahead keeps one op ahead (budget 0: the next op's
  /// slices only).
  PreloadData defaultPreloadData = PreloadData::FirstBlock;
  /// Bytes of one input's slice a core prefetches for one op: the start of the slice.
  uint64_t preloadDataSliceBytes = 2048;
  /// lookahead: bytes of later ops' slices a core may prefetch ahead of the op it starts (the next op's
  /// slices always go, whatever their size).
  uint64_t preloadDataLookaheadBytes = 0;
  std::vector<InapplicableOption> inapplicable;
  /// Sync limits (0: none). Flag slots a SuperKernel may use (one per
  /// producer block of a flag edge): edges past the budget fall back to
  /// counters, counted in the plan's warnings.
  uint32_t maxFlagSlots = 0;
  /// Sub-kernels take their scalar arguments and their block count at
  /// compile time (ascend: -DSK_<NAME>=<value>, __SUPER_KERNEL_STATIC_BLOCK_NUM__):
  /// the planner gives each op its own specialised KernelVariant
  /// (plan/Specialize.cpp), so one object never serves two ops that differ
  /// in any of them. false (cpu): scalars are run-time arguments.
  bool staticArguments = false;
  /// With staticArguments: the device passes each launch the addresses of its
  /// runtime scalars' sources (SuperKernelPlan::runtimeValues) and an object
  /// reads one by slot (KernelVariant::runtimeScalars). false: a runtime value
  /// on such a target is bad input naming the op (plan/Specialize.cpp).
  bool runtimeScalars = false;
  /// The device runs launches of other streams beside a SuperKernel, ordered
  /// with it by words in GM (the SuperKernel writes a notify word after the
  /// ops a side launch needs and polls a done word before the ops that need
  /// it; Device::runBeside). With it, an unfused op on a stream the open
  /// SuperKernel does not use becomes a side launch instead of splitting the
  /// scope (plan/Segments.cpp). ascend: yes; cpu and cuda: no.
  bool sideLaunches = false;
  /// Inside a SuperKernel each block of an op runs on a core of its own (ascend: a sub-kernel's
  /// GetBlockIdx() is the core it runs on, so a core cannot run a second block of it): an op with more
  /// blocks than its pool has cores in the SuperKernel runs unfused, a fusion break with that reason
  /// (plan/Segments.cpp), and its launch runs its blocks in waves. false (cpu, cuda): a core runs several
  /// blocks of an op in turn (coreOf, plan/Plan.h).
  bool oneBlockPerCore = false;
  /// The source of the kernel collectives lower to (docs/COLLECTIVES.md,
  /// plan/Collectives.cpp): one entry `sk_collective_kernel` taking (in, out, n_in,
  /// n_out, desc, ranks, tag) with its element type as the macro COLL_T. Empty:
  /// the target has no collectives, and a list with one is an error naming it.
  std::string collectiveSource;
  /// The element types the target's reducing collectives (all_reduce, reduce_scatter) handle; empty: every
  /// type the op list allows. A list reducing another is refused at plan time, naming the op, with
  /// collectiveReduceWhy (what the target's library supports, and where that is stated).
  std::vector<DType> collectiveReduceDTypes;
  std::string collectiveReduceWhy;
  /// The sync cost model's inputs (SyncCosts; unknown: the model changes nothing on this target).
  SyncCosts syncCosts;
  /// How messages name the cores: "the <owner>'s N <noun>" (cpu: "the
  /// executor's 4 workers"; default "the target's 4 cores"). unitNoun names
  /// the deviceCores() units ("AI Cores" on ascend).
  std::string coreOwner = "target";
  std::string coreNoun = "cores";
  std::string unitNoun = "cores";

  /// One pool of `cores` cores that runs every core type (cpu, cuda).
  static MachineModel singlePool(std::string target, uint32_t cores, std::string owner = "target",
                                 std::string noun = "cores");
  /// "the executor's 4 workers"
  std::string describeCores(uint32_t n) const;

  /// The machine a SuperKernel with debug-core-num=n (> 0) runs on: one pool
  /// of n cores; with several pools, n cores of the first pool (ascend: AI
  /// Cores, i.e. cube cores) and the other pools scaled in their ratio (at
  /// least 1 core each). Callers check n against deviceCores() first.
  MachineModel withDebugCoreNum(uint32_t n) const;
  /// The machine's size in DeviceOptions::cores terms: every core of a
  /// one-pool machine (cpu: workers), else the first pool's cores (ascend: AI
  /// Cores). What re-creates this machine (the cache's replay records it) and
  /// the largest debug-core-num.
  uint32_t deviceCores() const;
  /// How many of the deviceCores() units (ascend: AI Cores, each one cube
  /// and two vector cores; elsewhere: cores) `blocks` blocks of pool `pool`
  /// occupy, block b on core b of its pool: what a launch holds of the device
  /// while it runs.
  uint32_t unitsHeld(uint32_t pool, uint32_t blocks) const;
  uint32_t totalCores() const;
  uint32_t poolBase(uint32_t pool) const;
  /// The pool that runs blocks of a `type` kernel: the only pool of a
  /// single-pool machine, else the pool of that kind. BadInput naming the
  /// type and the target when there is none (e.g. mix on a split machine
  /// until the back end models it).
  Expected<uint32_t> poolFor(CoreType type) const;
  /// BadInput when the model is unusable (no pool, a pool with no cores).
  Status check() const;
};

}  // namespace sk
