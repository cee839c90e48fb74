// The plan of an op list without compiling anything: options merged as
// Session::compile merges them, the target's emitter looked up, the planner
// run. No compiler is searched for or started, no cache is opened and nothing
// runs, so it works on a machine with no compiler (sk-compile --plan-only)
// and gives the plan report even when compiling would fail. Sub-kernel code
// sizes are unknown (0) until objects are compiled, so preload byte counts
// read 0.
#pragma once

#include <cstdint>
#include <string>

#include "superkernel/session/Session.h"

namespace sk {

struct PlanOnlyConfig {
  std::string sessionOptions;   // as SessionOptions::options
  uint32_t numWorkers = 0;      // 0: SK_NUM_WORKERS, else hardware threads (as the executor)
};

/// A CompiledPlan with list, options, plan and target filled and no steps.
Expected<CompiledPlan> planOnly(const OpList& list, const CompileRequest& request, const PlanOnlyConfig& config = {});

}  // namespace sk
