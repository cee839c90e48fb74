/* superkernel cuda: what generated SuperKernel sources include (not sub-kernels).
 *
 * The host entry's ABI is the cpu one (DESIGN section 6):
 *   extern "C" int run(uint32_t block_dim, void* stream, const sk_run_args* args)
 * with `stream` a cudaStream_t (NULL: the legacy default stream) and the
 * buffers device pointers in manifest order. Negative returns reject a bad
 * call before anything is enqueued; a positive return is the cudaError_t of
 * the failed runtime call.
 */
#ifndef SUPERKERNEL_CUDA_SUPERKERNEL_RT_CUH
#define SUPERKERNEL_CUDA_SUPERKERNEL_RT_CUH

#include <stdint.h>

#include "superkernel/cuda/kernel.cuh"

#ifdef SK_CUDA_SIM
#include "superkernel/cuda/sim_module.h"
/* The simulator: the launch runs to completion; its error is cudaGetLastError's. */
#define SK_LAUNCH_SUPERKERNEL(grid, threads, smem, stream, epoch) \
  sk_cuda_sim_launch_epoch(sk_superkernel, grid, threads, smem, stream, epoch)
#define SK_DYNAMIC_SMEM(name) unsigned char* const name = static_cast<unsigned char*>(sk_cuda_sim_self->dynamic_smem)
#else
#define SK_LAUNCH_SUPERKERNEL(grid, threads, smem, stream, epoch) \
  sk_superkernel<<<grid, threads, smem, stream>>>(epoch)
#define SK_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#endif

/* The Graph + PDL baseline's variant of an unfused step (sk-compile --baselines graph-pdl): only where the
 * generated text defines SK_CUDA_PDL (a plan compiled with CompileRequest::graphPdl), so every other step's text
 * and build stay as they are:
 *  - device: every CTA lets the next kernel start launching (griddepcontrol.launch_dependents) as soon as it
 *    enters its first block, then waits until the previous kernel completed and its writes are visible
 *    (griddepcontrol.wait) before the block's first read: an unfused op may read what any earlier op wrote and
 *    write what an earlier op reads, so nothing of the op's own work may come before the wait. Where a launch was
 *    not programmatic (a plain launch, the first kernel of a graph) the wait returns at once. The queue's
 *    preload-data prefetches (L2, inputs no op writes) are printed before sk_run_op and so run before the wait:
 *    a schedule that gave unfused steps their weight slices would make this the weights-before-wait baseline.
 *  - host: run() records its launch for sk_last_launch, which the cuda device reads to launch the same kernel
 *    with cudaLaunchKernelExC and programmatic stream serialization inside a graph capture
 *    (src/backends/cuda/CudaGraph.cpp). */
#if defined(SK_CUDA_PDL) && SK_CUDA_PDL
typedef struct sk_kernel_launch {
  const void* func;  /* the __global__ kernel (its host stub: what cudaLaunchKernelExC takes) */
  uint32_t grid, threads, smem, reserved;
  unsigned long long epoch; /* its only argument */
} sk_kernel_launch;

