#include "superkernel/session/PlanOnly.h"

#include "session/PlanCompile.h"
#include "superkernel/target/Backend.h"

namespace sk {

Expected<PlanOnlyResult> planOnly(const OpList& list, const CompileRequest& request, const PlanOnlyConfig& config) {
  // Session::compile's first part (session/PlanCompile.h); a target resolves to its back end's emitter and a
  // device's machine model, with no toolchain (no compiler is searched for).
  PlanOnlyResult r;
  auto resolve = [&](const std::string& name) -> Expected<ResolvedTarget> {
    SK_ASSIGN_OR_RETURN(const Backend* backend, findBackend(name));
    ResolvedTarget t;
    SK_ASSIGN_OR_RETURN(t.emitter, backend->makeEmitter());
    DeviceOptions dopt;
    dopt.cores = config.workers;
    SK_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, backend->makeDevice(dopt));
    t.machine = device->machine();
    r.cores = t.machine.totalCores();
    return t;
  };
  SK_ASSIGN_OR_RETURN(r.plan, planCompile(list, request, config.sessionOptions, resolve));
  return r;
}

}  // namespace sk
