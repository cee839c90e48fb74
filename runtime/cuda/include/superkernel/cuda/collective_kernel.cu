/* The kernel every collective op lowers to on the real cuda target (docs/COLLECTIVES.md, "On a GPU: NCCL's
 * device API"; src/plan/Collectives.cpp makes its launches: one block, buffers "all", COLL_T the element type,
 * SK_COLL_DTYPE the op list's dtype name, SK_COLL_MAX_BYTES the plan's largest collective input of this dtype).
 * The contract and scalars are the simulator's (runtime/cuda/sim/.../collective_kernel.cu): the SuperKernel
 * waits for the producers of `in` before the call and signals the consumers of `out` after it; the other CTAs
 * run the ops that do not depend on it (early start).
 *
 * What the CTA does, over the NCCL window the host registered before the SuperKernel's first run
 * (src/backends/cuda/CudaNccl.cpp: ncclMemAlloc + ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC)):
 *   1. copies `in` into this rank's data slot of its own window;
 *   2. a barrier over the group's members (arrive: a release store into each peer's inbox through
 *      ncclGetLsaPointer; wait: acquire loads of this rank's inbox until every member has arrived);
 *   3. reads every member's slot (ncclGetLsaPointer: NVLink loads) in GROUP ORDER and writes `out`, so every
 *      rank combines the same values in the same order and the ranks are bit-identical, as on cpu (the cpu
 *      communicator's combine: acc = in_0; acc = acc + in_j, or acc < in_j ? in_j : acc, for j = 1..g-1);
 *   4. a second barrier, so no member overwrites its slot (the next collective of this window) while a peer
 *      still reads it.
 *
 * Why not NCCL's own ncclLsaBarrierSession: it spans the whole LSA team (every rank of the node must arrive)
 * and its wait has no bound. A collective's group may be a subset of the ranks (two tensor-parallel groups
 * in a 4-rank run), and a wait here must end with an error, never hang the GPU: so the barrier is pairwise
 * between the group's members (arrival counts per peer, kept in the window), and each wait has a
 * %globaltimer deadline (the binding's wait_ns, SK_WAIT_TIMEOUT_MS on the host) after which the CTA prints
 * the op's tag, the peer that never arrived and traps (the launch fails; the host reports it).
 *
 * Pairs of ranks meet at their collectives in plan order (every rank runs the same plan: the planner's
 * collective signature), so the n-th arrival of rank a at rank b is always the same collective on both.
 *
 * Built for the GPU only: nvcc with NCCL's headers (CUDA 13's toolkit ships them in its include dir). */
#include "superkernel/cuda/kernel.cuh"

#ifdef SK_CUDA_SIM
#error "this is the GPU's collective kernel; target cuda-sim uses runtime/cuda/sim/.../collective_kernel.cu"
#endif

#include <nccl.h>
#include <nccl_device.h>

#ifndef SK_COLL_DTYPE
#error "SK_COLL_DTYPE (the collective's dtype name) is set by the planner (src/plan/Collectives.cpp)"
#endif
#ifndef SK_COLL_MAX_BYTES
#error "SK_COLL_MAX_BYTES (the plan's largest collective input in bytes) is set by the planner"
#endif

/* The binding the host writes once per loaded SuperKernel (CudaNccl.h's NcclBinding, field for field). */
typedef struct sk_nccl_binding {
  ncclWindow_t window;           /* this module's registered window (NULL: not bound: trap) */
  unsigned long long data_off;   /* offset of the data slot in every rank's window */
  unsigned long long data_bytes; /* the slot's size (>= SK_COLL_MAX_BYTES of every dtype of the plan) */
  unsigned long long wait_ns;    /* a barrier wait's limit (0: unbounded) */
  int rank;                      /* this rank (NCCL world = the Session's communicator) */
  int nranks;
  int lsa_base;                  /* world rank of LSA rank 0 (LSA rank of r = r - lsa_base) */
  int lsa_size;
} sk_nccl_binding;

/* The window's layout before the data slot (offsets in bytes; CudaNccl.cpp sizes and zeroes it):
 * inbox[64]: u64, inbox[p] = arrivals of world rank p at this rank, written by p;
 * sent[64]:  u64, sent[p] = arrivals of this rank at p, written by this rank only. */
#define SK_NCCL_INBOX_OFF 0ull
#define SK_NCCL_SENT_OFF 512ull
/* lock: u32, held by the CTA whose collective uses this window now (below). */
#define SK_NCCL_LOCK_OFF 1024ull

#define SK_NCCL_CAT2(a, b) a##b
#define SK_NCCL_CAT(a, b) SK_NCCL_CAT2(a, b)
#define SK_NCCL_BINDING SK_NCCL_CAT(sk_nccl_binding_, SK_COLL_DTYPE)
#define SK_NCCL_BIND SK_NCCL_CAT(sk_nccl_bind_, SK_COLL_DTYPE)
#define SK_NCCL_MAX_BYTES SK_NCCL_CAT(sk_nccl_max_bytes_, SK_COLL_DTYPE)
#define SK_NCCL_IS_BOUND SK_NCCL_CAT(sk_nccl_is_bound_, SK_COLL_DTYPE)

