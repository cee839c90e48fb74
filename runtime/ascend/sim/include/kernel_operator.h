// The Ascend C subset superkernel's ascend back end generates and its builtin
// kernels use, implemented for the host simulator (DESIGN section 9). A source
// that compiles with bisheng against the CANN kernel_operator.h compiles here
// unchanged with clang++ -I runtime/ascend/sim/include: the names, signatures
// and flag ids follow the public Ascend C API; the bodies are this project's.
//
// What is simulated, and why it is faithful enough to catch wrong syncs:
//  - each core (AIC or AIV) is a host thread; `if ASCEND_IS_AIC { ... }` picks
//    the branch of the core the thread simulates (on hardware the two are
//    separate compilations, here one object serves both);
//  - ffts_cross_core_sync / wait_flag_dev have the hardware's semantics: a
//    4-bit counter per (core, flag id 0..15); mode 0 increments the flag on
//    every core of the caller's type once all of them have set it; mode 1 on
//    both AIVs of one AI Core once both have set it; mode 2 from an AIC
//    increments its AIVs, from the AIVs (all of them) increments their AIC.
//    A wait nobody can satisfy is a deadlock error, a counter past 15 is an
//    overflow error, and a count still pending when the launch ends is an
//    error: so a missing, extra or misplaced flag never passes silently;
//  - SyncAll, SetNextTaskStart and WaitPreTaskEnd are built from those two
//    primitives exactly as the hardware library builds them, so their flags
//    interact with the generated code's own flags as they would on a device;
//  - GM is host memory (GM_ADDR is a plain pointer); dcci is a fence;
//  - the vector programming model (below) is in one header per concern, under the names of CANN's headers,
//    included at the end: kernel_common.h (types, positions, events), kernel_tensor.h (GlobalTensor,
//    LocalTensor), kernel_tpipe.h (TPipe, TQue / TQueBind, TBuf), kernel_operator_sync_intf.h (SetFlag /
//    WaitFlag), kernel_operator_data_copy_intf.h (DataCopy, DataCopyPad) and kernel_operator_vec_*_intf.h
//    (binary, unary, vconv, gather, reduce). Their checks are the simulator's, compiled once into its
//    library (runtime/ascend/sim/src/VectorChecker.cpp) and reached through the core's ops
//    (superkernel/ascend/vector_state.h says why). No cube instruction, L1 or L0 is modelled.
//
// The vector programming model: what is modelled, and why (docs/ASCEND.md "Writing a sub-kernel" says the
// same for kernel authors):
//  - The UB: 192 KiB per vector core (Atlas A2 vector core), one per simulated core thread, filled with
//    0xFF bytes (NaN as f32 / f16) when the core first builds a TPipe, so a read of data nobody wrote is
//    visible as NaN rather than as a lucky zero. TPipe::InitBuffer allocates from it; an allocation past
//    the capacity fails the launch naming the sizes. Cube cores have no UB here (no L1 / L0 model).
//  - The pipes: every instruction is executed at once, in program order, on the host. What a device
//    would do concurrently is modelled as *ordering knowledge*: each pipe (S, V, MTE2, MTE3) counts the
//    instructions it issued, and knows how far each other pipe has got only through a sync that tells it
//    (SetFlag/WaitFlag, EnQue/DeQue, FreeTensor/AllocTensor, PipeBarrier<PIPE_ALL>). Every UB access is
//    checked per 32-byte block against the last writer and the last reader of each other pipe: an access
//    that no sync orders after a conflicting one (read after write, write after read or write) is the
//    race a device would run into, and fails the launch naming both pipes and the HardEvent that would
//    order them. GM written by MTE3 and read back by MTE2 or the scalar unit on the same core is checked
//    the same way. So a missing WaitFlag is an error, not a silently right answer.
//  - Queues: each buffer of a TQue is Free, Allocated, Queued or Dequeued; AllocTensor with every buffer
//    in use, EnQue past the queue depth, DeQue of an empty queue, FreeTensor twice or of a queued tensor,
//    and a LocalTensor used after its EnQue (it belongs to the queue until DeQue) or its FreeTensor are
//    errors. A TPipe ending with tensors still allocated or queued, or with a SetFlag nobody waited for,
//    is an error.
//  - Early start: a sub-kernel's own WaitPreTaskEnd must come before its first GM transfer (MTE2 copy-in,
//    MTE3 copy-out, GlobalTensor Get/SetValue) and its own SetNextTaskStart after its last: checked on the
//    TPipe alive when they are called, in fused and unfused launches alike. SetNextTaskStart<AIV_PIPE>
//    is issued on AIV_PIPE (default PIPE_MTE3): that pipe must already know every MTE2 and MTE3 transfer
//    completed, or the next sub-kernel could start while this one still moves data.
// Not modelled: timing and throughput (instructions take no time; the simulator says nothing about
// performance), bank conflicts, the level-0 mask / repeat forms of the vector instructions, the cube unit
// (L1, L0A/B/C, MTE1, Mmad, Fixpipe), atomics, and the exact reduction order of the hardware (ReduceSum
// sums each 256-byte repeat in order, then the repeats in order, in f32).
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_H

