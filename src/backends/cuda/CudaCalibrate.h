// Private: the cuda and cuda-sim sync calibration (CudaCalibrate.cpp), what Backend::calibrateSync runs for
// both targets (CudaBackend.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/SyncChains.h"
#include "superkernel/target/Backend.h"

namespace sk {

/// Measures the SyncCosts of `device` (the cuda device on a GPU, or the simulator's with `simulator`): the
/// calibration kernel (runtime/cuda/calibration/sync_calibration.cu) is built through the target's recipe with
/// the session's toolchain and cache (`context`, both required), loaded and run by `device` on one CTA per SM
/// it has. Errors: the kernel does not build (nvcc's or the host compiler's diagnostics), no CUDA device, a
/// launch that fails, or timings too noisy to trust.
Expected<SyncCosts> calibrateCudaSync(Device& device, const CalibrationContext& context, bool simulator);

/// One calibration's chain times (backends/SyncChains.h), on `ctas` CTAs of a GPU or of the simulator.
struct CudaSyncTimes : SyncChainTimes {
  uint32_t ctas = 0;
  bool simulator = false;
};

/// The costs those times give (SyncChains.h's rule, with the ceiling the planner accepts from a calibration
/// file), or a Runtime error saying what made them untrustworthy. `source` says where they were measured (a
/// GPU's CTAs, or the simulator, whose numbers describe host threads and not a GPU).
Expected<SyncCosts> cudaSyncCostsFromTimes(const CudaSyncTimes& t);

}  // namespace sk
