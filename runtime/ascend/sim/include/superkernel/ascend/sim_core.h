// The simulated core a thread runs, as simulated Ascend C sees it (target: ascend-sim only): the standard
// headers every simulated header relies on, the device compiler's qualifiers (__aicore__, GM_ADDR, ...),
// pipe_t and the task types, and the binding of the calling thread to its simulated core
// (sk_ascend_sim_enter, sk_ascend_sim_core_now). Every header of the simulated API includes it first;
// kernel_operator.h says what is simulated.
#ifndef SUPERKERNEL_ASCEND_SIM_CORE_H
#define SUPERKERNEL_ASCEND_SIM_CORE_H

// No <math.h>: in C++ it is libstdc++'s wrapper around <cmath>, a third of a kernel's compile time.
// The simulator and the builtins call the compiler's __builtin_expf and friends instead.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The C++ header the vector model's templates use, here: what is declared inside the hidden-visibility
// region below would be hidden too, and a hidden declaration of a libm function does not link. (No
// <exception>: the checker, compiled into the simulator, asks std::uncaught_exceptions.)
#include <type_traits>

#include "superkernel/ascend/sim_abi.h"

#ifndef __cplusplus
#error "Ascend C is C++: compile simulated kernels with clang++ / g++"
#endif

#define SK_ASCEND_SIMULATOR 1

// Everything below is hidden, and so is what every header of the simulated
// API defines (each pushes and pops the same visibility, after its standard
// headers): each object that includes them (a simulated kernel library, a
// test executable with exported symbols) must use its own copy of these
// helpers and of the per-thread core pointer. With default visibility a
// library's calls to get_block_idx() and friends could bind to another
// object's copy (an executable built with exported symbols), which reads a
// core pointer nobody set. sk_ascend_sim_enter keeps its explicit default
// visibility: the simulator finds it with dlsym.
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

#pragma GCC visibility pop

#endif