#include "superkernel/ascend/sim_core.h"
#include "superkernel/ascend/vector_check.h"

// What this header defines is hidden, as sim_core.h explains.
#pragma GCC visibility push(hidden)

// ---- system registers ----------------------------------------------------
inline int64_t get_block_idx() { return sk_ascend_sim_core_now()->block_idx; }
inline int64_t get_block_num() { return sk_ascend_sim_core_now()->block_num; }
inline int64_t get_subblockid() { return sk_ascend_sim_core_now()->subblock_id; }
inline int64_t get_subblockdim() { return sk_ascend_sim_core_now()->subblock_dim; }
inline int64_t get_coreid() { return sk_ascend_sim_core_now()->core_id; }
inline void set_ffts_base_addr(uint64_t) {}  // the simulator's flags need no base address

// ---- runtime scalars ---------------------------------------------------------
// A scalar parameter declared "runtime" whose argument names a buffer element is compiled as
// -DSK_<NAME>=SK_ASCEND_RUNTIME_<T>_<k>: a read of slot k of the launch (the element's address, which the
// device passes with every launch; sim_abi.h runtime_values), as the parameter's C type T, each time the
// expression is evaluated. The object never holds the value, so one object serves every value. Kernels use
// SK_<NAME> only in expressions (never in #if). T: I32 int32_t, I64 int64_t, U32 uint32_t, U64 uint64_t,
// F32 float, F64 double; k < SK_ASCEND_SIM_MAX_RUNTIME_VALUES (16). A slot the launch did not pass fails it.
template <typename T>
inline T sk_ascend_sim_runtime_value(uint32_t slot) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  if (slot >= c->runtime_count || c->runtime_values == nullptr || c->runtime_values[slot] == nullptr) {
    c->ops->trap(c, "a runtime scalar's slot was not passed by the launch");
    return T();
  }
  return *static_cast<const T*>(c->runtime_values[slot]);
}
#define SK_ASCEND_RUNTIME_VALUE(type, slot) (::sk_ascend_sim_runtime_value<type>(slot##u))
// A runtime scalar the simulator cannot read (slot 16 or later, a dtype with no macro): only in an object of
// a step the back end refuses when it emits it (such an object is never linked); a read traps.
inline int64_t sk_ascend_sim_runtime_invalid() {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->trap(c, "a runtime scalar with no slot macro (more than 16 slots or an unsupported dtype)");
  return 0;
}
#define SK_ASCEND_RUNTIME_INVALID (::sk_ascend_sim_runtime_invalid())
#define SK_ASCEND_RUNTIME_I32_0 SK_ASCEND_RUNTIME_VALUE(int32_t, 0)
#define SK_ASCEND_RUNTIME_I32_1 SK_ASCEND_RUNTIME_VALUE(int32_t, 1)
#define SK_ASCEND_RUNTIME_I32_2 SK_ASCEND_RUNTIME_VALUE(int32_t, 2)
#define SK_ASCEND_RUNTIME_I32_3 SK_ASCEND_RUNTIME_VALUE(int32_t, 3)
#define SK_ASCEND_RUNTIME_I32_4 SK_ASCEND_RUNTIME_VALUE(int32_t, 4)
#define SK_ASCEND_RUNTIME_I32_5 SK_ASCEND_RUNTIME_VALUE(int32_t, 5)
#define SK_ASCEND_RUNTIME_I32_6 SK_ASCEND_RUNTIME_VALUE(int32_t, 6)
#define SK_ASCEND_RUNTIME_I32_7 SK_ASCEND_RUNTIME_VALUE(int32_t, 7)
#define SK_ASCEND_RUNTIME_I32_8 SK_ASCEND_RUNTIME_VALUE(int32_t, 8)
#define SK_ASCEND_RUNTIME_I32_9 SK_ASCEND_RUNTIME_VALUE(int32_t, 9)
#define SK_ASCEND_RUNTIME_I32_10 SK_ASCEND_RUNTIME_VALUE(int32_t, 10)
#define SK_ASCEND_RUNTIME_I32_11 SK_ASCEND_RUNTIME_VALUE(int32_t, 11)
#define SK_ASCEND_RUNTIME_I32_12 SK_ASCEND_RUNTIME_VALUE(int32_t, 12)
#define SK_ASCEND_RUNTIME_I32_13 SK_ASCEND_RUNTIME_VALUE(int32_t, 13)
#define SK_ASCEND_RUNTIME_I32_14 SK_ASCEND_RUNTIME_VALUE(int32_t, 14)
#define SK_ASCEND_RUNTIME_I32_15 SK_ASCEND_RUNTIME_VALUE(int32_t, 15)
#define SK_ASCEND_RUNTIME_I64_0 SK_ASCEND_RUNTIME_VALUE(int64_t, 0)
#define SK_ASCEND_RUNTIME_I64_1 SK_ASCEND_RUNTIME_VALUE(int64_t, 1)
#define SK_ASCEND_RUNTIME_I64_2 SK_ASCEND_RUNTIME_VALUE(int64_t, 2)
#define SK_ASCEND_RUNTIME_I64_3 SK_ASCEND_RUNTIME_VALUE(int64_t, 3)
#define SK_ASCEND_RUNTIME_I64_4 SK_ASCEND_RUNTIME_VALUE(int64_t, 4)
#define SK_ASCEND_RUNTIME_I64_5 SK_ASCEND_RUNTIME_VALUE(int64_t, 5)
#define SK_ASCEND_RUNTIME_I64_6 SK_ASCEND_RUNTIME_VALUE(int64_t, 6)
#define SK_ASCEND_RUNTIME_I64_7 SK_ASCEND_RUNTIME_VALUE(int64_t, 7)
#define SK_ASCEND_RUNTIME_I64_8 SK_ASCEND_RUNTIME_VALUE(int64_t, 8)
#define SK_ASCEND_RUNTIME_I64_9 SK_ASCEND_RUNTIME_VALUE(int64_t, 9)
#define SK_ASCEND_RUNTIME_I64_10 SK_ASCEND_RUNTIME_VALUE(int64_t, 10)
#define SK_ASCEND_RUNTIME_I64_11 SK_ASCEND_RUNTIME_VALUE(int64_t, 11)
#define SK_ASCEND_RUNTIME_I64_12 SK_ASCEND_RUNTIME_VALUE(int64_t, 12)
#define SK_ASCEND_RUNTIME_I64_13 SK_ASCEND_RUNTIME_VALUE(int64_t, 13)
#define SK_ASCEND_RUNTIME_I64_14 SK_ASCEND_RUNTIME_VALUE(int64_t, 14)
#define SK_ASCEND_RUNTIME_I64_15 SK_ASCEND_RUNTIME_VALUE(int64_t, 15)
#define SK_ASCEND_RUNTIME_U32_0 SK_ASCEND_RUNTIME_VALUE(uint32_t, 0)
#define SK_ASCEND_RUNTIME_U32_1 SK_ASCEND_RUNTIME_VALUE(uint32_t, 1)
#define SK_ASCEND_RUNTIME_U32_2 SK_ASCEND_RUNTIME_VALUE(uint32_t, 2)
#define SK_ASCEND_RUNTIME_U32_3 SK_ASCEND_RUNTIME_VALUE(uint32_t, 3)
#define SK_ASCEND_RUNTIME_U32_4 SK_ASCEND_RUNTIME_VALUE(uint32_t, 4)
#define SK_ASCEND_RUNTIME_U32_5 SK_ASCEND_RUNTIME_VALUE(uint32_t, 5)
#define SK_ASCEND_RUNTIME_U32_6 SK_ASCEND_RUNTIME_VALUE(uint32_t, 6)
#define SK_ASCEND_RUNTIME_U32_7 SK_ASCEND_RUNTIME_VALUE(uint32_t, 7)
#define SK_ASCEND_RUNTIME_U32_8 SK_ASCEND_RUNTIME_VALUE(uint32_t, 8)
#define SK_ASCEND_RUNTIME_U32_9 SK_ASCEND_RUNTIME_VALUE(uint32_t, 9)
#define SK_ASCEND_RUNTIME_U32_10 SK_ASCEND_RUNTIME_VALUE(uint32_t, 10)
#define SK_ASCEND_RUNTIME_U32_11 SK_ASCEND_RUNTIME_VALUE(uint32_t, 11)
#define SK_ASCEND_RUNTIME_U32_12 SK_ASCEND_RUNTIME_VALUE(uint32_t, 12)
#define SK_ASCEND_RUNTIME_U32_13 SK_ASCEND_RUNTIME_VALUE(uint32_t, 13)
#define SK_ASCEND_RUNTIME_U32_14 SK_ASCEND_RUNTIME_VALUE(uint32_t, 14)
#define SK_ASCEND_RUNTIME_U32_15 SK_ASCEND_RUNTIME_VALUE(uint32_t, 15)
#define SK_ASCEND_RUNTIME_U64_0 SK_ASCEND_RUNTIME_VALUE(uint64_t, 0)
#define SK_ASCEND_RUNTIME_U64_1 SK_ASCEND_RUNTIME_VALUE(uint64_t, 1)
#define SK_ASCEND_RUNTIME_U64_2 SK_ASCEND_RUNTIME_VALUE(uint64_t, 2)
#define SK_ASCEND_RUNTIME_U64_3 SK_ASCEND_RUNTIME_VALUE(uint64_t, 3)
#define SK_ASCEND_RUNTIME_U64_4 SK_ASCEND_RUNTIME_VALUE(uint64_t, 4)
#define SK_ASCEND_RUNTIME_U64_5 SK_ASCEND_RUNTIME_VALUE(uint64_t, 5)
#define SK_ASCEND_RUNTIME_U64_6 SK_ASCEND_RUNTIME_VALUE(uint64_t, 6)
#define SK_ASCEND_RUNTIME_U64_7 SK_ASCEND_RUNTIME_VALUE(uint64_t, 7)
#define SK_ASCEND_RUNTIME_U64_8 SK_ASCEND_RUNTIME_VALUE(uint64_t, 8)
#define SK_ASCEND_RUNTIME_U64_9 SK_ASCEND_RUNTIME_VALUE(uint64_t, 9)
#define SK_ASCEND_RUNTIME_U64_10 SK_ASCEND_RUNTIME_VALUE(uint64_t, 10)
#define SK_ASCEND_RUNTIME_U64_11 SK_ASCEND_RUNTIME_VALUE(uint64_t, 11)
#define SK_ASCEND_RUNTIME_U64_12 SK_ASCEND_RUNTIME_VALUE(uint64_t, 12)
#define SK_ASCEND_RUNTIME_U64_13 SK_ASCEND_RUNTIME_VALUE(uint64_t, 13)
#define SK_ASCEND_RUNTIME_U64_14 SK_ASCEND_RUNTIME_VALUE(uint64_t, 14)
#define SK_ASCEND_RUNTIME_U64_15 SK_ASCEND_RUNTIME_VALUE(uint64_t, 15)
#define SK_ASCEND_RUNTIME_F32_0 SK_ASCEND_RUNTIME_VALUE(float, 0)
#define SK_ASCEND_RUNTIME_F32_1 SK_ASCEND_RUNTIME_VALUE(float, 1)
#define SK_ASCEND_RUNTIME_F32_2 SK_ASCEND_RUNTIME_VALUE(float, 2)
#define SK_ASCEND_RUNTIME_F32_3 SK_ASCEND_RUNTIME_VALUE(float, 3)
#define SK_ASCEND_RUNTIME_F32_4 SK_ASCEND_RUNTIME_VALUE(float, 4)
#define SK_ASCEND_RUNTIME_F32_5 SK_ASCEND_RUNTIME_VALUE(float, 5)
#define SK_ASCEND_RUNTIME_F32_6 SK_ASCEND_RUNTIME_VALUE(float, 6)
#define SK_ASCEND_RUNTIME_F32_7 SK_ASCEND_RUNTIME_VALUE(float, 7)
#define SK_ASCEND_RUNTIME_F32_8 SK_ASCEND_RUNTIME_VALUE(float, 8)
#define SK_ASCEND_RUNTIME_F32_9 SK_ASCEND_RUNTIME_VALUE(float, 9)
#define SK_ASCEND_RUNTIME_F32_10 SK_ASCEND_RUNTIME_VALUE(float, 10)
#define SK_ASCEND_RUNTIME_F32_11 SK_ASCEND_RUNTIME_VALUE(float, 11)
#define SK_ASCEND_RUNTIME_F32_12 SK_ASCEND_RUNTIME_VALUE(float, 12)
#define SK_ASCEND_RUNTIME_F32_13 SK_ASCEND_RUNTIME_VALUE(float, 13)
#define SK_ASCEND_RUNTIME_F32_14 SK_ASCEND_RUNTIME_VALUE(float, 14)
#define SK_ASCEND_RUNTIME_F32_15 SK_ASCEND_RUNTIME_VALUE(float, 15)
#define SK_ASCEND_RUNTIME_F64_0 SK_ASCEND_RUNTIME_VALUE(double, 0)
#define SK_ASCEND_RUNTIME_F64_1 SK_ASCEND_RUNTIME_VALUE(double, 1)
#define SK_ASCEND_RUNTIME_F64_2 SK_ASCEND_RUNTIME_VALUE(double, 2)
#define SK_ASCEND_RUNTIME_F64_3 SK_ASCEND_RUNTIME_VALUE(double, 3)
#define SK_ASCEND_RUNTIME_F64_4 SK_ASCEND_RUNTIME_VALUE(double, 4)
#define SK_ASCEND_RUNTIME_F64_5 SK_ASCEND_RUNTIME_VALUE(double, 5)
#define SK_ASCEND_RUNTIME_F64_6 SK_ASCEND_RUNTIME_VALUE(double, 6)
#define SK_ASCEND_RUNTIME_F64_7 SK_ASCEND_RUNTIME_VALUE(double, 7)
#define SK_ASCEND_RUNTIME_F64_8 SK_ASCEND_RUNTIME_VALUE(double, 8)
#define SK_ASCEND_RUNTIME_F64_9 SK_ASCEND_RUNTIME_VALUE(double, 9)
#define SK_ASCEND_RUNTIME_F64_10 SK_ASCEND_RUNTIME_VALUE(double, 10)
#define SK_ASCEND_RUNTIME_F64_11 SK_ASCEND_RUNTIME_VALUE(double, 11)
#define SK_ASCEND_RUNTIME_F64_12 SK_ASCEND_RUNTIME_VALUE(double, 12)
#define SK_ASCEND_RUNTIME_F64_13 SK_ASCEND_RUNTIME_VALUE(double, 13)
#define SK_ASCEND_RUNTIME_F64_14 SK_ASCEND_RUNTIME_VALUE(double, 14)
#define SK_ASCEND_RUNTIME_F64_15 SK_ASCEND_RUNTIME_VALUE(double, 15)

