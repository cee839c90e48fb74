// The ascend machine model of both targets, ascend and ascend-sim (see AscendMachine.h).
#include "backends/ascend/AscendMachine.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "superkernel/support/Paths.h"

namespace sk::ascend {

MachineModel ascendMachineModel(uint32_t aiCores) {
  aiCores = std::max<uint32_t>(1, aiCores);
  MachineModel m;
  m.target = "ascend-sim";
  m.pools = {CorePool{CoreType::Cube, aiCores}, CorePool{CoreType::Vector, 2 * aiCores}};
  // The reference generator's default: four code copies per sub-kernel, so
  // cores fetching the same sub-kernel spread over four instruction lines.
  m.defaultSplitMode = 4;
  m.staticArguments = true;
  // Runtime scalars: an object reads slot k of its launch (SK_ASCEND_RUNTIME_<T>_<k>, kernel_operator.h), the
  // device passes the slots' addresses with every launch (launch descriptor runtime=): the simulator only.
  m.runtimeScalars = true;
  // Launches of other streams (tiling elsewhere, weight prefetch) run beside a SuperKernel, ordered by GM
  // notify/wait words (AscendSuperKernel.h, Device::runBeside), instead of splitting it.
  m.sideLaunches = true;
  // A sub-kernel's block index is its core's (GetBlockIdx): one block per core inside a SuperKernel.
  m.oneBlockPerCore = true;
  m.coreOwner = "ascend device";
  m.coreNoun = "cores";
  // Sub-kernels copy GM to UB themselves (DataCopy): the SuperKernel has no cache to warm before a wait.
  m.inapplicable = {{"preload-data", "ascend sub-kernels copy their inputs into UB themselves"}};
  m.unitNoun = "AI Cores";
  // Collectives (docs/COLLECTIVES.md "On ascend-sim"): a one-block sub-kernel driving the AscendC Hccl client,
  // whose tasks the simulator runs over the device's communicator, one rank per process.
  m.collectiveSource =
      (dataRuntimeDir() / "ascend" / "sim" / "include" / "superkernel" / "ascend" / "collective_kernel.cpp").string();
  return m;
}

MachineModel ascendDeviceMachineModel(uint32_t aiCores) {
  MachineModel m = ascendMachineModel(aiCores);
  m.target = "ascend";
  m.runtimeScalars = false;
  m.sideLaunches = false;
  // Collectives (docs/COLLECTIVES.md "On an NPU", unverified: no CANN here): the device's sub-kernel drives
  // CANN's own AscendC::Hccl client on the context of its group's HCCL communicator, which the CANN device
  // makes (HcclGroups.h) and passes as a launch argument.
  m.collectiveSource =
      (dataRuntimeDir() / "ascend" / "device" / "superkernel" / "ascend" / "collective_kernel.cpp").string();
  // HCCL's reductions on Atlas A2/A3 (HcclAllReduce, CANN's HCCL API reference): no float64. The op list
  // reduces f32, f64, i32 and i64; f64 is refused at plan time, naming the op.
  m.collectiveReduceDTypes = {DType::F32, DType::I32, DType::I64};
  m.collectiveReduceWhy =
      "HCCL reduces int8, int16, int32, int64, float16, float32 and bfp16 on Atlas A2/A3 (HcclAllReduce in CANN's "
      "HCCL API reference), no float64";
  return m;
}

uint32_t deviceAiCoresForArch(std::string_view arch) {
  static constexpr std::pair<std::string_view, uint32_t> kParts[] = {
      {"ascend910b1", 24}, {"ascend910b2", 24}, {"ascend910_93", 24}, {"ascend910b3", 20}, {"ascend910b4", 20}};
  for (const auto& [name, cores] : kParts)
    if (arch == name) return cores;
  return kDeviceAiCores;
}

uint32_t aiCoresFromEnv() {
  if (const char* v = std::getenv("SK_ASCEND_AI_CORES"); v && *v) {
    const long n = std::strtol(v, nullptr, 10);
    if (n >= 1 && n <= 1024) return static_cast<uint32_t>(n);
  }
  return kSimulatorAiCores;
}

int defaultSplitMode() {
  static const int mode = ascendMachineModel().defaultSplitMode;
  return mode;
}

}  // namespace sk::ascend
