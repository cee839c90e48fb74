// Private: the pieces of the cpu back end (src/backends/cpu/), assembled into
// a Backend by the registry.
#pragma once

#include <memory>
#include <vector>

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

/// One calibration's timings: ns per chain of `boundaries` op boundaries, one sample per repetition and kind
/// (the kinds run interleaved, so sample r of each kind saw the same load).
struct SyncCalibrationTimes {
  std::vector<double> ideal, barrier, counter, flag;
  uint32_t boundaries = 0;
  uint32_t workers = 0;
};
/// The costs those timings give (per kind, the median over repetitions of its excess over the ideal of the
/// same repetition, per boundary), or a Runtime error when they cannot be trusted: the chain without syncs
/// varied too much between repetitions, or a boundary came out cheaper than any cross-core hand-off can
/// be (another job on the machine took the time). Nothing is then cached.
Expected<SyncCosts> syncCostsFromTimes(const SyncCalibrationTimes& t);

}  // namespace sk
