/* The boundary between simulated Ascend C code and the simulator's host
 * runtime (runtime/ascend/sim/src/Simulator.cpp).
 *
 * Simulated kernels are ordinary host code: kernel_operator.h turns every
 * hardware operation whose effect crosses cores (cross-core flags, waits,
 * barriers, cache maintenance, instruction preload, the declared task type)
 * into a call through `ops` of the core the calling thread simulates. The
 * runtime binds that core to the thread before calling the kernel entry, via
 * the shared object's exported sk_ascend_sim_enter (one per shared object, so
 * a kernel library and the program loading it never share the thread-local).
 *
 * C, not C++: the layout is fixed and versioned (SK_ASCEND_SIM_ABI) because
 * kernel objects compiled by one build are run by another's runtime. */
#ifndef SUPERKERNEL_ASCEND_SIM_ABI_H
#define SUPERKERNEL_ASCEND_SIM_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: runtime_values / runtime_count (runtime scalars). 3: vector_checker. 4: hccl_run (collectives). */
#define SK_ASCEND_SIM_ABI 4u

/* Runtime scalar slots one launch passes at most (runtime_count <= this). */
#define SK_ASCEND_SIM_MAX_RUNTIME_VALUES 16u

/* Core types. */
#define SK_ASCEND_SIM_AIC 0u
#define SK_ASCEND_SIM_AIV 1u

typedef struct sk_ascend_sim_core sk_ascend_sim_core;

/* One communication task of the simulated AscendC::Hccl client (lib/hccl/hccl.h), as its Wait hands it to the
 * simulator: what the AI CPU (or CCU) server of a real device would run with HCCL. `desc`, `ranks` and `tag`
 * are the collective's identity across ranks (the fields of sk_collective_args, docs/COLLECTIVES.md: desc =
 * kind | reduce << 8 | dtype << 16, ranks a bit mask, tag equal on every rank running the same plan); `in`,
 * `out`, `n_in` and `n_out` its GM buffers and element counts. */
typedef struct sk_ascend_sim_hccl_task {
  const void* in;
  void* out;
  int64_t n_in;
  int64_t n_out;
  uint64_t desc;
  uint64_t ranks;
  uint64_t tag;
} sk_ascend_sim_hccl_task;

typedef struct sk_ascend_sim_ops {
  uint32_t abi; /* SK_ASCEND_SIM_ABI */
  /* ffts_cross_core_sync(pipe, config): config = 1 | mode << 4 | flag << 8. */
  void (*cross_core_set)(const sk_ascend_sim_core* c, uint32_t pipe, uint64_t config);
  /* wait_flag_dev(flag): block until this core's counter of `flag` is non-zero, then decrement it. */
  void (*wait_flag)(const sk_ascend_sim_core* c, uint32_t pipe, int64_t flag);
  void (*pipe_barrier)(const sk_ascend_sim_core* c, uint32_t pipe);
  /* dcci: a memory fence; also where a core polling GM (notify/wait words) is seen as spinning. */
  void (*dcci)(const sk_ascend_sim_core* c, const volatile void* addr, uint64_t entire, uint64_t dst);
  /* preload(addr, units): instruction prefetch of `units` x 2 KiB starting at a function. */
  void (*preload)(const sk_ascend_sim_core* c, const void* addr, int64_t units);
  /* KERNEL_TASK_TYPE_DEFAULT(type): checked against the launch's task type. */
  void (*declare_task_type)(const sk_ascend_sim_core* c, uint32_t type);
  /* trap(): fail the launch with `what`. */
  void (*trap)(const sk_ascend_sim_core* c, const char* what);
  uint64_t (*system_cycle)(const sk_ascend_sim_core* c);
  /* The Ascend C vector model's checker, compiled once into the simulator: a C++ table,
   * sk_ascend_sim_vec::Checker (superkernel/ascend/vector_state.h). */
  const void* vector_checker;
  /* Run one Hccl communication task to completion on the calling core's thread, over the launching device's
   * communicator (the simulator's stand-in for the HCCL server). Returns on success; a failure (no
   * communicator, ranks that disagree, a peer that never answers) fails the launch with the communicator's
   * message naming the op and unwinds the core, like trap(). */
  void (*hccl_run)(const sk_ascend_sim_core* c, const sk_ascend_sim_hccl_task* task);
} sk_ascend_sim_ops;

struct sk_ascend_sim_core {
  const sk_ascend_sim_ops* ops;
  void* runtime;         /* the runtime's per-core state */
  uint32_t core_type;    /* SK_ASCEND_SIM_AIC or SK_ASCEND_SIM_AIV */
  uint32_t block_idx;    /* get_block_idx(): the logical AI Core (AIV-only launch: the AIV) */
  uint32_t block_num;    /* get_block_num(): the launch's block dim */
  uint32_t subblock_id;  /* get_subblockid(): 0 or 1 on an AIV of a 1:2 mix launch, else 0 */
  uint32_t subblock_dim; /* get_subblockdim(): AIVs per AI Core in this launch (1 or 2) */
  uint32_t core_id;      /* get_coreid(): the physical core */
  /* The launch's runtime scalars: slot k's value lives at runtime_values[k] (GM, the parameter's C type),
   * k < runtime_count <= SK_ASCEND_SIM_MAX_RUNTIME_VALUES. The same array for every core of the launch;
   * read with SK_ASCEND_RUNTIME_<T>_<k> (kernel_operator.h). */
  const void* const* runtime_values;
  uint32_t runtime_count;
};

/* Exported by every simulated shared object (kernel_operator.h defines it):
 * binds the calling thread to `core` for code of that object. */
typedef void (*sk_ascend_sim_enter_fn)(const sk_ascend_sim_core* core);

#ifdef __cplusplus
}
#endif

#endif