/* One per sub-kernel object (one object per dtype): `static`, since the objects are device-linked together. */
static __device__ sk_nccl_binding SK_NCCL_BINDING;

static __device__ __forceinline__ void sk_nccl_st_release_sys(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ unsigned long long sk_nccl_ld_acquire_sys(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

static __device__ __noinline__ void sk_nccl_timeout(const sk_nccl_binding* b, uint64_t tag, uint64_t desc, int peer,
                                                    unsigned long long want, int phase) {
  /* The op's name is the host's: the tag's low 32 bits are FNV-1a of it (support/CollectiveTag.h), the
   * manifest's ops list the names. */
  printf("superkernel: collective op (tag %016llx, name hash %08x, desc %llx) on rank %d: rank %d did not arrive "
         "at barrier %d (arrival %llu) within %llu ns (a rank died, hangs, or runs another plan)\n",
         (unsigned long long)tag, (unsigned)(tag & 0xffffffffu), (unsigned long long)desc, b->rank, peer, phase,
         want, b->wait_ns);
  __trap();
}

/* One collective of this SuperKernel at a time in its window: with stream-fusion=1 collectives of different
 * queues may run on different CTAs at once, and they share the slot and the arrival counts. A CTA that cannot
 * take the window within the wait limit traps (two ranks that reach such collectives in different orders end
 * here, as on cpu they end with the mismatch error). */
static __device__ void sk_nccl_lock(const sk_nccl_binding* b, char* local, uint64_t tag) {
  if (threadIdx.x == 0) {
    unsigned int* lock = (unsigned int*)(local + SK_NCCL_LOCK_OFF);
    const unsigned long long start = sk_globaltimer();
    for (unsigned int spin = 0; atomicCAS(lock, 0u, 1u) != 0u; ++spin)
      if (b->wait_ns && (spin & 255u) == 255u && sk_globaltimer() - start > b->wait_ns) {
        printf("superkernel: collective op (tag %016llx, name hash %08x) on rank %d: another collective of this "
               "SuperKernel held its NCCL window for %llu ns (collectives of different queues reached in "
               "different orders on different ranks?)\n",
               (unsigned long long)tag, (unsigned)(tag & 0xffffffffu), b->rank, b->wait_ns);
        __trap();
      }
    __threadfence();
  }
  __syncthreads();
}

static __device__ void sk_nccl_unlock(char* local) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicExch((unsigned int*)(local + SK_NCCL_LOCK_OFF), 0u);
  }
}

/* All threads: the group's members arrive at each other and wait for each other (thread i handles the i-th
 * other member, in a loop over blockDim.x), then a CTA barrier. Writes made by the CTA before it are visible
 * to every member after it (the CTA barrier before the release store: NCCL's LSA barrier does the same). */
static __device__ void sk_nccl_group_barrier(const sk_nccl_binding* b, char* local, const int* members, int g,
                                             uint64_t tag, uint64_t desc, int phase) {
  __syncthreads();
  unsigned long long* inbox = (unsigned long long*)(local + SK_NCCL_INBOX_OFF);
  unsigned long long* sent = (unsigned long long*)(local + SK_NCCL_SENT_OFF);
  for (int i = threadIdx.x; i < g; i += blockDim.x) {
    const int peer = members[i];
    if (peer == b->rank) continue;
    const unsigned long long n = sent[peer] + 1;
    sent[peer] = n;
    unsigned long long* theirs = (unsigned long long*)ncclGetLsaPointer(
        b->window, SK_NCCL_INBOX_OFF + sizeof(unsigned long long) * (unsigned)b->rank, peer - b->lsa_base);
    sk_nccl_st_release_sys(theirs, n);
    const unsigned long long start = sk_globaltimer();
    for (unsigned int spin = 0; sk_nccl_ld_acquire_sys(&inbox[peer]) < n; ++spin)
      if (b->wait_ns && (spin & 255u) == 255u && sk_globaltimer() - start > b->wait_ns)
        sk_nccl_timeout(b, tag, desc, peer, n, phase);
  }
  __syncthreads();
}

/* The cpu communicator's combine, element by element, in group order (MpiCommunicator.cpp's combine). */
template <typename T>
static __device__ __forceinline__ T sk_nccl_combine(T acc, T x, uint32_t reduce) {
  return reduce == 2 ? (acc < x ? x : acc) : T(acc + x);
}

