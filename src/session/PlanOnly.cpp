#include "superkernel/session/PlanOnly.h"

#include "superkernel/target/Backend.h"

namespace sk {

Expected<PlanOnlyResult> planOnly(const OpList& list, const CompileRequest& request, const PlanOnlyConfig& config) {
  // The same steps, in the same order and with the same error context, as
  // the start of Session::compile, so both report the same plan and errors;
  // only the toolchain (a compiler) is left out.
  const std::string what = list.origin.empty() ? "op list" : list.origin;
  PlanOnlyResult r;
  CompiledPlan& cp = r.plan;
  cp.list = retargetOpList(list, request.target);
  auto opts = mergeOptions({list.options, config.sessionOptions, request.options});
  if (!opts) return std::move(opts).error().context(what + ": options");
  cp.options = *opts;
  auto backend = findBackend(cp.list.target);
  if (!backend) return std::move(backend).error().context(what);
  auto emitter = (*backend)->makeEmitter();
  if (!emitter) return std::move(emitter).error().context(what);
  cp.target = *emitter;
  DeviceOptions dopt;
  dopt.cores = config.workers;
  auto device = (*backend)->makeDevice(dopt);
  if (!device) return std::move(device).error().context(what);
  PlanConfig pc;
  pc.machine = (*device)->machine();
  pc.fuse = request.fuse;
  r.cores = pc.machine.totalCores();
  auto plan = planOpList(cp.list, cp.options, pc);
  if (!plan) return std::move(plan).error();
  cp.plan = std::move(*plan);
  return r;
}

}  // namespace sk