// ---- cross-core synchronization (FFTS) -------------------------------------
inline void ffts_cross_core_sync(pipe_t pipe, uint64_t config) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->cross_core_set(c, static_cast<uint32_t>(pipe), config);
}
inline void wait_flag_dev(int64_t flagId) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->wait_flag(c, static_cast<uint32_t>(PIPE_S), flagId);
}
inline void wait_flag_dev(pipe_t pipe, int64_t flagId) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->wait_flag(c, static_cast<uint32_t>(pipe), flagId);
}

// ---- pipes, caches, instruction preload ---------------------------------------
// The vector model's checker sees every barrier: a PIPE_ALL barrier orders every pipe of a vector core.
inline void pipe_barrier(pipe_t pipe) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->pipe_barrier(c, static_cast<uint32_t>(pipe));
  sk_ascend_sim_vec::checker().pipeBarrier(sk_ascend_sim_vec::core(), static_cast<uint32_t>(pipe));
}
template <typename T>
inline void dcci(T* addr, uint64_t entire, uint64_t dst) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->dcci(c, static_cast<const volatile void*>(addr), entire, dst);
}
inline void preload(const void* addr, int64_t units) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->preload(c, addr, units);
}
inline void trap() {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->trap(c, "trap()");
}

#define KERNEL_TASK_TYPE_DEFAULT(type) sk_ascend_sim_declare_task_type(type)
inline void sk_ascend_sim_declare_task_type(KernelMetaType type) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->declare_task_type(c, static_cast<uint32_t>(type));
}

