/* The cuda simulator's stand-in for <cuda_runtime.h>: the host API subset a
 * generated SuperKernel's run() uses (templates/cuda/superkernel.cu.tmpl),
 * with the real names, types and values. Launches are synchronous (the
 * engine runs the grid to completion), so streams and events order nothing
 * and are accepted as they are; memory is host memory, so a copy to a symbol
 * is memcpy. Defined by sim_module.h, which only the generated source
 * includes. */
#ifndef SUPERKERNEL_CUDA_SIM_CUDA_RUNTIME_H
#define SUPERKERNEL_CUDA_SIM_CUDA_RUNTIME_H

#include <stddef.h>
#include <string.h>

#include "superkernel/cuda/sim_abi.h"

typedef int cudaError_t;
#define cudaSuccess 0
#define cudaErrorInvalidValue 1

typedef struct sk_cuda_sim_stream* cudaStream_t;
typedef struct sk_cuda_sim_event* cudaEvent_t;

enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
                      cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
#define cudaEventDisableTiming 0x02

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};

extern "C" __attribute__((visibility("hidden"))) const sk_cuda_sim_ops* sk_cuda_sim_module_ops;
extern "C" __attribute__((visibility("hidden"))) int sk_cuda_sim_last_error;

static inline cudaError_t cudaGetLastError() {
  const int e = sk_cuda_sim_last_error;
  sk_cuda_sim_last_error = 0;
  return e;
}
static inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  if (attr != cudaDevAttrMultiProcessorCount) return cudaErrorInvalidValue;
  *value = sk_cuda_sim_module_ops->multiprocessors();
  return cudaSuccess;
}
template <class F>
static inline cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute, int) {
  return cudaSuccess;
}
template <class F>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F*, int threads, size_t smem) {
  *n = sk_cuda_sim_module_ops->ctas_per_sm((unsigned)threads, smem);
  return cudaSuccess;
}
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = nullptr;
  return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }
template <class T>
static inline cudaError_t cudaMemcpyToSymbolAsync(T& symbol, const void* src, size_t count, size_t offset,
                                                  cudaMemcpyKind, cudaStream_t) {
  if (offset + count > sizeof symbol) return cudaErrorInvalidValue;
  memcpy(reinterpret_cast<char*>(&symbol) + offset, src, count);
  return cudaSuccess;
}

template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset,
                                              cudaMemcpyKind) {
  if (offset + count > sizeof symbol) return cudaErrorInvalidValue;
  memcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, count);
  return cudaSuccess;
}

#endif
