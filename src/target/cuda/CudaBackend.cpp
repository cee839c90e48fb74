// The cuda back end, assembled: emitter (CudaEmitter.cpp), build recipe
// (CudaRecipe.cpp, nvcc) and device (CudaDevice.cpp, libcudart by dlopen).
#include "target/cuda/CudaBackend.h"

namespace sk {

Backend cudaBackend() {
  Backend b;
  b.name = "cuda";
  b.makeEmitter = [] { return makeCudaEmitter(); };
  b.makeRecipe = [] { return makeCudaRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeCudaDevice(o); };
  return b;
}

}  // namespace sk
