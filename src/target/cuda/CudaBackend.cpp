// The cuda back end, assembled: emitter (CudaEmitter.cpp), build recipe
// (CudaRecipe.cpp, nvcc) and device (CudaDevice.cpp, libcudart by dlopen).
// cuda-sim: the same emitter and kernels, built by the host compiler
// (CudaSimRecipe.cpp) and run by the simulator (CudaSimDevice.cpp).
#include "target/cuda/CudaBackend.h"

namespace sk {

Backend cudaBackend() {
  Backend b;
  b.name = "cuda";
  // A kernel's CTA shape (docs/CUDA.md): at most 1024 threads, a multiple of the warp, and dynamic shared
  // memory within an H100's 227 KiB. cuda-sim compiles these kernels and reads the same keys.
  b.kernelAttributes.push_back({"threads", 32, 1024, "the CTA size the kernel is written for (default 256)",
                                [](int64_t t) { return t % 32 ? std::string("is not a multiple of 32 (the warp size)")
                                                              : std::string(); },
                                nullptr});
  b.kernelAttributes.push_back(
      {"shared_bytes", 0, 232448, "the dynamic shared memory one CTA needs (sk_ctx::smem)", nullptr, nullptr});
  b.makeEmitter = [] { return makeCudaEmitter(); };
  b.makeRecipe = [] { return makeCudaRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeCudaDevice(o); };
  return b;
}

Backend cudaSimBackend() {
  Backend b;
  b.name = "cuda-sim";
  b.kernels = "cuda";
  b.makeEmitter = [] { return makeCudaEmitter(); };
  b.makeRecipe = [] { return makeCudaSimRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeCudaSimDevice(o); };
  return b;
}

}  // namespace sk
