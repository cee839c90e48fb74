// The cpu back end, assembled: emitter (CpuEmitter.cpp), build recipe
// (CpuRecipe.cpp) and device (CpuDevice.cpp: executor, dlopen, sk_run_args).
#include "backends/cpu/CpuBackend.h"

#include "superkernel/support/Paths.h"
#include "superkernel/target/cpu/Cpu.h"

namespace sk {

std::filesystem::path cpuRuntimeIncludeDir() { return dataRuntimeDir() / "cpu" / "include"; }
std::filesystem::path cpuRuntimeSourceDir() { return dataRuntimeDir() / "cpu" / "src"; }

Backend cpuBackend() {
  Backend b;
  b.name = "cpu";
  b.host = true;  // this machine's own cores
  b.machineModel = [](const MachineQuery& q) -> Expected<MachineModel> { return cpuMachineModel(q.cores); };
  b.makeEmitter = [] { return makeCpuEmitter(); };
  b.makeRecipe = [] { return makeCpuRecipe(); };
  b.makeDevice = [](const DeviceOptions& o) { return makeCpuDevice(o); };
  b.calibrateSync = [](Device& d, const CalibrationContext&) { return calibrateCpuSync(d); };
  return b;
}

}  // namespace sk
