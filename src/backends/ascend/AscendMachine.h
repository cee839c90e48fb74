// The ascend machine model of both targets (DESIGN sections 5 and 9): N AI Cores, each one
// cube core and two vector cores, so two pools {Cube, N} and {Vector, 2N}
// (cube first: a SuperKernel's cores are pool 0 then pool 1). The one place
// that says what ascend's defaults are; the emitter reads split-mode's from
// here too.
#pragma once

#include <cstdint>
#include <string_view>

#include "superkernel/plan/MachineModel.h"

namespace sk::ascend {

/// AI Cores of the simulated device when nothing else is asked for.
constexpr uint32_t kSimulatorAiCores = 8;

/// AI Cores of an Atlas A2 / A3 part (Ascend 910B1/B2, 910_93) when the op
/// list's arch names none the table below knows.
constexpr uint32_t kDeviceAiCores = 24;

/// The simulator's machine (target ascend-sim): pools {Cube, aiCores} and
/// {Vector, 2 * aiCores}; defaultSplitMode 4; scalars and block counts are
/// compile-time (staticArguments); runtime scalars read through launch slots
/// and side launches beside a SuperKernel (the simulator's device provides
/// both). Every option applies (feed-sync-all: kernel_sync ops, see
/// AscendSuperKernel.h).
MachineModel ascendMachineModel(uint32_t aiCores = kSimulatorAiCores);

/// A real device's machine (target ascend: bisheng + CANN): the same pools and
/// defaults, without what only the simulator provides so far (the bisheng
/// objects have no runtime-slot reads; the CANN device does not run launches
/// beside a SuperKernel), so the planner compiles such values in or splits
/// the SuperKernel instead.
MachineModel ascendDeviceMachineModel(uint32_t aiCores);

/// The AI Cores of the part an op list's arch names (a static description:
/// never the device found): "ascend910b1", "ascend910b2", "ascend910_93": 24;
/// "ascend910b3", "ascend910b4": 20; anything else ("native"):
/// kDeviceAiCores.
uint32_t deviceAiCoresForArch(std::string_view arch);

/// The simulated device's AI Cores when none are asked for: SK_ASCEND_AI_CORES (1..1024), else
/// kSimulatorAiCores.
uint32_t aiCoresFromEnv();

/// split-mode when the options leave it unset (ascendMachineModel().defaultSplitMode).
int defaultSplitMode();

}  // namespace sk::ascend
