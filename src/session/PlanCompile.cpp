#include "session/PlanCompile.h"

namespace sk {

Expected<CompiledPlan> planCompile(const OpList& list, const CompileRequest& request, const std::string& sessionOptions,
                                   const TargetResolver& resolve) {
  const std::string what = list.origin.empty() ? "op list" : list.origin;
  CompiledPlan cp;
  cp.list = retargetOpList(list, request.target);
  auto opts = mergeOptions({list.options, sessionOptions, request.options});
  if (!opts) return std::move(opts).error().context(what + ": options");
  cp.options = *opts;
  auto target = resolve(cp.list.target);
  if (!target) return std::move(target).error().context(what);
  cp.target = target->emitter;
  cp.device = target->device;
  PlanConfig pc;
  pc.machine = target->machine;
  pc.fuse = request.fuse;
  auto plan = planOpList(cp.list, cp.options, pc);
  if (!plan) return std::move(plan).error();  // the planner's messages name the op list already
  cp.plan = std::move(*plan);
  return cp;
}

}  // namespace sk
