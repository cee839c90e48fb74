// Private: the pieces of the cpu back end (src/backends/cpu/), assembled into
// a Backend by the registry.
#pragma once

#include <memory>
#include <vector>

#include "backends/SyncChains.h"
#include "superkernel/target/Backend.h"
#include "superkernel/target/cpu/Cpu.h"

namespace sk {

/// Backend{"cpu", ...}: the emitter, recipe and device below.
Backend cpuBackend();

/// Reads and parses templates/cpu/superkernel.cpp.tmpl.
Expected<std::shared_ptr<const Emitter>> makeCpuEmitter();
std::shared_ptr<const BuildRecipe> makeCpuRecipe();
Expected<std::unique_ptr<Device>> makeCpuDevice(const DeviceOptions& options);
/// The executor's machine: one pool of `workers` workers (0: defaultWorkerCount(), as the executor picks).
MachineModel cpuMachineModel(uint32_t workers);
/// The cpu SyncCosts of `device`'s executor, measured (CpuCalibrate.cpp).
Expected<SyncCosts> calibrateCpuSync(Device& device);

/// One calibration's timings (backends/SyncChains.h), on `workers` workers.
struct SyncCalibrationTimes : SyncChainTimes {
  uint32_t workers = 0;
};
/// The costs those timings give (SyncChains.h's rule), or a Runtime error saying the machine was busy.
Expected<SyncCosts> syncCostsFromTimes(const SyncCalibrationTimes& t);

}  // namespace sk
