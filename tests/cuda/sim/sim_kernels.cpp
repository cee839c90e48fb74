// CUDA code for the simulator engine's tests (CudaSimTest.cpp), compiled the
// way the cuda-sim recipe compiles kernels: as C++ with sim_device.h
// force-included (tests/cuda/tests.cmake). This file plays the generated
// module's part too: it includes sim_module.h (the ops table, the CTA
// pointer, sk_cuda_sim_enter) once.
#include "superkernel/cuda/kernel.cuh"
#include "superkernel/cuda/sim_module.h"
#include "sim/sim_kernels.h"

namespace {

__device__ void reduceKernel(void* p) {
  auto* a = static_cast<SimReduceArgs*>(p);
  __shared__ float scratch[32];
  const uint32_t b = blockIdx.x;
  float v = 0.0f;
  for (uint32_t i = threadIdx.x; i < a->n; i += blockDim.x) v += a->x[b * a->n + i];
  v = sk_cta_sum(v, scratch);
  float m = sk_cta_max(a->x[b * a->n + (threadIdx.x % a->n)], scratch);
  if (threadIdx.x == 0) {
    a->sum[b] = v;
    a->max[b] = m;
  }
  __syncthreads();
  // Every thread got the same total.
  if (v != a->sum[b]) __trap();
}

__device__ void smemKernel(void* p) {
  auto* a = static_cast<SimSmemArgs*>(p);
  auto* buf = static_cast<uint32_t*>(sk_cuda_sim_self->dynamic_smem);
  buf[threadIdx.x] = threadIdx.x * 3u + blockIdx.x;
  __syncthreads();
  // Read a neighbour's write: only correct if the barrier held everybody.
  a->out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}

// Half a warp at the CTA barrier, the other half at a shuffle: neither can complete.
__device__ void divergentKernel(void*) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    (void)__shfl_xor_sync(0xffffffffu, 1.0f, 1);
  }
}

__device__ void earlyReturnKernel(void* p) {
  auto* a = static_cast<SimSmemArgs*>(p);
  if (threadIdx.x >= 40) return;  // the last threads exit; the barrier counts only live ones
  __syncthreads();
  a->out[threadIdx.x] = 1;
}

__device__ void partialMaskKernel(void*) { (void)__shfl_xor_sync(0xffffu, 1.0f, 1); }

__device__ void trapKernel(void*) {
  if (blockIdx.x == 2 && threadIdx.x == 5) __trap();
}

// Consumer CTA 1 waits for producer CTA 0's flag, which CTA 0 never sets.
__device__ void hangKernel(void* p) {
  auto* a = static_cast<SimFlagArgs*>(p);
  if (blockIdx.x == 1 && threadIdx.x == 0) sk_wait_ge(a->flag, 1ull);
  __syncthreads();
}

// Every CTA adds its block index into slot data[b] after waiting for the
// previous CTA's flag (a chain across CTAs); with `wait` off the order is
// whatever the skew makes it.
__device__ void chainKernel(void* p) {
  auto* a = static_cast<SimChainArgs*>(p);
  const uint32_t b = blockIdx.x;
  if (threadIdx.x == 0 && b > 0 && a->wait) sk_wait_ge(&a->flags[b - 1], 1ull);
  __syncthreads();
  // Relaxed atomics: without the waits the CTAs race on purpose (and TSan instruments this file).
  if (threadIdx.x == 0) {
    const uint32_t prev = b > 0 ? __atomic_load_n(&a->data[b - 1], __ATOMIC_RELAXED) : 0;
    __atomic_store_n(&a->data[b], prev + 1, __ATOMIC_RELAXED);
  }
  sk_cta_flag_set(&a->flags[b], 1ull);
}

// Half a warp shuffles, the other half calls __syncwarp.
__device__ void warpMixKernel(void*) {
  if (threadIdx.x < 16) {
    (void)__shfl_xor_sync(0xffffffffu, 1.0f, 1);
  } else {
    __syncwarp();
  }
}

// CTA 0's thread 0 spins on a word without __nanosleep (nothing can stop it); CTA 1 waits on a flag nobody sets.
__device__ void spinKernel(void* p) {
  auto* a = static_cast<SimSpinArgs*>(p);
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
      }
    } else {
      sk_wait_ge(a->flag, 1ull);
    }
  }
  __syncthreads();
}

// CTA 0's thread 0 hands a collective to the engine (the collective kernel's shape, collective_kernel.cu) and
// the CTA reads the result after the barrier; CTA 1 sets a flag meanwhile.
__device__ void collectiveKernel(void* p) {
  auto* a = static_cast<SimCollectiveArgs*>(p);
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) {
      const sk_cuda_sim_collective_args c = {a->in, a->out, a->n, a->n, 0, 1, a->tag};
      sk_cuda_sim_module_ops->collective(sk_cuda_sim_self, &c);
    }
    __syncthreads();
    a->seen[threadIdx.x] = a->out[0];
  } else if (threadIdx.x == 0) {
    __atomic_store_n(a->flag, 1ull, __ATOMIC_RELEASE);
  }
}

}  // namespace

extern "C" {
SimKernelFn simWarpMixKernel = warpMixKernel;
SimKernelFn simSpinKernel = spinKernel;
SimKernelFn simCollectiveKernel = collectiveKernel;
SimKernelFn simReduceKernel = reduceKernel;
SimKernelFn simSmemKernel = smemKernel;
SimKernelFn simDivergentKernel = divergentKernel;
SimKernelFn simEarlyReturnKernel = earlyReturnKernel;
SimKernelFn simPartialMaskKernel = partialMaskKernel;
SimKernelFn simTrapKernel = trapKernel;
SimKernelFn simHangKernel = hangKernel;
SimKernelFn simChainKernel = chainKernel;
sk_cuda_sim_enter_fn simEnter = sk_cuda_sim_enter;
sk_cuda_sim_bind_fn simBind = sk_cuda_sim_bind;
}
