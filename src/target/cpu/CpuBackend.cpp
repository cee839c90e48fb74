// The cpu back end, assembled: emitter (CpuEmitter.cpp), build recipe
// (CpuRecipe.cpp) and device (CpuDevice.cpp: executor, dlopen, sk_run_args).
#include "target/cpu/CpuBackend.h"

namespace sk {

Backend cpuBackend() {
  Backend b;
  b.name = "cpu";
  b.makeEmitter = [] { return makeCpuEmitter(); };
  b.makeRecipe = [] { return makeCpuRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeCpuDevice(o); };
  return b;
}

}  // namespace sk
