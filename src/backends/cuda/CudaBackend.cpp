// The cuda back end, assembled: emitter (CudaEmitter.cpp), build recipe
// (CudaRecipe.cpp, nvcc), device (CudaDevice.cpp, libcudart by dlopen) and
// sync calibration (CudaCalibrate.cpp).
// cuda-sim: the same emitter and kernels, built by the host compiler
// (CudaSimRecipe.cpp) and run by the simulator (CudaSimDevice.cpp).
#include "backends/cuda/CudaBackend.h"
#include "backends/cuda/CudaCalibrate.h"
#include "backends/cuda/CudaKernelKeys.h"

namespace sk {

std::string cudaVersionScript(std::string_view launch, const char* base) {
  std::string s = base;
  if (launch == kCudaGraphPdlLaunch) s.insert(s.find("run;") + 4, " sk_last_launch;");
  return s;
}

Backend cudaBackend() {
  Backend b;
  b.name = "cuda";
  b.kernelAttributes = cudaKernelAttributes();  // threads, shared_bytes
  b.machineModel = [](const MachineQuery& q) -> Expected<MachineModel> {
    return cudaMachineModel("cuda", cudaCtasForArch(q.arch));
  };
  b.makeEmitter = [] { return makeCudaEmitter(); };
  b.makeRecipe = [] { return makeCudaRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeCudaDevice(o); };
  // No default costs (the model leaves cuda's syncs as the rules chose them) until the GPU is measured:
  // `sk-compile --calibrate --target cuda` (CudaCalibrate.cpp), or $SK_SYNC_COSTS.
  b.calibrateSync = [](Device& d, const CalibrationContext& c) { return calibrateCudaSync(d, c, /*simulator=*/false); };
  return b;
}

Backend cudaSimBackend() {
  Backend b;
  b.name = "cuda-sim";
  b.kernels = "cuda";
  b.machineModel = [](const MachineQuery&) -> Expected<MachineModel> {
    SK_ASSIGN_OR_RETURN(uint32_t sms, cudaSimSms());
    return cudaSimMachineModel(sms);
  };
  b.makeEmitter = [] { return makeCudaEmitter(); };
  b.makeRecipe = [] { return makeCudaSimRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeCudaSimDevice(o); };
  // The same calibration run by the simulator: its costs are the simulator's, not a GPU's (it exists so the
  // calibration's path, the cache file and the plans that read it are tested without a GPU).
  b.calibrateSync = [](Device& d, const CalibrationContext& c) { return calibrateCudaSync(d, c, /*simulator=*/true); };
  return b;
}

}  // namespace sk