static __device__ __forceinline__ void sk_pdl_enter(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static sk_kernel_launch sk_pdl_last; /* run() holds the module's mutex while it writes it */
#undef SK_LAUNCH_SUPERKERNEL
#ifdef SK_CUDA_SIM
#define SK_LAUNCH_SUPERKERNEL(grid, threads, smem, stream, epoch)                                                \
  do {                                                                                                          \
    sk_kernel_launch sk_l = {(const void*)sk_superkernel, (uint32_t)(grid), (uint32_t)(threads), (uint32_t)(smem), \
                             0u, (unsigned long long)(epoch)};                                                  \
    sk_pdl_last = sk_l;                                                                                         \
    sk_cuda_sim_launch_epoch(sk_superkernel, grid, threads, smem, stream, epoch);                              \
  } while (0)
#else
#define SK_LAUNCH_SUPERKERNEL(grid, threads, smem, stream, epoch)                                                \
  do {                                                                                                          \
    sk_kernel_launch sk_l = {(const void*)sk_superkernel, (uint32_t)(grid), (uint32_t)(threads), (uint32_t)(smem), \
                             0u, (unsigned long long)(epoch)};                                                  \
    sk_pdl_last = sk_l;                                                                                         \
    sk_superkernel<<<grid, threads, smem, stream>>>(epoch);                                                     \
  } while (0)
#endif

/* The last launch run() made (0), or -1 before the first. Exported (the version script lists it). */
extern "C" __attribute__((visibility("default"))) int sk_last_launch(sk_kernel_launch* out) {
  if (!sk_pdl_last.func) return -1;
  *out = sk_pdl_last;
  return 0;
}
#endif

#define SK_ABI_VERSION 1

typedef struct sk_run_args {
  uint32_t abi_version;   /* SK_ABI_VERSION */
  uint32_t num_buffers;   /* the SuperKernel's buffers, in its manifest order */
  void* const* buffers;   /* device pointers */
} sk_run_args;

/* run()'s rejections (the cpu values, plus cuda's own). */
#define SK_RUN_BAD_ABI (-1)
#define SK_RUN_BAD_BUFFER_COUNT (-2)
#define SK_RUN_BAD_BLOCK_DIM (-3)
#define SK_RUN_NOT_CO_RESIDENT (-6) /* the grid's CTAs cannot all be resident: a grid wait could deadlock */

/* A profiling record (profiling=1): what thread 0 of a CTA did when, on the
 * GPU's %globaltimer. kind is the cpu runtime's SK_PROF_* numbering. */
enum sk_prof_kind { SK_PROF_OP_BEGIN = 0, SK_PROF_OP_END = 1, SK_PROF_WAIT_BEGIN = 2, SK_PROF_WAIT_END = 3 };
typedef struct sk_prof_rec {
  uint32_t op;   /* op index in the SuperKernel */
  uint32_t kind; /* sk_prof_kind */
  unsigned long long ns;
} sk_prof_rec;

/* One CTA's view of a launch. */
typedef struct sk_env {
  sk_ctx ctx;
  sk_sync_area area;
  sk_prof_rec* prof;     /* this CTA's record row; NULL without profiling */
  unsigned int* prof_n;  /* records written (reset by the CTA at its start) */
  uint32_t prof_slots;
} sk_env;

/* Thread 0 appends a record; a full row drops the rest (the host says so). */
static __device__ __forceinline__ void sk_prof_put(sk_env* env, uint32_t op, uint32_t kind) {
  if (threadIdx.x != 0 || !env->prof) return;
  const unsigned int i = *env->prof_n;
  if (i < env->prof_slots) {
    env->prof[i].op = op;
    env->prof[i].kind = kind;
    env->prof[i].ns = sk_globaltimer();
  }
  *env->prof_n = i + 1;
}

/* Before block b of op `op` on this CTA: reset the block's state, wait for
 * producers unless the kernel waits itself (early start). */
static __device__ __forceinline__ void sk_block_begin(sk_env* env, const sk_op_rt* op, uint32_t b) {
#if defined(SK_CUDA_PDL) && SK_CUDA_PDL
  sk_pdl_enter(); /* the Graph + PDL variant (above); a later block of the CTA passes at once */
#endif
  env->ctx.block_idx = b;
  env->ctx.block_dim = op->blocks;
  env->ctx.op = op;
  __syncthreads();  /* the previous block's readers of the state are done */
  if (threadIdx.x == 0) {
    env->ctx.state->waited = op->num_waits == 0;
    env->ctx.state->signalled = op->flag_base < 0 && op->done < 0;
  }
  __syncthreads();
  if (op->num_waits != 0 && !op->early) sk_op_wait(&env->ctx);
}

/* After the call: complete what the kernel's own points did not. */
static __device__ __forceinline__ void sk_block_end(sk_env* env) {
  if (!env->ctx.state->waited) sk_op_wait(&env->ctx);
  if (!env->ctx.state->signalled) sk_op_signal(&env->ctx);
}

#endif /* SUPERKERNEL_CUDA_SUPERKERNEL_RT_CUH */