// `if ASCEND_IS_AIC { ... }`: a run-time test here, `if constexpr` under bisheng.
#define ASCEND_IS_AIC (::sk_ascend_sim_core_now()->core_type == SK_ASCEND_SIM_AIC)
#define ASCEND_IS_AIV (::sk_ascend_sim_core_now()->core_type == SK_ASCEND_SIM_AIV)

// The previous/current sub-kernel pair of an early-start wait, written by the
// SuperKernel before a WaitPreTaskEnd a sub-kernel makes itself (V2 early start).
__BLOCK_LOCAL__ inline int64_t g_super_kernel_early_start_config = -1;

namespace AscendC {

enum CoreType : uint32_t { AIC = SK_ASCEND_SIM_AIC, AIV = SK_ASCEND_SIM_AIV };

// Flag ids the library reserves for its all-core syncs (the rest, 0..10, are the user's).
constexpr uint16_t SYNC_AIC_FLAG = 11;      // mode 0 among cube cores
constexpr uint16_t SYNC_AIV_FLAG = 12;      // mode 2, vector -> cube
constexpr uint16_t SYNC_AIC_AIV_FLAG = 13;  // mode 2, cube -> vector
constexpr uint16_t SYNC_AIV_ONLY_ALL = 14;  // mode 0 among vector cores

// The FFTS message: valid bit, mode in bits 4-5, flag id in bits 8-11.
inline uint16_t GetffstMsg(uint16_t mode, uint16_t flagId) {
  return static_cast<uint16_t>(0x1 | ((mode & 0x3) << 4) | ((flagId & 0xf) << 8));
}

// A cube core's block; a vector core's index among all vector cores of the launch.
inline int64_t GetBlockIdx() {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  if (c->core_type == SK_ASCEND_SIM_AIC) return c->block_idx;
  return static_cast<int64_t>(c->block_idx) * c->subblock_dim + c->subblock_id;
}
inline int64_t GetBlockIdxImpl() { return GetBlockIdx(); }
// A sub-kernel compiled for a SuperKernel sees its own block count, not the SuperKernel's.
// static, as the other functions here whose body depends on a per-object macro: two objects of one
// binary compiled with different values must not share one (non-inlined) copy.
static inline int64_t GetBlockNum() {
#ifdef __SUPER_KERNEL_STATIC_BLOCK_NUM__
  return __SUPER_KERNEL_STATIC_BLOCK_NUM__;
#else
  return get_block_num();
#endif
}
inline int64_t GetSubBlockIdx() { return get_subblockid(); }
inline int64_t GetSubBlockNum() { return get_subblockdim(); }
inline int64_t GetTaskRatio() { return get_subblockdim(); }
inline int64_t GetSystemCycle() {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  return static_cast<int64_t>(c->ops->system_cycle(c));
}

template <pipe_t pipe>
inline void PipeBarrier() {
  pipe_barrier(pipe);
}

template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId) {
  ffts_cross_core_sync(pipe, GetffstMsg(modeId, flagId));
}
inline void CrossCoreWaitFlag(uint16_t flagId) { wait_flag_dev(flagId); }

