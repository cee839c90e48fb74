/* The boundary between cuda code compiled for the simulator (target
 * cuda-sim) and the simulator's host engine (runtime/cuda/sim/src/CudaSim.cpp).
 *
 * The simulator runs the same generated SuperKernel text and the same kernel
 * sources as the cuda target, compiled by the host C++ compiler: every CTA is
 * a host thread and every CUDA thread of it a fiber on that thread, switched
 * at __syncthreads, warp shuffles and __nanosleep (sim_device.h). What crosses
 * threads (barriers, shuffles, the sync area's waits, launches) calls through
 * `ops`, bound once per loaded module (sk_cuda_sim_bind); the module's
 * thread-local CTA pointer is set by the engine on each CTA thread
 * (sk_cuda_sim_enter), so a module and the program never share it.
 *
 * C, not C++: fixed and versioned (SK_CUDA_SIM_ABI), since modules built by
 * one build may be run by another's engine. */
#ifndef SUPERKERNEL_CUDA_SIM_ABI_H
#define SUPERKERNEL_CUDA_SIM_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: the collective entry (ops->collective, sk_cuda_sim_collective_args). */
#define SK_CUDA_SIM_ABI 2u

typedef struct sk_cuda_sim_dim3 {
  unsigned int x, y, z;
} sk_cuda_sim_dim3;

/* One simulated CUDA thread. */
typedef struct sk_cuda_sim_thread {
  sk_cuda_sim_dim3 idx; /* threadIdx */
  uint32_t linear;      /* x + y * bx + z * bx * by */
} sk_cuda_sim_thread;

typedef struct sk_cuda_sim_cta sk_cuda_sim_cta;
typedef struct sk_cuda_sim_ops sk_cuda_sim_ops;

/* One collective op over a group of ranks (docs/COLLECTIVES.md): what the
 * cuda collective kernel (collective_kernel.cu) hands the engine, laid out as
 * the cpu runtime's sk_collective_args. `in` / `out` are device pointers of
 * this rank's simulated GPU (host memory here); desc is
 * kind | reduce << 8 | dtype << 16, ranks the group as a bit mask, tag the
 * op's identity, equal on every rank that runs the same plan (its low 32 bits
 * are the FNV-1a hash of the op's name: what lets the device name the op). */
typedef struct sk_cuda_sim_collective_args {
  const void* in;
  void* out;
  int64_t n_in;
  int64_t n_out;
  uint64_t desc;
  uint64_t ranks;
  uint64_t tag;
} sk_cuda_sim_collective_args;

/* Binds the calling host thread to `cta` for code of one module. */
typedef void (*sk_cuda_sim_enter_fn)(sk_cuda_sim_cta* cta);

struct sk_cuda_sim_ops {
  uint32_t abi; /* SK_CUDA_SIM_ABI */
  /* __syncthreads(): every live thread of the CTA arrives before any leaves. */
  void (*sync_threads)(sk_cuda_sim_cta* cta);
  /* __syncwarp(mask) (full mask only). */
  void (*sync_warp)(sk_cuda_sim_cta* cta, uint32_t mask);
  /* A warp shuffle: every lane of the calling thread's warp gives `value` and
   * gets lane src_lane's (its own when src_lane is outside the warp). */
  uint64_t (*shfl)(sk_cuda_sim_cta* cta, uint32_t mask, uint64_t value, uint32_t src_lane);
  /* Wait until *p >= target (64-bit) / *p != value (32-bit), acquire. */
  void (*wait_ge_u64)(sk_cuda_sim_cta* cta, const unsigned long long* p, unsigned long long target);
  void (*wait_ne_u32)(sk_cuda_sim_cta* cta, const unsigned int* p, unsigned int value);
  /* __nanosleep(ns): lets the CTA's other threads and the other CTAs run. */
  void (*nanosleep)(sk_cuda_sim_cta* cta, unsigned int ns);
  /* %globaltimer: nanoseconds, one clock for every CTA. */
  uint64_t (*globaltimer)(sk_cuda_sim_cta* cta);
  /* __trap() / a failed device-side check: the launch fails with `what`. */
  void (*trap)(sk_cuda_sim_cta* cta, const char* what);
  /* Runs kernel(arg) on grid x block threads to completion (launches are
   * synchronous in the simulator). Returns 0, or a cuda-style error code;
   * the message is the engine's (sk::cuda_sim::lastLaunchError). */
  int (*launch)(sk_cuda_sim_enter_fn enter, sk_cuda_sim_dim3 grid, sk_cuda_sim_dim3 block, size_t smem,
                void (*kernel)(void* arg), void* arg);
  /* cudaDevAttrMultiProcessorCount of the simulated GPU, and how many CTAs of
   * `threads` threads and `smem` dynamic bytes one SM holds at once. */
  int (*multiprocessors)(void);
  int (*ctas_per_sm)(unsigned int threads, size_t smem);
  /* One collective, called by one thread of the CTA (the others wait at a
   * __syncthreads): the engine runs it on the CTA's host thread through the
   * communicator of the device that launched the grid, while the other CTAs
   * go on. Returns 0; on failure (a peer that disagrees or never answers, no
   * communicator) the launch fails with the communicator's error naming the
   * op and this call does not return. A GPU build has no such entry: there
   * the CTA would drive the exchange itself with NCCL's device API or
   * NVSHMEM on registered buffers (docs/COLLECTIVES.md). */
  int (*collective)(sk_cuda_sim_cta* cta, const sk_cuda_sim_collective_args* args);
};

/* One CTA as its code sees it. The engine owns it; `current` is the running
 * thread (the scheduler sets it before switching to a thread). */
struct sk_cuda_sim_cta {
  const sk_cuda_sim_ops* ops;
  void* engine;
  sk_cuda_sim_dim3 block_idx;
  sk_cuda_sim_dim3 grid_dim;
  sk_cuda_sim_dim3 block_dim;
  void* dynamic_smem; /* extern __shared__ memory, 16-byte aligned, NULL if none */
  const sk_cuda_sim_thread* current;
};

/* Exported by every simulated shared object (sim_module.h defines them). */
typedef void (*sk_cuda_sim_bind_fn)(const sk_cuda_sim_ops* ops);

/* Launch error codes (cudaError_t values with the same meaning). */
#define SK_CUDA_SIM_ERR_LAUNCH_FAILURE 719     /* cudaErrorLaunchFailure: a trap, a hang, a stuck barrier */
#define SK_CUDA_SIM_ERR_INVALID_VALUE 1        /* cudaErrorInvalidValue: a bad grid / block / smem */
#define SK_CUDA_SIM_ERR_LAUNCH_OUT_OF_RESOURCES 701

#ifdef __cplusplus
}
#endif

#endif
