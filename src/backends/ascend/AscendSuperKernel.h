// The ascend SuperKernel printer, for both targets (ascend builds its text with bisheng, ascend-sim with
// the host compiler): one fused AscendStep -> one Ascend C SuperKernel, in the
// shape of the reference generator (DESIGN section 9). What it prints and why:
//  - KERNEL_TASK_TYPE_DEFAULT from the pools the ops use: cube and vector ->
//    MIX_AIC_1_2, vector only -> MIX_AIV_1_0, cube only -> MIX_AIC_1_0 (the
//    MIX_ forms: cross-core flags need them);
//  - each op called on its pool's cores whose block index is below its block
//    dim (`if ASCEND_IS_AIV { if (AscendC::GetBlockIdx() < B) ... }`), through
//    the split-mode copy `get_coreid() % N` picks;
//  - preload(copy, units) of the next op on the cores that will run it, sized
//    from the variant's code bytes in 2 KiB units (preload-code);
//  - the step's sync points (AscendStep::syncBefore: the planner's, laid out
//    by codegen's poolSyncPoints; this file decides none), each printed as
//    the early-start primitives: the producers' pools P and the consumer's
//    pool q give the early-start config
//    (P << 2 | q, 0 cube, 1 vector, 2 both); cores of P signal with
//    SetNextTaskStartImpl and every core involved waits with
//    WaitPreTaskEndImpl<config> (cube->cube and vector->vector: all-core
//    flags; cube<->vector: the mode-2 cross-core flags). Edges program order
//    already covers (the planner's Local: same pool, block b on core b) get
//    nothing;
//  - early-start 1: a kernel that declares early start calls
//    SetNextTaskStart / WaitPreTaskEnd itself, so the SuperKernel completes
//    them only on the pool's cores that do not run it (the layout always places a
//    sync point right after / before it); early-start 2: the SuperKernel does
//    both for every core; early-start 0: a full SyncAll of the task type;
//  - more than kMaxDirectBuffers buffers: the entry takes one GM table of
//    their addresses and each call reads its arguments from it;
//  - feed-sync-all: a kernel_sync op (its kernel calls SyncAll<true>, a
//    barrier over every vector core of the launch) on fewer vector cores than
//    the SuperKernel has: the others call SyncAll<true> as many times as the
//    kernel declares ("sync_all_calls"), right after the op's call; with
//    feed-sync-all=0 such an op is BadInput (it would hang);
//  - debug-sync-all: a full SyncAll after every op; func-align: the entry's
//    alignment; profiling: a begin/end record per op and sync point per core
//    into an extra GM buffer (the entry's last parameter);
//  - side launches (ops of other streams the plan runs beside the
//    SuperKernel: tiling done elsewhere, weight prefetch): an extra GM buffer
//    sk_notify of 64-byte words. After the last op a side launch needs in a
//    pool, every core of that pool sets its own notify word (after
//    pipe_barrier(PIPE_ALL), so the op's writes reached GM); before the first
//    op of a pool that needs the side launch, every core of that pool polls
//    its done word (dcci per read). Per-core words instead of the reference
//    generator's sync + one word from block 0: no core waits for another to
//    signal, and program order on each core covers its earlier and later ops;
//  - stream-fusion=1: separate cube and vector programs (<entry>_aic /
//    <entry>_aiv), each holding only its pool's calls and its side of the sync
//    points, so the two core types advance independently between the data
//    edges that need them (the sync points are the same ones, in the same
//    order, so the two programs cannot wait on each other in a cycle).
#pragma once

#include <cstdint>
#include <string>

#include "superkernel/support/Error.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendStep.h"

namespace sk::ascend {

/// Buffers a SuperKernel takes as parameters; a step with more takes one GM
/// table of their 64-bit addresses instead (LaunchDescriptor::bufferTable). A
/// decode stack has thousands of buffers: no launch passes that many
/// parameters (the simulator passes at most 64, standing in for the device's
/// fixed-size argument area, whose real size was not checked on a device).
constexpr size_t kMaxDirectBuffers = 32;

/// A fused step's SuperKernel: its text, and its launch descriptor with the
/// keys the text fixes, filled by the printer as it lays the text out (so
/// they are stated in one place): fused=1, entry, split, table,
/// profile_bytes, notify_words and the side launches' words. The keys every
/// step has, fused or not (type, block_dim, buffers, objects, runtime), are
/// left to the emitter (AscendEmitter.cpp), which adds them.
struct AscendSource {
  std::string text;
  LaunchDescriptor launch;
  /// Not launch keys (tests and reports read them): the sync points printed,
  /// and with profiling the records per core (16 bytes each) in the profile
  /// buffer, launch.profileBytes in all.
  uint32_t syncPoints = 0;
  uint32_t profileSlots = 0;
};

/// The SuperKernel of a fused step.
Expected<AscendSource> emitAscend(const AscendStep& step);

/// The identifier the SuperKernel of step `name` is exported as.
std::string ascendEntryName(const std::string& stepName);

/// Preload units (2 KiB each) of a variant of `codeBytes` for a pool.
int64_t preloadUnits(PreloadCode mode, uint64_t codeBytes, Pool pool);

}  // namespace sk::ascend
