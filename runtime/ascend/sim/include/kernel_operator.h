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
//  - the vector programming model (TPipe, TQue, TBuf, LocalTensor / GlobalTensor, DataCopy, the vector
//    instructions, SetFlag / WaitFlag, the UB and its capacity, the pipes' ordering) is in
//    superkernel/ascend/kernel_vector.h, included at the end. No cube instruction, L1 or L0 is modelled.
#ifndef SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_H
#define SUPERKERNEL_ASCEND_SIM_KERNEL_OPERATOR_H

// No <math.h>: in C++ it is libstdc++'s wrapper around <cmath>, a third of a kernel's compile time.
// The simulator and the builtins call the compiler's __builtin_expf and friends instead.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The C++ headers kernel_vector.h uses, here: what is declared inside the hidden-visibility region
// below would be hidden too, and a hidden declaration of a libm function does not link.
#include <exception>
#include <initializer_list>
#include <type_traits>

#include "superkernel/ascend/sim_abi.h"

#ifndef __cplusplus
#error "Ascend C is C++: compile simulated kernels with clang++ / g++"
#endif

#define SK_ASCEND_SIMULATOR 1

// Everything below is hidden: each object that includes this header (a
// simulated kernel library, a test executable with exported symbols) must
// use its own copy of these helpers and of the per-thread core pointer.
// With default visibility a library's calls to get_block_idx() and friends
// could bind to another object's copy (an executable built with exported
// symbols), which reads a core pointer nobody set. sk_ascend_sim_enter keeps
// its explicit default visibility: the simulator finds it with dlsym.
#pragma GCC visibility push(hidden)

// Address-space and function qualifiers mean nothing on the host.
#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __cbuf__
// Per-core storage: every simulated core is its own thread.
#define __BLOCK_LOCAL__ thread_local
#define GM_ADDR __gm__ uint8_t*

typedef enum {
  PIPE_S = 0,
  PIPE_V = 1,
  PIPE_M = 2,
  PIPE_MTE1 = 3,
  PIPE_MTE2 = 4,
  PIPE_MTE3 = 5,
  PIPE_ALL = 6,
  PIPE_MTE4 = 7,
  PIPE_MTE5 = 8,
  PIPE_V2 = 9,
  PIPE_FIX = 10,
} pipe_t;

enum cache_line_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE = 1 };
enum dcci_dst_t { CACHELINE_ALL = 0, CACHELINE_UB = 1, CACHELINE_OUT = 2, CACHELINE_ATOMIC = 3 };

// Task types for KERNEL_TASK_TYPE_DEFAULT (the AIC:AIV ratio of a launch).
enum KernelMetaType : uint32_t {
  KERNEL_TYPE_AIV_ONLY = 0,
  KERNEL_TYPE_AIC_ONLY = 1,
  KERNEL_TYPE_MIX_AIV_1_0 = 2,
  KERNEL_TYPE_MIX_AIC_1_0 = 3,
  KERNEL_TYPE_MIX_AIC_1_1 = 4,
  KERNEL_TYPE_MIX_AIC_1_2 = 5,
};

// The core this thread simulates, for code of this shared object (hidden:
// each object loaded into a process has its own, bound by its own enter).
__attribute__((visibility("hidden"))) inline thread_local const sk_ascend_sim_core* sk_ascend_sim_self = nullptr;

extern "C" __attribute__((weak, visibility("default"))) void sk_ascend_sim_enter(const sk_ascend_sim_core* core) {
  sk_ascend_sim_self = core;
}

inline const sk_ascend_sim_core* sk_ascend_sim_core_now() {
  const sk_ascend_sim_core* c = sk_ascend_sim_self;
  if (c == nullptr || c->ops == nullptr || c->ops->abi != SK_ASCEND_SIM_ABI) {
    // Not a recoverable state: kernel code is running outside a simulated launch.
    fputs("Ascend C simulator: kernel code called outside a simulated launch (or ABI mismatch)\n", stderr);
    abort();
  }
  return c;
}

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
// Hooks into the vector model (kernel_vector.h, defined below): a PIPE_ALL barrier orders every pipe;
// a kernel's own WaitPreTaskEnd / SetNextTaskStart are checked against its GM transfers.
inline void sk_ascend_sim_vec_barrier(pipe_t pipe);
inline void sk_ascend_sim_vec_wait_pre();
inline void sk_ascend_sim_vec_set_next(pipe_t aivPipe);

inline void pipe_barrier(pipe_t pipe) {
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->pipe_barrier(c, static_cast<uint32_t>(pipe));
  sk_ascend_sim_vec_barrier(pipe);
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
// through its TPipe (kernel_vector.h): the wait before the first, the set after
// the last, the set's pipe ordered after every copy-in and copy-out, so a
// misplaced call is an error even in an unfused launch.
template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX>
static inline void SetNextTaskStart() {
  sk_ascend_sim_vec_set_next(AIV_PIPE);
#ifdef __ASCENDC_ENABLE_SET_NEXT_TASK_START
  SetNextTaskStartImpl<AIV_PIPE, AIC_PIPE>();
#endif
}
static inline void WaitPreTaskEnd() {
  sk_ascend_sim_vec_wait_pre();
#ifdef __ASCENDC_ENABLE_WAIT_PRE_TASK_END
  WaitPreTaskEndImpl<-1>();
#endif
}

}  // namespace AscendC

#include "superkernel/ascend/kernel_vector.h"

#pragma GCC visibility pop

#endif
