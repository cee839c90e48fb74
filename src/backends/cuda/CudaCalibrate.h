// Private: the cuda and cuda-sim sync calibration (CudaCalibrate.cpp), what Backend::calibrateSync runs for
// both targets (CudaBackend.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "superkernel/target/Backend.h"

namespace sk {

/// Measures the SyncCosts of `device` (the cuda device on a GPU, or the simulator's with `simulator`): the
/// calibration kernel (runtime/cuda/calibration/sync_calibration.cu) is built through the target's recipe with
/// the session's toolchain and cache (`context`; either missing: the target's default compiler and the cache at
/// its default root), loaded and run by `device` on one CTA per SM it has. Errors: the kernel does not build
/// (nvcc's or the host compiler's diagnostics), no CUDA device, a launch that fails, or timings too noisy to
/// trust.
Expected<SyncCosts> calibrateCudaSync(Device& device, const CalibrationContext& context, bool simulator);

/// One calibration's chain times (ns), one per repetition and kind, in the order they ran.
struct CudaSyncTimes {
  std::vector<double> ideal, barrier, counter, flag;
  uint32_t boundaries = 0;  // ops per chain (a boundary after each)
  uint32_t ctas = 0;
  bool simulator = false;
};

/// The costs those times give (per kind, the median over repetitions of its excess over the ideal chain of
/// the same repetition, per boundary), or a Runtime error saying what made them untrustworthy: the chain
/// without syncs varied too much between repetitions, or a boundary came out cheaper than a hand-off between
/// SMs can be, or dearer than the planner accepts. `source` says where they were measured (a GPU's CTAs, or
/// the simulator, whose numbers describe host threads and not a GPU).
Expected<SyncCosts> cudaSyncCostsFromTimes(const CudaSyncTimes& t);

}  // namespace sk
