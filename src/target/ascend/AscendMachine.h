// The ascend machine model (DESIGN sections 5 and 9): N AI Cores, each one
// cube core and two vector cores, so two pools {Cube, N} and {Vector, 2N}
// (cube first: a SuperKernel's cores are pool 0 then pool 1). The one place
// that says what ascend's defaults are; the emitter reads split-mode's from
// here too.
#pragma once

#include <cstdint>

#include "superkernel/plan/MachineModel.h"

namespace sk::ascend {

/// AI Cores of the simulated device when nothing else is asked for.
constexpr uint32_t kSimulatorAiCores = 8;

/// Pools {Cube, aiCores} and {Vector, 2 * aiCores}; defaultSplitMode 4;
/// scalars and block counts are compile-time (staticArguments). Every option
/// applies (feed-sync-all: kernel_sync ops, see AscendEmitter.h).
MachineModel ascendMachineModel(uint32_t aiCores = kSimulatorAiCores);

/// The simulated device's AI Cores when none are asked for: SK_ASCEND_AI_CORES (1..1024), else
/// kSimulatorAiCores.
uint32_t aiCoresFromEnv();

/// split-mode when the options leave it unset (ascendMachineModel().defaultSplitMode).
int defaultSplitMode();

}  // namespace sk::ascend
