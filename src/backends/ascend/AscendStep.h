// One step of a FusionPlan in the ascend back end's terms, for both targets (DESIGN section 9):
// which pool (cube or vector cores) each op runs on, the objects to compile
// (sub-kernel scalars are compile-time macros, so a variant plus its op's
// scalar values is one object; a runtime scalar is a macro reading a slot of
// the launch instead, and the step lists each slot's source), the
// SuperKernel's task type and block dim, and the sync points before its ops.
//
// Guarantee: the sync points are the planner's (layoutPoolSync's pool-wide
// points over its Local verdicts); nothing here decides which edge needs a
// sync. That is sound because the plan places blocks where the launch runs
// them, which is checked: a fused step's plan is made for ascend's two pools
// (cube, vector), each pool used has one queue, and that queue's cores are
// the launch's cores of the pool, so block b of an op runs on core b of its
// pool in the plan (coreOf) as on the device (GetBlockIdx).
//
// Kernels are the planner's resolved declarations (a builtin's are
// kernels/ascend/<name>.json's: its Ascend C source, core type and early
// start); other kernels must be Ascend C already.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"
#include "backends/ascend/AscendTypes.h"

namespace sk::ascend {

enum class Pool : uint8_t { Cube = 0, Vector = 1 };
const char* poolName(Pool p);

/// One sub-kernel object: a variant compiled with one op's scalar values.
struct AscendObject {
  /// Its entry after -D<entry>=<symbol>: the variant's symbol, plus (when there are scalars, or inside a
  /// SuperKernel) a hash of everything else its compile depends on — scalar values, block count, whether
  /// its own early-start points are honoured — so one symbol is always one object.
  std::string symbol;
  std::filesystem::path source;
  std::vector<std::pair<std::string, std::string>> defines;  // macros, scalars (SK_<NAME>), entry rename
  Pool pool = Pool::Vector;
  bool earlyStart = false;  // the kernel declares it: calls SetNextTaskStart / WaitPreTaskEnd itself
  uint64_t codeBytes = 0;   // of the variant (driver-measured; 0 unknown)
  uint32_t variant = 0;     // index into FusionPlan::variants
};

struct AscendArg {
  int buffer = -1;          // index into AscendStep::buffers
  uint64_t byteOffset = 0;  // views
};

/// A runtime scalar's source (plan RuntimeValue) in launch terms: the device
/// passes the address buffers[buffer] + byteOffset as its slot.
struct AscendRuntimeValue {
  int buffer = -1;          // index into AscendStep::buffers
  uint64_t byteOffset = 0;
  DType dtype = DType::I64;
};

struct AscendOp {
  std::string name;
  uint32_t object = 0;
  uint32_t blockDim = 1;
  Pool pool = Pool::Vector;
  uint32_t stream = 0;
  std::vector<AscendArg> args;  // buffer parameters in declared order
  /// Runtime scalars: (parameter, slot of AscendStep::runtimeValues), read by the sub-kernel when it runs
  /// (its object defines SK_<NAME> as the slot's read). Such an op never honours its own early start.
  std::vector<std::pair<std::string, uint32_t>> runtimeScalars;
  /// early-start 1 and the kernel declares it: its own SetNextTaskStart /
  /// WaitPreTaskEnd are honoured (the SuperKernel completes them for the
  /// pool's other cores).
  bool ownEarlyStart = false;
  /// The kernel syncs its own blocks (kernel_sync): it calls AscendC::SyncAll<true>, the barrier over
  /// every vector core of the launch, `syncAllCalls` times per launch (its declaration's
  /// "sync_all_calls"; vector sub-kernels only). Inside a SuperKernel wider than the op, the pool's
  /// other cores must call it as often (feed-sync-all).
  bool kernelSync = false;
  uint32_t syncAllCalls = 0;
  /// A collective (the planner's sk.collective.<dtype> launch): its group's rank mask, else 0.
  uint64_t hcclGroup = 0;
};

/// A launch of another stream beside the SuperKernel (plan SideLaunch), in
/// the emitter's terms: program order on a core orders that core's ops, so
/// per pool only the last op the side launch needs and the first op that
/// needs it matter (-1: none in that pool).
struct AscendSide {
  std::string name;
  uint32_t stream = 0;
  int notifyAfter[2] = {-1, -1};  // by Pool: its cores each set a notify word after this op
  int waitBefore[2] = {-1, -1};   // by Pool: its cores wait for the side launch's done word before this op
};

struct AscendStep {
  std::string name;
  bool fused = false;
  Options options;
  KernelType type = KernelType::MixAic1_2;
  /// The launch's block dim: AI Cores (mix and cube types), vector cores (MIX_AIV_1_0 / AIV_ONLY).
  uint32_t blockDim = 1;
  std::vector<AscendOp> ops;
  /// Fused: before each op, the pool-wide sync point (bit 0 cube, bit 1 vector: Pool's value) or none.
  std::vector<PoolSyncPoint> syncBefore;
  std::vector<PlanBuffer> buffers;
  std::vector<AscendObject> objects;
  std::vector<AscendSide> sides;  // fused: launches of other streams beside it, in plan order
  /// The sources of the ops' runtime scalars, by slot (at most kMaxRuntimeValues): every launch of the
  /// step passes their addresses (launch descriptor `runtime=`).
  std::vector<AscendRuntimeValue> runtimeValues;
  /// Target ascend: the collectives' groups (rank masks, distinct, plan order), whose HCCL contexts the
  /// entry takes as one more GM argument (sk_hccl) and passes each collective sub-kernel as its last
  /// argument (launch descriptor hccl=). Empty on ascend-sim, whose collective kernel takes none.
  std::vector<uint64_t> hcclGroups;

  /// Cores of a pool in this launch.
  uint32_t poolCores(Pool p) const;
  /// feed-sync-all. A kernel_sync op calls AscendC::SyncAll<true>: a barrier over every vector core of the
  /// launch, which inside a SuperKernel is every vector core of the SuperKernel, not only the op's blocks.
  /// The vector cores that run no block of it must call SyncAll as often, at the same place in program
  /// order, or its cores wait forever. How many such cores (0: the op covers its pool, or no kernel_sync).
  uint32_t coresToFeed(const AscendOp& op) const;
};

/// The ascend view of plan.steps[step]. BadInput: a kernel with no Ascend C
/// source, a mix sub-kernel, a cube kernel_sync sub-kernel (SyncAll needs
/// vector cores), a kernel_sync op that other vector cores of its
/// SuperKernel must feed whose kernel does not declare "sync_all_calls", a
/// step with more than kMaxRuntimeValues distinct runtime values, a runtime
/// scalar of a dtype the simulator cannot read (runtimeScalarMacro).
/// Internal: a fused step whose layout is not the launch's (planned for
/// another machine's pools, a second queue in a pool, an op wider than its
/// queue's cores: the planner's oneBlockPerCore rules prevent each).
Expected<AscendStep> makeAscendStep(const FusionPlan& plan, size_t step);

/// What a fused step must hold to be printed, whoever made it: makeAscendStep calls it on the steps it
/// makes, emitAscend on every step it is given (the emitter tests build theirs by hand). Internal: a
/// runtime scalar's slot that is not one of the step's, an op that starts early itself while it reads a
/// runtime value (it must read it after its waits), an op with no blocks or more than its pool's cores,
/// a cube kernel_sync op, a kernel_sync op to feed with no SyncAll count. BadInput: a kernel_sync op on
/// fewer vector cores than the SuperKernel has without feed-sync-all (its SyncAll would wait forever).
Status validateAscendStep(const AscendStep& step);

}  // namespace sk::ascend
