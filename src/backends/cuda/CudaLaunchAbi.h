// Private: the layouts of the two libcudart launch structures the cuda device passes to cudaLaunchKernelExC
// (driver_types.h: cudaLaunchConfig_t, cudaLaunchAttribute), which the library cannot include (no CUDA at
// build time), stable since CUDA 11.8, and of the launch a Graph + PDL module records (superkernel_rt.cuh's
// sk_kernel_launch). Standalone (no project includes): tests/cuda/CudaGraphTest.cpp compiles it next to
// cuda_runtime.h and superkernel_rt.cuh with nvcc and checks every size and offset.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sk {

struct CudaDim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct CudaLaunchAttribute {
  int id = 0;       // cudaLaunchAttributeID
  char pad[4] = {};
  union Value {
    char pad[64];
    int programmaticStreamSerializationAllowed;
    void* pointerAlignment;  // the real union holds pointers (cudaAccessPolicyWindow, events)
  } val{};
};

struct CudaLaunchConfig {
  CudaDim3 gridDim, blockDim;
  size_t dynamicSmemBytes = 0;
  void* stream = nullptr;
  CudaLaunchAttribute* attrs = nullptr;
  unsigned numAttrs = 0;
};

struct CudaKernelLaunch {  // superkernel_rt.cuh's sk_kernel_launch
  const void* func = nullptr;  // the kernel's host stub
  uint32_t grid = 0, threads = 0, smem = 0, reserved = 0;
  unsigned long long epoch = 0;  // its only argument
};

// cudaLaunchAttributeID / cudaStreamCaptureMode / stream flags used here (stable values).
inline constexpr int kCudaLaunchAttributeProgrammaticStreamSerialization = 6;
inline constexpr int kCudaStreamCaptureModeThreadLocal = 1;
inline constexpr unsigned kCudaStreamNonBlocking = 1;

}  // namespace sk
