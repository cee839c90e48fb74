#include "session/PlanCompile.h"

#include "session/SyncCalibration.h"
#include "superkernel/plan/DataPreload.h"
#include "superkernel/target/Backend.h"

namespace sk {

Expected<CompiledPlan> planCompile(const OpList& list, const CompileRequest& request, const std::string& sessionOptions,
                                   uint32_t workers, const TargetResolver& resolve,
                                   const std::filesystem::path& calibrationRoot) {
  const std::string what = list.origin.empty() ? "op list" : list.origin;
  CompiledPlan cp;
  cp.list = retargetOpList(list, request.target);
  auto opts = mergeOptions({list.options, sessionOptions, request.options});
  if (!opts) return std::move(opts).error().context(what + ": options");
  cp.options = *opts;
  if (request.graphPdl && request.fuse)
    return badInput("CompileRequest::graphPdl builds an unfused plan's steps as the Graph + PDL variant: set fuse = "
                    "false too");
  auto target = resolve(cp.list.target);
  if (!target) return std::move(target).error().context(what);
  cp.target = target->emitter;
  cp.device = target->device;
  SK_ASSIGN_OR_RETURN(const Backend* backend, findBackend(cp.list.target));
  auto machine = backend->machineModel(MachineQuery{cp.list.arch, workers});
  if (!machine) return std::move(machine).error().context(what + ": target " + cp.list.target);
  std::vector<std::string> costWarnings;
  auto costs = syncCostsFor(machine->syncCosts, calibrationRoot, cp.list.target, machine->deviceCores(), costWarnings);
  if (!costs) return std::move(costs).error().context(what);
  machine->syncCosts = std::move(*costs);
  PlanConfig pc;
  pc.machine = std::move(*machine);
  pc.fuse = request.fuse;
  auto plan = planOpList(cp.list, cp.options, pc);
  if (!plan) return std::move(plan).error();  // the planner's messages name the op list already
  cp.plan = std::move(*plan);
  if (request.graphPdl) markGraphPdlSteps(cp.plan);
  for (std::string& w : costWarnings) cp.plan.report.warnings.push_back(std::move(w));
  return cp;
}

}  // namespace sk
