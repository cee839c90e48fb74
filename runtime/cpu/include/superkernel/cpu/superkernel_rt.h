/* What generated cpu SuperKernel code includes: the host services table and
 * the inline synchronization primitives.
 *
 * Contract between three parties:
 *  - the host executor (src/runtime) fills an sk_services table and passes it
 *    as run()'s `void* stream`;
 *  - generated code (templates/cpu) calls only the functions below;
 *  - sub-kernels see only kernel.h; their sk_wait_inputs/... calls reach the
 *    sk_block_rt the generated code points ctx->rt at.
 *
 * Every counter is monotonic: a waiter is satisfied when value >= target, and
 * targets grow with the launch epoch (blocks x epoch), so nothing is reset
 * between launches. Fast paths (arrive, a satisfied wait, a short spin) are
 * inline; only a wait that outlasts the spin calls into the host, which backs
 * off (pause, yield, futex), enforces SK_WAIT_TIMEOUT_MS and aborts the launch.
 */
#ifndef SUPERKERNEL_CPU_SUPERKERNEL_RT_H
#define SUPERKERNEL_CPU_SUPERKERNEL_RT_H

#include <stddef.h>
#include <stdint.h>

#include "superkernel/cpu/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SK_ABI_VERSION 1
#define SK_SERVICES_VERSION 3
#define SK_CACHELINE 64
#ifndef SK_SPIN_ITERS
#define SK_SPIN_ITERS 256
#endif

typedef struct sk_run_args {
  uint32_t abi_version;   /* SK_ABI_VERSION */
  uint32_t num_buffers;   /* the SuperKernel's buffers, in its manifest order */
  void* const* buffers;   /* base pointers */
} sk_run_args;

/* A monotonic counter alone on its cache line (arrivals never false-share
 * with waiters of another counter). `waiters` > 0 asks arrivers to wake. */
typedef struct sk_counter {
  uint64_t value;
  uint32_t waiters;
  uint32_t pad0;
  char pad[SK_CACHELINE - 16];
} __attribute__((aligned(SK_CACHELINE))) sk_counter;

/* Profiling record kinds passed to sk_services.profile. */
enum {
  SK_PROF_OP_BEGIN = 0,   /* id = op index in the SuperKernel */
  SK_PROF_OP_END = 1,
  SK_PROF_WAIT_BEGIN = 2, /* id = op index about to wait */
  SK_PROF_WAIT_END = 3
};

typedef void (*sk_core_fn)(void* arg, uint32_t core);

/* Launch watchdog progress (SK_RUN_TIMEOUT_MS), one slot per worker on its
 * own cache line: the worker running core c writes slot c before each block
 * it starts (sk_progress_mark), so the host can tell a launch that makes no
 * progress and name the op and block each worker is stuck in. `seq` counts
 * the blocks this worker started; op/block are written before it. */
typedef struct sk_progress {
  uint64_t seq;
  uint32_t op;            /* op index within the SuperKernel (profiling ids) */
  uint32_t block;
  char pad[SK_CACHELINE - 16];
} __attribute__((aligned(SK_CACHELINE))) sk_progress;

/* Host services, filled by the executor. */
typedef struct sk_services {
  uint32_t version;       /* SK_SERVICES_VERSION */
  uint32_t num_workers;
  void* self;
  /* Run fn(arg, core) for every core in [0, num_cores), each core on its own
   * worker, all at once (num_cores <= num_workers). Returns 0, or non-zero
   * when the launch failed (timeout, reported error); the message is kept by
   * the executor. */
  int (*run_cores)(void* self, uint32_t num_cores, sk_core_fn fn, void* arg);
  /* Slow path of a wait: block until __atomic_load(&c->value) >= target with
   * backoff. Returns 0 when satisfied; non-zero when it timed out (the launch
   * is then failed with a message naming `what`) or the launch was aborted. */
  int (*wait_slow)(void* self, sk_counter* c, uint64_t target, const char* what);
  /* Wake waiters of c (called by arrive when c->waiters != 0). */
  void (*wake)(void* self, sk_counter* c);
  /* Fail the launch with a message (sk_report_error lands here). */
  void (*fail)(void* self, const char* message);
  /* Non-zero once the launch failed: cores stop at their next wait. */
  int (*failed)(void* self);
  /* Profiling: NULL unless profiling is on. `core` is the SuperKernel core. */
  void (*profile)(void* self, uint32_t core, uint32_t kind, uint32_t id);
  /* num_workers progress slots (sk_progress_mark); NULL: no watchdog. */
  sk_progress* progress;
  /* Run one collective on the calling worker (kernel.h sk_collective_call;
   * docs/COLLECTIVES.md). 0 ok; non-zero: the launch failed, message kept. */
  int (*collective)(void* self, const sk_collective_args* args);
} sk_services;

static inline void sk_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* A loop over one op's blocks marks progress in two parts: sk_progress_op
 * once before the loop (finds core `core`'s slot and writes the op; NULL: no
 * watchdog) and sk_progress_block before each block (the block, then seq
 * with release). Why split: the kernel call between two blocks is opaque, so
 * a per-block sk_progress_mark makes the compiler reload s, s->progress and
 * the core for every block; the slot pointer kept across the loop leaves two
 * stores and a load on the core's own cache line per block. */
