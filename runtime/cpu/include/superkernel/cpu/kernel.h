/* superkernel cpu sub-kernel ABI (DESIGN section 2, normative).
 *
 * A sub-kernel is SPMD code called once per block with block_idx in
 * [0, block_dim). Include this header and write:
 *
 *   SK_KERNEL void add_kernel(const sk_ctx* ctx, const float* x, float* z, int64_t n);
 *
 * Buffers: `const T*` for access read, `T*` for write/readwrite; scalars by
 * value (int32_t, int64_t, float, double); f16/bf16 are uint16_t storage.
 *
 * The three sync calls dispatch through ctx->rt, which the SuperKernel (or
 * the unfused launcher) points at its per-block runtime state; with rt NULL
 * (a plain call) they are no-ops. Their definitions are linked into every
 * shared object superkernel builds (runtime/cpu/src/kernel_abi.c).
 */
#ifndef SUPERKERNEL_CPU_KERNEL_H
#define SUPERKERNEL_CPU_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
#define SK_EXTERN_C extern "C"
#else
#define SK_EXTERN_C
#endif

#define SK_KERNEL SK_EXTERN_C __attribute__((used))

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_ctx {
  uint32_t block_idx; /* this block, 0 <= block_idx < block_dim */
  uint32_t block_dim; /* the op's block count */
  void* rt;           /* opaque runtime state */
} sk_ctx;

/* early start: wait for producers here (before the first read of a produced
 * buffer, and before the first write to a buffer an earlier op still reads). */
void sk_wait_inputs(const sk_ctx* ctx);
/* early start: this block's outputs are done. */
void sk_signal_outputs(const sk_ctx* ctx);
/* barrier among this op's own blocks (kernel declared "kernel_sync": true). */
void sk_kernel_sync(const sk_ctx* ctx);
/* extension: end the launch with an error (sk-compile exit 4). */
void sk_report_error(const sk_ctx* ctx, const char* message);

/* extension: one collective over a group of ranks (docs/COLLECTIVES.md),
 * run by the calling block on the executor's communicator. What the runtime's
 * collective kernel (collective_kernel.cpp) calls; the planner makes that
 * kernel's launches, a kernel does not call it itself. `desc` is
 * kind | reduce << 8 | dtype << 16 (kind: 0 all_reduce, 1 all_gather,
 * 2 reduce_scatter, 3 all_to_all; reduce: 1 sum, 2 max; dtype: the op
 * list's order, 0 = f32); `ranks` the group as a bit mask of ranks; `tag`
 * the op's identity, equal on every rank that runs the same plan. Returns 0,
 * or non-zero when it failed (the launch is then failed with the message). */
typedef struct sk_collective_args {
  const void* in;
  void* out;
  int64_t n_in;
  int64_t n_out;
  uint64_t desc;
  uint64_t ranks;
  uint64_t tag;
} sk_collective_args;
int sk_collective_call(const sk_ctx* ctx, const sk_collective_args* args);

/* The block's slice of n elements under "partition": "block": [*begin, *end).
 * B equal contiguous slices, the last one takes the remainder. */
static inline void sk_block_range(const sk_ctx* ctx, int64_t n, int64_t* begin, int64_t* end) {
  int64_t per = n / (int64_t)ctx->block_dim;
  *begin = per * (int64_t)ctx->block_idx;
  *end = (ctx->block_idx + 1 == ctx->block_dim) ? n : *begin + per;
}

#ifdef __cplusplus
}
#endif

#endif /* SUPERKERNEL_CPU_KERNEL_H */
