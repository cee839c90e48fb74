// The plan of an op list without compiling anything: options merged as
// Session::compile merges them, the target's back end looked up (its emitter
// and a device for the machine model the planner needs), the planner run. No
// compiler is searched for or started, no cache is opened (the one file read
// there is the machine's sync calibration, session/SyncCalibration.h) and
// nothing runs, so it works on a machine with no compiler (sk-compile
// --plan-only) and gives the plan report even when compiling would fail. Sub-kernel code sizes
// are unknown (0) until objects are compiled, so preload byte counts read 0.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "superkernel/session/Session.h"

namespace sk {

struct PlanOnlyConfig {
  std::string sessionOptions;   // as SessionOptions::options
  uint32_t workers = 0;         // as SessionOptions::workers (0: the target's default)
  /// As SessionOptions::cacheDir and diskCache: where the machine's sync calibration is read from (the plan
  /// is the one a Session with these options makes; nothing else of the cache is opened).
  std::filesystem::path cacheDir;
  bool diskCache = true;
};

struct PlanOnlyResult {
  CompiledPlan plan;            // list, options, plan and target filled; no steps, no device
  uint32_t cores = 0;           // the machine model's cores the plan was made for
};

Expected<PlanOnlyResult> planOnly(const OpList& list, const CompileRequest& request,
                                  const PlanOnlyConfig& config = {});

}  // namespace sk
