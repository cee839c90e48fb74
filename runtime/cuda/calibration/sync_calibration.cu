/* superkernel cuda: the sync calibration's kernel (src/backends/cuda/CudaCalibrate.cpp builds it through the
 * back end's own recipe and cache, and runs it on the device present: a GPU for target cuda, the simulator for
 * cuda-sim, which compiles this same text as host C++).
 *
 * What it measures, and why this shape (the cpu calibration's, src/backends/cpu/CpuCalibrate.cpp): not a sync
 * primitive in a tight loop but what a boundary adds to a chain of small ops that stream their own data, as a
 * fused step does. Every CTA of a persistent grid runs `ops` ops, each y = x * a + b over its own slice of
 * SK_CAL_SLICE floats of buffers larger than L2 (each op evicts the lines the previous ones touched), with one
 * kind of boundary after every op:
 *   - none (the ideal chain);
 *   - a grid barrier (sk_cta_barrier on one reused counter, what the generated code prints for a barrier);
 *   - an all-to-all counter (sk_cta_arrive on a counter of its own per op, then a wait for every CTA's arrival:
 *     what a counter edge does; the counters sit 8 bytes apart, as the SuperKernel's sk_done[] words do);
 *   - a flag (each CTA sets its own flag per op, sk_cta_flag_set, and waits for the next CTA's: a flag edge).
 * The waits are sk_op_wait's (kernel.cuh): the CTA's threads meet, thread 0 polls with sk_wait_ge, they meet
 * again. Targets are multiples of each kind's own launch count (its epoch), so no word is ever reset between
 * launches, as in the SuperKernel's sync area.
 *
 * Timing is the GPU's own clock (%globaltimer, sk_globaltimer; the simulator's is the host's steady clock): all
 * CTAs first meet at a start barrier (the launch's ramp-up is not the chain's), thread 0 of each CTA records
 * when it starts the chain and when it ends it; the chain's time is the last end minus the first start.
 *
 * The host passes everything through four buffers (run()'s args, in this order), so one module serves every
 * grid and chain length:
 *   0 x     float[ops * grid * SK_CAL_SLICE], read
 *   1 y     float[ops * grid * SK_CAL_SLICE], written
 *   2 sync  unsigned long long[2 + ops + ops * grid], zeroed once by the host, never reset:
 *           [0] the start barrier, [1] the chain's grid barrier, [2, 2 + ops) one counter per op,
 *           then one flag per op and CTA (op-major)
 *   3 ctl   unsigned long long[4 + 2 * grid], uploaded before each launch:
 *           [0] kind (SK_CAL_*), [1] that kind's launches so far including this one (its epoch),
 *           [2] launches on these sync words so far including this one (the start barrier's count), [3] ops;
 *           written back: [4 + 2c] CTA c's start, [5 + 2c] its end (ns)
 * SK_CAL_THREADS (threads per CTA) and SK_CAL_SLICE are defined by the host before this text: they are part of
 * the source, so each shape is its own cache entry. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "superkernel/cuda/superkernel_rt.cuh"

#if !defined(SK_CAL_THREADS) || !defined(SK_CAL_SLICE)
#error "sync_calibration.cu: the host defines SK_CAL_THREADS and SK_CAL_SLICE before this text"
#endif
#if SK_CAL_SLICE % SK_CAL_THREADS != 0
#error "sync_calibration.cu: SK_CAL_SLICE must be a multiple of SK_CAL_THREADS (each thread takes equal parts)"
#endif

enum { SK_CAL_IDEAL = 0, SK_CAL_BARRIER = 1, SK_CAL_COUNTER = 2, SK_CAL_FLAG = 3 };
#define SK_CAL_BUFFERS 4u

namespace {

__device__ void* sk_cal_buf[SK_CAL_BUFFERS];  // the launch's buffers (device pointers), as sk_buf in a SuperKernel

// A consumer's wait, as sk_op_wait does it: the CTA meets, thread 0 polls, the CTA meets again (its other
// threads then see what the producers wrote).
__device__ __forceinline__ void sk_cal_wait(const unsigned long long* p, unsigned long long target) {
  __syncthreads();
  if (threadIdx.x == 0) sk_wait_ge(p, target);
  __syncthreads();
}

}  // namespace

extern "C" __global__ void __launch_bounds__(SK_CAL_THREADS) sk_superkernel(unsigned long long) {
  const float* const x = static_cast<const float*>(sk_cal_buf[0]);
  float* const y = static_cast<float*>(sk_cal_buf[1]);
  unsigned long long* const sync = static_cast<unsigned long long*>(sk_cal_buf[2]);
  unsigned long long* const ctl = static_cast<unsigned long long*>(sk_cal_buf[3]);
  // Uploaded before the launch and never written during it: plain loads are current.
  const unsigned int kind = static_cast<unsigned int>(ctl[0]);
  const unsigned long long e = ctl[1];
  const unsigned long long launch = ctl[2];
  const unsigned int ops = static_cast<unsigned int>(ctl[3]);
  const unsigned int c = blockIdx.x, n = gridDim.x;
  unsigned long long* const flags = sync + 2 + ops;

  sk_cta_barrier(&sync[0], n, launch);  // every CTA starts the chain at once
  if (threadIdx.x == 0) ctl[4 + 2 * c] = sk_globaltimer();
  for (unsigned int i = 0; i < ops; ++i) {
    const size_t at = (static_cast<size_t>(i) * n + c) * SK_CAL_SLICE;
    // All of the thread's loads first, then the stores: the loads are in flight together (x and y may alias as
    // far as the compiler knows, so a load after a store would wait for the one before it), one memory latency
    // per op as in a builtin that keeps several vectors in flight.
    float v[SK_CAL_SLICE / SK_CAL_THREADS];
#pragma unroll
    for (unsigned int j = 0; j < SK_CAL_SLICE / SK_CAL_THREADS; ++j) v[j] = x[at + threadIdx.x + j * SK_CAL_THREADS];
#pragma unroll
    for (unsigned int j = 0; j < SK_CAL_SLICE / SK_CAL_THREADS; ++j)
      y[at + threadIdx.x + j * SK_CAL_THREADS] = v[j] * 1.0001f + 0.5f;
    if (kind == SK_CAL_BARRIER) {
      sk_cta_barrier(&sync[1], n, (e - 1) * ops + i + 1);
    } else if (kind == SK_CAL_COUNTER) {
      sk_cta_arrive(&sync[2 + i]);
      sk_cal_wait(&sync[2 + i], static_cast<unsigned long long>(n) * e);
    } else if (kind == SK_CAL_FLAG) {
      sk_cta_flag_set(&flags[static_cast<size_t>(i) * n + c], e);
      sk_cal_wait(&flags[static_cast<size_t>(i) * n + (c + 1) % n], e);
    }
  }
  __syncthreads();  // the chain ends when the CTA's last thread does
  if (threadIdx.x == 0) ctl[5 + 2 * c] = sk_globaltimer();
}

namespace {
pthread_mutex_t sk_run_mutex = PTHREAD_MUTEX_INITIALIZER;
unsigned long long sk_epoch;  // launches of this module (the launch macro's argument; the kernel uses ctl[2])
unsigned int sk_checked;      // the largest grid found co-resident so far

// The grid's CTAs wait for each other: a grid larger than the GPU keeps resident at once would deadlock.
int sk_check_resident(uint32_t grid) {
  if (grid <= sk_checked) return 0;
  cudaError_t err;
  int device = 0, sms = 0, per_sm = 0;
  if ((err = cudaGetDevice(&device)) != cudaSuccess) return (int)err;
  if ((err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) return (int)err;
  if ((err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sk_superkernel, SK_CAL_THREADS, 0)) != cudaSuccess)
    return (int)err;
  if ((long long)per_sm * sms < (long long)grid) return SK_RUN_NOT_CO_RESIDENT;
  sk_checked = grid;
  return 0;
}

int sk_launch(uint32_t grid, cudaStream_t stream, const sk_run_args* args) {
  int rc = sk_check_resident(grid);
  if (rc != 0) return rc;
  cudaError_t err = cudaMemcpyToSymbolAsync(sk_cal_buf, args->buffers, sizeof sk_cal_buf, 0, cudaMemcpyHostToDevice,
                                            stream);
  if (err != cudaSuccess) return (int)err;
  SK_LAUNCH_SUPERKERNEL(grid, SK_CAL_THREADS, 0, stream, sk_epoch + 1);
  if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
  ++sk_epoch;
  return 0;
}
}  // namespace

// What every cuda module exports (the recipe's version script names them): no profiling records here.
extern "C" __attribute__((visibility("default"))) void sk_profile_shape(uint32_t* ctas, uint32_t* slots) {
  *ctas = 0;
  *slots = 0;
}
extern "C" __attribute__((visibility("default"))) int sk_read_profile(unsigned int* counts, sk_prof_rec* records) {
  (void)counts;
  (void)records;
  return 0;
}

// The entry point, as a SuperKernel's: enqueue one chain of `block_dim` CTAs on `stream` and return.
extern "C" __attribute__((visibility("default"))) int run(uint32_t block_dim, void* stream, const sk_run_args* args) {
  if (!args || args->abi_version != SK_ABI_VERSION) return SK_RUN_BAD_ABI;
  if (args->num_buffers != SK_CAL_BUFFERS || !args->buffers) return SK_RUN_BAD_BUFFER_COUNT;
  if (block_dim < 1) return SK_RUN_BAD_BLOCK_DIM;
  pthread_mutex_lock(&sk_run_mutex);
  const int rc = sk_launch(block_dim, static_cast<cudaStream_t>(stream), args);
  pthread_mutex_unlock(&sk_run_mutex);
  return rc;
}
