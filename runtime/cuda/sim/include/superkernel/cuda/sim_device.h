/* The CUDA subset the cuda simulator (target cuda-sim) compiles device code
 * against. The recipe force-includes this header (-include) into every
 * simulated compile, before the source's own includes, so the same .cu text
 * that nvcc builds for a GPU builds as host C++ here.
 *
 * What it maps and why:
 *  - qualifiers: __global__, __device__, __host__, __constant__ vanish (one
 *    address space); __shared__ becomes `static __thread`: every CTA is one
 *    host thread (sim_abi.h), so thread-local storage is exactly CTA-local;
 *  - threadIdx / blockIdx / blockDim / gridDim read the module's current CTA
 *    (the engine sets it; threadIdx follows the running fiber);
 *  - __syncthreads, __syncwarp, warp shuffles and __nanosleep switch fibers
 *    (the engine's scheduler): they are the only places where another thread
 *    of the same CTA runs, so a kernel that spins on shared memory without
 *    __nanosleep hangs here (the watchdog says so) where a GPU would not;
 *  - __noinline__ is NOT defined: glibc and libstdc++ spell
 *    __attribute__((__noinline__)) and a macro would break them; the
 *    project's headers use SK_NOINLINE (kernel.cuh).
 */
#ifndef SUPERKERNEL_CUDA_SIM_DEVICE_H
#define SUPERKERNEL_CUDA_SIM_DEVICE_H

#ifndef __cplusplus
#error "the cuda simulator compiles device code as C++ (-x c++)"
#endif

#define SK_CUDA_SIM 1

/* Every system header a kernel may use, before the qualifier macros below
 * (glibc declares __expf itself). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "superkernel/cuda/sim_abi.h"

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static __thread
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

/* Defined once per module by sim_module.h (the generated source includes it). */
extern "C" __attribute__((visibility("hidden"))) const sk_cuda_sim_ops* sk_cuda_sim_module_ops;
extern __attribute__((visibility("hidden"))) __thread sk_cuda_sim_cta* sk_cuda_sim_self;

typedef sk_cuda_sim_dim3 uint3;

#define threadIdx (sk_cuda_sim_self->current->idx)
#define blockIdx (sk_cuda_sim_self->block_idx)
#define blockDim (sk_cuda_sim_self->block_dim)
#define gridDim (sk_cuda_sim_self->grid_dim)
#define warpSize 32

static inline void __syncthreads() { sk_cuda_sim_module_ops->sync_threads(sk_cuda_sim_self); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { sk_cuda_sim_module_ops->sync_warp(sk_cuda_sim_self, mask); }
static inline void __nanosleep(unsigned ns) { sk_cuda_sim_module_ops->nanosleep(sk_cuda_sim_self, ns); }
static inline void __trap() { sk_cuda_sim_module_ops->trap(sk_cuda_sim_self, "__trap()"); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline long long clock64() { return (long long)sk_cuda_sim_module_ops->globaltimer(sk_cuda_sim_self); }

static inline unsigned sk_cuda_sim_lane() { return sk_cuda_sim_self->current->linear & 31u; }

template <class T>
static inline T sk_cuda_sim_shfl(unsigned mask, T v, unsigned src) {
  static_assert(sizeof(T) <= 8, "the simulator shuffles values of at most 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof v);
  bits = sk_cuda_sim_module_ops->shfl(sk_cuda_sim_self, mask, bits, src);
  T out;
  memcpy(&out, &bits, sizeof out);
  return out;
}
/* Source lanes as the CUDA guide defines them per width-sized segment; a
 * source outside the segment gives the caller its own value. */
template <class T>
static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const unsigned lane = sk_cuda_sim_lane(), base = lane & ~(unsigned)(width - 1);
  return sk_cuda_sim_shfl(mask, v, base + ((unsigned)src & (unsigned)(width - 1)));
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const unsigned lane = sk_cuda_sim_lane(), src = lane ^ (unsigned)lane_mask;
  const bool inside = (src & ~(unsigned)(width - 1)) == (lane & ~(unsigned)(width - 1));
  return sk_cuda_sim_shfl(mask, v, inside ? src : lane);
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned lane = sk_cuda_sim_lane();
  const bool inside = (lane & (unsigned)(width - 1)) + delta < (unsigned)width;
  return sk_cuda_sim_shfl(mask, v, inside ? lane + delta : lane);
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned lane = sk_cuda_sim_lane();
  const bool inside = (lane & (unsigned)(width - 1)) >= delta;
  return sk_cuda_sim_shfl(mask, v, inside ? lane - delta : lane);
}

/* The 16-byte vector types of CUDA's vector_types.h that kernels load
 * (kernel.cuh's sk_ld_global_v4): same layout and alignment as nvcc's. */
struct __align__(16) float4 { float x, y, z, w; };
struct __align__(16) uint4 { unsigned x, y, z, w; };
/* One 16-byte load. A GPU faults on a vector load from an address that is not
 * 16-byte aligned, where the host would just read: trap with the address, so
 * a kernel's alignment mistake fails here as it would on the device. */
static inline uint4 sk_cuda_sim_ld16(const void* p) {
  if (((uintptr_t)p & 15u) != 0) sk_cuda_sim_module_ops->trap(sk_cuda_sim_self, "misaligned 16-byte load (a GPU faults)");
  uint4 v;
  memcpy(&v, p, 16);
  return v;
}
/* One 16-byte store; the same alignment trap as the load. */
static inline void sk_cuda_sim_st16(void* p, uint4 v) {
  if (((uintptr_t)p & 15u) != 0) sk_cuda_sim_module_ops->trap(sk_cuda_sim_self, "misaligned 16-byte store (a GPU faults)");
  memcpy(p, &v, 16);
}
/* IEEE binary16 bits to float, exactly (what cvt.f32.f16 gives on a GPU):
 * normals and subnormals rescaled by 2^112, inf and NaN kept. */
static inline float sk_cuda_sim_f16_to_f32(uint16_t h) {
  const uint32_t em = (uint32_t)(h & 0x7fffu) << 13;
  float f;
  memcpy(&f, &em, 4);
  f *= 5.192296858534828e+33f; /* 2^112 */
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((h & 0x7c00u) == 0x7c00u) u = 0x7f800000u | em;
  u |= (uint32_t)(h & 0x8000u) << 16;
  memcpy(&f, &u, 4);
  return f;
}

static inline float __int_as_float(int v) { float f; memcpy(&f, &v, 4); return f; }
static inline float __uint_as_float(unsigned v) { float f; memcpy(&f, &v, 4); return f; }
static inline int __float_as_int(float f) { int v; memcpy(&v, &f, 4); return v; }
static inline unsigned __float_as_uint(float f) { unsigned v; memcpy(&v, &f, 4); return v; }
static inline float __fdividef(float a, float b) { return a / b; }
/* Renamed: C23 puts rsqrtf in math.h, and newer glibc declares it. */
#define rsqrtf sk_cuda_sim_rsqrtf
static inline float sk_cuda_sim_rsqrtf(float x) { return 1.0f / sqrtf(x); }
template <class T>
static inline T __ldg(const T* p) { return *p; }

template <class T>
static inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline float atomicAdd(float* p, float v) {
  float old, want;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  do {
    want = old + v;
  } while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
template <class T>
static inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
template <class T>
static inline T atomicCAS(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
template <class T>
static inline T atomicMax(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  return old;
}

#endif /* SUPERKERNEL_CUDA_SIM_DEVICE_H */