// All cores of the launch meet. isAIVOnly: the vector cores only (mode 0 on
// SYNC_AIV_ONLY_ALL); else cube and vector: every AIV reports to its AIC, the
// AICs meet, each AIC releases its AIVs.
template <bool isAIVOnly = true>
inline void SyncAll() {
  pipe_barrier(PIPE_ALL);
  if (isAIVOnly) {
    ffts_cross_core_sync(PIPE_MTE3, GetffstMsg(0x0, SYNC_AIV_ONLY_ALL));
    wait_flag_dev(SYNC_AIV_ONLY_ALL);
    return;
  }
  if (ASCEND_IS_AIC) {
    wait_flag_dev(SYNC_AIV_FLAG);
    ffts_cross_core_sync(PIPE_FIX, GetffstMsg(0x0, SYNC_AIC_FLAG));
    wait_flag_dev(SYNC_AIC_FLAG);
    ffts_cross_core_sync(PIPE_MTE3, GetffstMsg(0x2, SYNC_AIC_AIV_FLAG));
  } else {
    ffts_cross_core_sync(PIPE_MTE3, GetffstMsg(0x2, SYNC_AIV_FLAG));
    wait_flag_dev(SYNC_AIC_AIV_FLAG);
  }
}

// ---- early start between sub-kernels of a SuperKernel ------------------------
// The pair of device types of an early-start wait: (previous << 2) | current,
// each 0 = cube only, 1 = vector only, 2 = both (the config the SuperKernel
// writes to g_super_kernel_early_start_config).
constexpr int kEarlyStartAic = 0;
constexpr int kEarlyStartAiv = 1;
constexpr int kEarlyStartMix = 2;
constexpr int8_t EarlyStartConfig(int prev, int cur) { return static_cast<int8_t>((prev << 2) | cur); }

