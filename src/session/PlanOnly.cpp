#include "superkernel/session/PlanOnly.h"

#include "superkernel/codegen/Target.h"
#include "superkernel/runtime/Executor.h"

namespace sk {

Expected<CompiledPlan> planOnly(const OpList& list, const CompileRequest& request, const PlanOnlyConfig& config) {
  // The same steps, in the same order and with the same error context, as
  // the start of Session::compile, so both report the same plan and errors.
  const std::string what = list.origin.empty() ? "op list" : list.origin;
  CompiledPlan cp;
  cp.list = list;
  if (!request.target.empty()) cp.list.target = request.target;
  auto opts = mergeOptions({list.options, config.sessionOptions, request.options});
  if (!opts) return std::move(opts).error().context(what + ": options");
  cp.options = *opts;
  auto target = makeTarget(cp.list.target);
  if (!target) return std::move(target).error().context(what);
  cp.target = *target;
  PlanConfig pc;
  pc.numWorkers = config.numWorkers ? config.numWorkers : defaultWorkerCount();
  pc.fuse = request.fuse;
  auto plan = planOpList(cp.list, cp.options, pc);
  if (!plan) return std::move(plan).error();
  cp.plan = std::move(*plan);
  return cp;
}

}  // namespace sk