SK_KERNEL void sk_collective_kernel(const sk_ctx* ctx, const COLL_T* in, COLL_T* out, int64_t n_in, int64_t n_out,
                                    uint64_t desc, uint64_t ranks, uint64_t tag) {
  (void)ctx;  /* the SuperKernel's sk_block_begin has waited for the producers (a CTA barrier) */
  const sk_nccl_binding* b = &SK_NCCL_BINDING;
  const uint32_t kind = uint32_t(desc & 0xff), reduce = uint32_t((desc >> 8) & 0xff);
  const int64_t bytes_in = n_in * (int64_t)sizeof(COLL_T);
  if (b->window == NULL || bytes_in > (int64_t)b->data_bytes) {
    if (threadIdx.x == 0)
      printf("superkernel: collective op (tag %016llx, name hash %08x) on the cuda target: %s (%lld bytes, window "
             "slot %llu)\n",
             (unsigned long long)tag, (unsigned)(tag & 0xffffffffu),
             b->window == NULL ? "no NCCL window bound (the SuperKernel was not loaded by the cuda device)"
                               : "input larger than the NCCL window's slot",
             (long long)bytes_in, b->data_bytes);
    __trap();
  }
  int members[64];
  int g = 0, me = -1;
  for (int r = 0; r < 64; ++r)
    if (ranks >> r & 1) {
      if (r == b->rank) me = g;
      members[g++] = r;
    }
  if (me < 0 || members[g - 1] >= b->nranks) {
    if (threadIdx.x == 0)
      printf("superkernel: collective op (tag %016llx) on rank %d: the group (mask %llx) is not within this run's "
             "%d ranks or lacks this rank\n",
             (unsigned long long)tag, b->rank, (unsigned long long)ranks, b->nranks);
    __trap();
  }
  char* local = (char*)ncclGetLocalPointer(b->window, 0);
  COLL_T* mine = (COLL_T*)(local + b->data_off);
  /* all_reduce / all_gather send all of `in`; reduce_scatter / all_to_all send chunk j to member j. */
  const bool chunked = kind == 2 || kind == 3;
  const int64_t per = chunked ? n_in / g : n_in;
  sk_nccl_lock(b, local, tag);
  for (int64_t i = threadIdx.x; i < n_in; i += blockDim.x) mine[i] = in[i];
  if (g == 1) {
    __syncthreads();
    for (int64_t i = threadIdx.x; i < n_out; i += blockDim.x) out[i] = mine[i];
    sk_nccl_unlock(local);
    return;
  }
  sk_nccl_group_barrier(b, local, members, g, tag, desc, 1);

  /* Member j's part for this rank, in its window (NVLink loads): its whole input, or its chunk for `me`. */
  const COLL_T* part[64];
  for (int j = 0; j < g; ++j)
    part[j] = (const COLL_T*)ncclGetLsaPointer(b->window, b->data_off, members[j] - b->lsa_base) + (chunked ? per * me : 0);
  if (kind == 0 || kind == 2) {
    /* all_reduce (out: n_in elements) and reduce_scatter (out: this rank's chunk, `per` elements). */
    for (int64_t i = threadIdx.x; i < per; i += blockDim.x) {
      COLL_T acc = part[0][i];
      for (int j = 1; j < g; ++j) acc = sk_nccl_combine<COLL_T>(acc, part[j][i], reduce);
      out[i] = acc;
    }
  } else {
    /* all_gather: out = every member's input in group order; all_to_all: out chunk j = member j's chunk for
     * this rank. Read from the windows, never from `in`, so an in-place all_to_all reads no overwritten data. */
    for (int j = 0; j < g; ++j)
      for (int64_t i = threadIdx.x; i < per; i += blockDim.x) out[per * j + i] = part[j][i];
  }
  sk_nccl_group_barrier(b, local, members, g, tag, desc, 2);
  sk_nccl_unlock(local);
}

/* Host side of this object, called by the cuda device before the SuperKernel's first run (CudaNccl.cpp): the
 * plan's largest input of this dtype, whether this loaded instance is bound yet (the flag lives and dies with
 * it), and the binding's copy into this object's device global. Exported from the SuperKernel's shared object
 * (default visibility; its version script keeps sk_nccl_*). */
static int sk_nccl_host_bound = 0;

extern "C" __attribute__((visibility("default"))) unsigned long long SK_NCCL_MAX_BYTES(void) {
  return (unsigned long long)(SK_COLL_MAX_BYTES);
}

extern "C" __attribute__((visibility("default"))) int SK_NCCL_IS_BOUND(void) { return sk_nccl_host_bound; }

extern "C" __attribute__((visibility("default"))) int SK_NCCL_BIND(const void* binding, size_t size) {
  if (size != sizeof(sk_nccl_binding)) return -1; /* the host's NcclBinding and this struct disagree */
  const int err = (int)cudaMemcpyToSymbol(SK_NCCL_BINDING, binding, sizeof(sk_nccl_binding));
  if (err == 0) sk_nccl_host_bound = 1;
  return err;
}