// "My outputs are final from here": each core tells the cores of its own type.
template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX>
inline void SetNextTaskStartImpl() {
  if (ASCEND_IS_AIC) {
    ffts_cross_core_sync(AIC_PIPE, GetffstMsg(0x0, SYNC_AIC_FLAG));
  } else {
    ffts_cross_core_sync(AIV_PIPE, GetffstMsg(0x0, SYNC_AIV_ONLY_ALL));
  }
}

// Wait for the previous sub-kernel (device type prev) before the current (cur)
// reads its outputs. A cube core waits for the cubes (prev has cube), hands
// that on to its vector cores (cur has vector), and waits for its vector
// cores' report (prev has vector, cur has cube); a vector core mirrors it.
inline void sk_ascend_sim_wait_pre_task_end(int config) {
  if (config < 0 || config > EarlyStartConfig(kEarlyStartMix, kEarlyStartMix) || (config & 3) == 3) {
    const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
    c->ops->trap(c, "WaitPreTaskEnd: g_super_kernel_early_start_config was not set by the SuperKernel");
    return;
  }
  const int prev = config >> 2, cur = config & 3;
  const bool prevCube = prev != kEarlyStartAiv, prevVec = prev != kEarlyStartAic;
  const bool curCube = cur != kEarlyStartAiv, curVec = cur != kEarlyStartAic;
  if (ASCEND_IS_AIC) {
    if (prevCube) wait_flag_dev(SYNC_AIC_FLAG);
    if (prevCube && curVec) ffts_cross_core_sync(PIPE_MTE3, GetffstMsg(0x2, SYNC_AIC_AIV_FLAG));
    if (prevVec && curCube) wait_flag_dev(SYNC_AIV_FLAG);
  } else {
    if (prevVec) wait_flag_dev(SYNC_AIV_ONLY_ALL);
    if (prevVec && curCube) ffts_cross_core_sync(PIPE_MTE3, GetffstMsg(0x2, SYNC_AIV_FLAG));
    if (prevCube && curVec) wait_flag_dev(SYNC_AIC_AIV_FLAG);
  }
}

