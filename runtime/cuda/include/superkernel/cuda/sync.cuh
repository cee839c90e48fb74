/* superkernel cuda: device-scope synchronization primitives (DESIGN section 9).
 *
 * Everything the generated SuperKernel and the sub-kernel contract
 * (kernel.cuh) use to order CTAs of one persistent grid:
 *   - release stores / reductions and acquire loads at gpu scope (PTX
 *     ld.acquire.gpu / st.release.gpu / red.release.gpu, sm_70 and later);
 *   - waits on monotonic 64-bit values: every target is a multiple of the
 *     launch epoch e (a counter of B producer blocks reaches B*e, a flag
 *     becomes e), so the sync area is never reset between launches;
 *   - one thread per CTA (threadIdx.x == 0) does the waiting and the
 *     signalling, the CTA's bar.sync (__syncthreads) extends the order to
 *     the other threads (causality order is transitive in the PTX model, the
 *     same scheme cooperative groups' grid.sync uses).
 *
 * Produced data must be read with ordinary (coherent) loads: ld.global.nc
 * (__ldg, `const T* __restrict__`) may serve stale lines within a launch.
 */
#ifndef SUPERKERNEL_CUDA_SYNC_CUH
#define SUPERKERNEL_CUDA_SYNC_CUH

#include <stddef.h>
#include <stdint.h>
#ifndef SK_CUDA_SIM
#include <stdio.h> /* device printf: a timed-out wait reports itself */
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "superkernel cuda needs sm_70 or later (acquire/release at gpu scope)"
#endif

/* Back-off between polls of a wait (ns, __nanosleep); 0: spin. */
#ifndef SK_CUDA_POLL_NS
#define SK_CUDA_POLL_NS 32
#endif

/* How a wait polls (issue 40). 0 (acquire, default): ld.acquire.gpu on every
 * poll. 1 (relaxed): ld.relaxed.gpu spins and ONE fence.acq_rel.gpu after the
 * value is seen; the fence after a relaxed read that observed the producer's
 * release store / reduction synchronizes with it (PTX memory model, "release
 * pattern -> relaxed read -> acquire fence"). Measured on an H200
 * (docs/PERFORMANCE.md section 8b): the relaxed wait costs MORE, about 0.23 us
 * more per flag edge (1.45 against 1.22 us), and the SuperKernels built with it
 * ran the decode stack 7% slower; the fence costs more than the acquire loads'
 * L1 invalidations it saves. So acquire stays the default; 1 is kept for the
 * comparison (-DSK_CUDA_POLL_RELAXED=1). */
#ifndef SK_CUDA_POLL_RELAXED
#define SK_CUDA_POLL_RELAXED 0
#endif

/* A wait that has not seen its value after this many ns (%globaltimer) prints
 * the word, its target and the CTA, then traps, so a broken plan fails the
 * launch (cudaErrorLaunchFailure) instead of hanging the GPU: there is no
 * launch watchdog on a GPU (cuda-sim has its own). The clock is read only every
 * 256 polls, off the fast path of a short wait. Off (0) by default until it is
 * measured on a GPU by itself: the one device run that had it on also had the
 * relaxed poll, and two barrier-heavy gpu tests (early-start=0,
 * debug-sync-all=1 on the decode stack) did not finish in 150 s there; which of
 * the two changes did that is not known (issue 40). */
#ifndef SK_CUDA_WAIT_TIMEOUT_NS
#define SK_CUDA_WAIT_TIMEOUT_NS 0
#endif

