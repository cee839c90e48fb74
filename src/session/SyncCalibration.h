// Where the sync cost model's costs come from (MachineModel::syncCosts, plan/SyncCost.cpp), in one place:
// $SK_SYNC_COSTS, else the machine's calibration cached under the cache directory (Session::calibrateSync,
// `sk-compile --calibrate`), else the back end's defaults. Session::compile and planOnly both ask here, so
// `--plan-only` reports the plan that compiling makes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/plan/MachineModel.h"

namespace sk {

/// <root>/calibration/<target>-<cores>.json: one machine's costs for one core count (a barrier's cost
/// grows with the cores that arrive at it).
std::filesystem::path syncCalibrationFile(const std::filesystem::path& root, std::string_view target, uint32_t cores);

/// The costs to plan with. `model`: the back end's (defaults, or none). A target with none takes costs only
/// where its back end can measure them (Backend::calibrateSync: cuda), and then only from $SK_SYNC_COSTS or
/// its calibration: without either its syncs stay as the rules chose them. A target with neither defaults
/// nor a calibration (its emitter picks its own syncs) takes none from anywhere. `root`: the cache directory (empty:
/// no calibration is read). A malformed $SK_SYNC_COSTS is BadInput naming it and its form; a calibration
/// file that cannot be read or parsed is not an error: `warnings` gets a line saying so and what to do, and
/// `model` is used.
Expected<SyncCosts> syncCostsFor(const SyncCosts& model, const std::filesystem::path& root, std::string_view target,
                                 uint32_t cores, std::vector<std::string>& warnings);

/// Creates <root>/calibration: done before measuring, so a directory that cannot take the result fails
/// before the measurement is spent. IoError naming the path.
Status prepareSyncCalibrationDir(const std::filesystem::path& root);

/// Writes `costs` for (target, cores) under root (atomically: a temp file renamed over the old one).
/// Returns the file written.
Expected<std::filesystem::path> saveSyncCalibration(const std::filesystem::path& root, std::string_view target,
                                                    uint32_t cores, const SyncCosts& costs);

}  // namespace sk