static inline sk_progress* sk_progress_op(const sk_services* s, uint32_t core, uint32_t op) {
  sk_progress* p = s->progress;
  if (!p) return p;
  p += core;
  __atomic_store_n(&p->op, op, __ATOMIC_RELAXED);
  return p;
}

static inline void sk_progress_block(sk_progress* p, uint32_t block) {
  if (!p) return;
  __atomic_store_n(&p->block, block, __ATOMIC_RELAXED);
  __atomic_store_n(&p->seq, __atomic_load_n(&p->seq, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

/* Block `block` of op `op` starts on core `core` (launch watchdog): both
 * parts at once, for a single block. */
static inline void sk_progress_mark(const sk_services* s, uint32_t core, uint32_t op, uint32_t block) {
  sk_progress_block(sk_progress_op(s, core, op), block);
}

/* Release one arrival on c. */
static inline void sk_counter_arrive(const sk_services* s, sk_counter* c) {
  __atomic_fetch_add(&c->value, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST) != 0) s->wake(s->self, c);
}

/* Set c to at least v (per-block flags: v = epoch). */
static inline void sk_flag_set(const sk_services* s, sk_counter* c, uint64_t v) {
  __atomic_store_n(&c->value, v, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST) != 0) s->wake(s->self, c);
}

/* Acquire-wait until c->value >= target. 0 ok, non-zero: stop this core. */
static inline int sk_wait_ge(const sk_services* s, sk_counter* c, uint64_t target, const char* what) {
  for (int i = 0; i < SK_SPIN_ITERS; ++i) {
    if (__atomic_load_n(&c->value, __ATOMIC_ACQUIRE) >= target) return 0;
    sk_cpu_relax();
  }
  return s->wait_slow(s->self, c, target, what);
}

/* A monotonic all-core barrier over `participants` cores: the k-th barrier
 * (k counted from 1 over the life of the counter) completes when
 * value >= participants * k. Callers pass k. */
static inline int sk_barrier(const sk_services* s, sk_counter* c, uint32_t participants, uint64_t k,
                             const char* what) {
  sk_counter_arrive(s, c);
  return sk_wait_ge(s, c, (uint64_t)participants * k, what);
}

/* The barrier among ONE op's own blocks behind sk_kernel_sync (a kernel that
 * declares "kernel_sync": true; all `blocks` blocks run at once, one per
 * core). Monotonic like every counter here: block calls number k = 1, 2, ...
 * (kept per block in *local_count, e.g. &sk_block_rt.sync_count, which the
 * helper increments), and the k-th sync completes when
 *     c->value >= base + blocks * k.
 * `base` is the counter's value when the op started in this launch: e.g.
 * blocks * syncs_per_launch * (epoch - 1) when every launch makes the same
 * number of syncs, or the value the host read before the launch (what
 * Executor::launchKernel does). Every block of the op must make the same
 * number of calls. Returns 0, or non-zero when the launch failed / timed
 * out (the block should stop). */
static inline int sk_op_sync(const sk_services* s, sk_counter* c, uint32_t blocks, uint64_t base,
                             uint64_t* local_count, const char* what) {
  uint64_t k = ++*local_count;
  sk_counter_arrive(s, c);
  return sk_wait_ge(s, c, base + (uint64_t)blocks * k, what);
}

/* Prefetch [addr, addr+bytes) of code into the cache (preload-code). */
static inline void sk_preload_code(const void* addr, size_t bytes) {
  const char* p = (const char*)addr;
  for (size_t off = 0; off < bytes; off += SK_CACHELINE) __builtin_prefetch(p + off, 0, 2);
}

/* Per-block runtime state that ctx->rt points at inside a SuperKernel. The
 * generated code fills it; kernel_abi.c's sk_wait_inputs & co. call through
 * it. `waited`/`signalled` make the calls idempotent, so the SuperKernel can
 * always complete them after the kernel returns. */
typedef struct sk_block_rt sk_block_rt;
struct sk_block_rt {
  const sk_services* services;
  /* Perform this block's waits; non-zero if the launch failed. */
  int (*wait_inputs)(sk_block_rt* rt, uint32_t block);
  /* Publish this block's completion (flags / counter arrivals). */
  void (*signal_outputs)(sk_block_rt* rt, uint32_t block);
  /* Barrier among the op's blocks. */
  void (*kernel_sync)(sk_block_rt* rt, uint32_t block);
  void* state;            /* generated code's own (op index, epoch, ...) */
  uint32_t core;
  uint8_t waited;
  uint8_t signalled;
  uint8_t ignore_kernel_points; /* early-start=2 or not declared: calls are no-ops */
  uint8_t pad;
  uint64_t sync_count;    /* kernel_sync calls made by this block this launch */
};

#ifdef __cplusplus
}
#endif

#endif /* SUPERKERNEL_CPU_SUPERKERNEL_RT_H */
