// Private: libcudart loaded with dlopen at run time, so the library builds
// and runs without CUDA installed and only the cuda device's run-time calls
// need it. One process-wide instance; the generated shared objects link the
// same libcudart (-cudart shared), so streams, pointers and the primary
// context are shared with them.
//
// Looked for in order: $SK_CUDART (a path), libcudart.so.13, libcudart.so.12,
// libcudart.so, then /usr/local/cuda/lib64/libcudart.so*.
#pragma once

#include <cstddef>
#include <string>

#include "superkernel/support/Error.h"
#include "backends/cuda/CudaLaunchAbi.h"

namespace sk {

/// The few runtime entry points the device uses (cudaError_t is int here).
struct CudaRuntimeApi {
  std::string path;  // the library that was loaded
  int (*getDeviceCount)(int*) = nullptr;
  int (*setDevice)(int) = nullptr;
  int (*getDevice)(int*) = nullptr;
  int (*deviceGetAttribute)(int*, int attr, int device) = nullptr;
  int (*malloc)(void**, size_t) = nullptr;
  int (*free)(void*) = nullptr;
  int (*memcpy)(void*, const void*, size_t, int kind) = nullptr;
  int (*streamSynchronize)(void*) = nullptr;
  int (*deviceSynchronize)() = nullptr;
  int (*getLastError)() = nullptr;
  const char* (*getErrorString)(int) = nullptr;
  const char* (*getErrorName)(int) = nullptr;

  // Optional: the graph baselines of `sk-compile --run` (CudaGraph.h). Null where this libcudart lacks them
  // (graphMissing / launchExMissing name them), which skips those baselines and nothing else.
  int (*streamCreateWithFlags)(void** stream, unsigned flags) = nullptr;
  int (*streamDestroy)(void* stream) = nullptr;
  int (*streamBeginCapture)(void* stream, int mode) = nullptr;
  int (*streamEndCapture)(void* stream, void** graph) = nullptr;
  int (*graphInstantiateWithFlags)(void** exec, void* graph, unsigned long long flags) = nullptr;
  int (*graphLaunch)(void* exec, void* stream) = nullptr;
  int (*graphExecDestroy)(void* exec) = nullptr;
  int (*graphDestroy)(void* graph) = nullptr;
  int (*launchKernelExC)(const CudaLaunchConfig* config, const void* func, void** args) = nullptr;
  std::string graphMissing;     // the graph symbols absent, comma separated ("": all there)
  std::string launchExMissing;  // "cudaLaunchKernelExC" where absent (CUDA before 11.8)

  /// "cudaMalloc: out of memory (cudaErrorMemoryAllocation, 2)"
  std::string describe(const char* call, int err) const;
};

// cudaDeviceAttr values used here (stable across CUDA releases).
inline constexpr int kCudaAttrMultiProcessorCount = 16;
inline constexpr int kCudaAttrComputeCapabilityMajor = 75;
inline constexpr int kCudaAttrComputeCapabilityMinor = 76;
inline constexpr int kCudaMemcpyHostToDevice = 1;
inline constexpr int kCudaMemcpyDeviceToHost = 2;

/// A runtime loaded from `path` alone (RTLD_LOCAL), apart from the process's: tests bind a stand-in through it.
/// The same symbols, required and optional, as cudaRuntime(). Never closed.
Expected<CudaRuntimeApi> loadCudaRuntimeFrom(const std::string& path);

/// The loaded runtime, or a Runtime error "no CUDA device: <why>" (library
/// not found, missing symbol).
Expected<const CudaRuntimeApi*> cudaRuntime();

/// The runtime with at least one device (cudaGetDeviceCount > 0), else
/// "no CUDA device: ..." naming the runtime's answer. Memoised.
Expected<const CudaRuntimeApi*> cudaRuntimeWithDevice();

}  // namespace sk