template <int8_t earlyStartConfig = -1>
inline void WaitPreTaskEndImpl() {
  sk_ascend_sim_wait_pre_task_end(earlyStartConfig >= 0 ? earlyStartConfig
                                                        : static_cast<int>(g_super_kernel_early_start_config));
}

// What a sub-kernel calls itself. Outside a SuperKernel (no enabling macro:
// an unfused launch) both do nothing, as with the CANN library. In both cases
// the simulator checks where they stand against the kernel's GM transfers
// through its TPipe (the vector model's checker): the wait before the first, the set after
// the last, the set's pipe ordered after every copy-in and copy-out, so a
// misplaced call is an error even in an unfused launch.
template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX>
static inline void SetNextTaskStart() {
  sk_ascend_sim_vec::checker().setNext(sk_ascend_sim_vec::core(), static_cast<uint32_t>(AIV_PIPE));
#ifdef __ASCENDC_ENABLE_SET_NEXT_TASK_START
  SetNextTaskStartImpl<AIV_PIPE, AIC_PIPE>();
#endif
}
static inline void WaitPreTaskEnd() {
  sk_ascend_sim_vec::checker().waitPre(sk_ascend_sim_vec::core());
#ifdef __ASCENDC_ENABLE_WAIT_PRE_TASK_END
  WaitPreTaskEndImpl<-1>();
#endif
}

}  // namespace AscendC

#pragma GCC visibility pop

// The vector programming model, one header per concern (each self-contained).
#include "kernel_common.h"
#include "kernel_tensor.h"
#include "kernel_tpipe.h"
#include "kernel_operator_sync_intf.h"
#include "kernel_operator_data_copy_intf.h"
#include "kernel_operator_vec_binary_intf.h"
#include "kernel_operator_vec_unary_intf.h"
#include "kernel_operator_vec_vconv_intf.h"
#include "kernel_operator_vec_gather_intf.h"
#include "kernel_operator_vec_reduce_intf.h"

#endif
