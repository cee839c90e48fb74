// The start of every compile, in one place: the op list moved to the
// requested target, the options merged (op list, session, request), the
// target resolved to its emitter, the planner run on the back end's static
// machine model (Backend::machineModel: never the hardware found).
// Session::compile and planOnly (sk-compile --plan-only) both call it, so they
// report the same plan and the same errors; they differ only in how a target
// is resolved (a Session keeps each target's toolchain and device; planOnly
// needs no compiler).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "superkernel/session/Session.h"

namespace sk {

struct ResolvedTarget {
  std::shared_ptr<const Emitter> emitter;
  Device* device = nullptr;  // kept in CompiledPlan::device (null: planning only)
};
using TargetResolver = std::function<Expected<ResolvedTarget>(const std::string& target)>;

/// The CompiledPlan with list, options, target, device and plan filled (no steps yet). `workers`: the cores
/// asked for (MachineQuery::cores). `calibrationRoot`: the cache directory whose sync calibration the
/// machine model takes (session/SyncCalibration.h; empty: none).
Expected<CompiledPlan> planCompile(const OpList& list, const CompileRequest& request, const std::string& sessionOptions,
                                   uint32_t workers, const TargetResolver& resolve,
                                   const std::filesystem::path& calibrationRoot);

}  // namespace sk