#ifndef SK_CUDA_SIM
static __device__ __forceinline__ unsigned long long sk_ld_acquire(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

static __device__ __forceinline__ unsigned int sk_ld_acquire_u32(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

static __device__ __forceinline__ void sk_st_release(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ void sk_st_release_u32(unsigned int* p, unsigned int v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ void sk_st_relaxed_u32(unsigned int* p, unsigned int v) { *p = v; }

static __device__ __forceinline__ void sk_red_release_add(unsigned long long* p, unsigned long long v) {
  asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ unsigned int sk_atom_acq_rel_add_u32(unsigned int* p, unsigned int v) {
  unsigned int old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

/* %globaltimer: nanoseconds on the GPU's global timer (profiling records). */
static __device__ __forceinline__ unsigned long long sk_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

static __device__ __forceinline__ unsigned long long sk_ld_relaxed(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

static __device__ __forceinline__ unsigned int sk_ld_relaxed_u32(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

static __device__ __forceinline__ void sk_fence_acquire() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/* The deadline check of a wait's n-th poll (see SK_CUDA_WAIT_TIMEOUT_NS). */
static __device__ __forceinline__ void sk_wait_deadline(unsigned int n, unsigned long long* start, const void* p,
                                                        unsigned long long target) {
#if SK_CUDA_WAIT_TIMEOUT_NS > 0
  if ((n & 255u) != 255u) return;
  const unsigned long long now = sk_globaltimer();
  if (*start == 0) {
    *start = now;
  } else if (now - *start > (unsigned long long)(SK_CUDA_WAIT_TIMEOUT_NS)) {
    printf("superkernel: wait timed out: word %p never reached %llu (block %u, thread %u)\n", p, target,
           blockIdx.x, threadIdx.x);
    __trap();
  }
#else
  (void)n, (void)start, (void)p, (void)target;
#endif
}

/* Wait until *p >= target (one thread). */
static __device__ __forceinline__ void sk_wait_ge(const unsigned long long* p, unsigned long long target) {
  unsigned long long start = 0;
#if SK_CUDA_POLL_RELAXED
  for (unsigned int n = 0; sk_ld_relaxed(p) < target; ++n) {
#else
  for (unsigned int n = 0; sk_ld_acquire(p) < target; ++n) {
#endif
#if SK_CUDA_POLL_NS > 0
    __nanosleep(SK_CUDA_POLL_NS);
#endif
    sk_wait_deadline(n, &start, p, target);
  }
#if SK_CUDA_POLL_RELAXED
  sk_fence_acquire();
#endif
}

/* Wait until *p != value (one thread). */
static __device__ __forceinline__ void sk_wait_ne_u32(const unsigned int* p, unsigned int value) {
  unsigned long long start = 0;
#if SK_CUDA_POLL_RELAXED
  for (unsigned int n = 0; sk_ld_relaxed_u32(p) == value; ++n) {
#else
  for (unsigned int n = 0; sk_ld_acquire_u32(p) == value; ++n) {
#endif
#if SK_CUDA_POLL_NS > 0
    __nanosleep(SK_CUDA_POLL_NS);
#endif
    sk_wait_deadline(n, &start, p, value);
  }
#if SK_CUDA_POLL_RELAXED
  sk_fence_acquire();
#endif
}
#else
/* The simulator (target cuda-sim, sim_device.h): the same orderings as C++
 * atomics on host memory, and waits the engine runs (it polls, reports a hang
 * with the word and its target, and can delay CTAs to expose races). */
static inline unsigned long long sk_ld_acquire(const unsigned long long* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline unsigned int sk_ld_acquire_u32(const unsigned int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void sk_st_release(unsigned long long* p, unsigned long long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void sk_st_release_u32(unsigned int* p, unsigned int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void sk_st_relaxed_u32(unsigned int* p, unsigned int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline void sk_red_release_add(unsigned long long* p, unsigned long long v) {
  (void)__atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}
static inline unsigned int sk_atom_acq_rel_add_u32(unsigned int* p, unsigned int v) {
  return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
static inline void sk_wait_ge(const unsigned long long* p, unsigned long long target) {
  sk_cuda_sim_module_ops->wait_ge_u64(sk_cuda_sim_self, p, target);
}
static inline void sk_wait_ne_u32(const unsigned int* p, unsigned int value) {
  sk_cuda_sim_module_ops->wait_ne_u32(sk_cuda_sim_self, p, value);
}
static inline unsigned long long sk_globaltimer() { return sk_cuda_sim_module_ops->globaltimer(sk_cuda_sim_self); }
#endif

/* L2 prefetch of [p, p + bytes) (preload-data, plan/DataPreload.cpp): the SuperKernel issues it for a CTA's
 * slice of an input no op of the step writes, for the op it starts and the ops after it, before its waits, so
 * the slice streams from HBM into L2 while the CTA waits and computes (what a Graph + PDL run gets by loading
 * the next kernel's weights before griddepcontrol.wait). Call from every thread of the CTA; a hint that never
 * changes a result.
 *  - sm_90 and later: cp.async.bulk.prefetch.L2 (the TMA unit fetches; no registers, no wait) of 16-byte
 *    aligned chunks of at most SK_PREFETCH_CHUNK bytes, the CTA's threads taking chunks in turn (thread 0
 *    alone for a slice of one chunk); the range shrinks to 16-byte bounds, so it never leaves [p, p + bytes);
 *  - sm_70 / sm_80: prefetch.global.L2 of each 128-byte line, the CTA's threads taking lines in turn;
 *  - the simulator: nothing to prefetch (it has no caches); the generated code checks each slice against its
 *    buffer before the call instead (templates/cuda/superkernel.cu.tmpl). */
#ifndef SK_PREFETCH_CHUNK
#define SK_PREFETCH_CHUNK 16384u
#endif
static __device__ __forceinline__ void sk_prefetch_l2(const void* p, size_t bytes) {
#if defined(SK_CUDA_SIM)
  (void)p, (void)bytes;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const size_t a = (size_t)__cvta_generic_to_global(p);
  const size_t lo = (a + 15u) & ~(size_t)15u, hi = (a + bytes) & ~(size_t)15u;
  for (size_t off = lo + (size_t)threadIdx.x * SK_PREFETCH_CHUNK; off < hi;
       off += (size_t)blockDim.x * SK_PREFETCH_CHUNK) {
    const unsigned int n = (unsigned int)(hi - off < SK_PREFETCH_CHUNK ? hi - off : SK_PREFETCH_CHUNK);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(off), "r"(n) : "memory");
  }
#elif defined(__CUDA_ARCH__)
  const size_t a = (size_t)__cvta_generic_to_global(p);
  for (size_t off = (size_t)threadIdx.x * 128u; off < bytes; off += (size_t)blockDim.x * 128u)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(a + off));
#else
  (void)p, (void)bytes;  /* nvcc's host pass */
#endif
}

/* One CTA's arrival at a counter after its writes: __syncthreads first so the
 * whole CTA's writes precede thread 0's release. Call from every thread. */
static __device__ __forceinline__ void sk_cta_arrive(unsigned long long* counter) {
  __syncthreads();
  if (threadIdx.x == 0) sk_red_release_add(counter, 1ull);
}

/* One CTA's flag: value = epoch after its writes. Call from every thread. */
static __device__ __forceinline__ void sk_cta_flag_set(unsigned long long* flag, unsigned long long epoch) {
  __syncthreads();
  if (threadIdx.x == 0) sk_st_release(flag, epoch);
}

/* The grid barrier among `ctas` CTAs on a monotonic counter: the n-th barrier
 * over the counter's life completes at ctas * n. Call from every thread. */
static __device__ __forceinline__ void sk_cta_barrier(unsigned long long* counter, unsigned int ctas,
                                                      unsigned long long n) {
  __syncthreads();
  if (threadIdx.x == 0) {
    sk_red_release_add(counter, 1ull);
    sk_wait_ge(counter, (unsigned long long)ctas * n);
  }
  __syncthreads();
}

/* A self-resetting barrier among `parties` CTAs (sk_kernel_sync: kernels may
 * sync any number of times per launch). arrived counts this round; gen moves
 * on when the last party arrives. Call from every thread. */
static __device__ __forceinline__ void sk_cta_sync(unsigned int* arrived, unsigned int* gen, unsigned int parties) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned int g = sk_ld_acquire_u32(gen);
    if (sk_atom_acq_rel_add_u32(arrived, 1u) == parties - 1u) {
      sk_st_relaxed_u32(arrived, 0u);  /* nobody arrives again before gen moves (they wait below) */
      sk_st_release_u32(gen, g + 1u);
    } else {
      sk_wait_ne_u32(gen, g);
    }
  }
  __syncthreads();
}

#endif /* SUPERKERNEL_CUDA_SYNC_CUH */
