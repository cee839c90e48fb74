#include "superkernel/session/PlanOnly.h"

#include "session/PlanCompile.h"
#include "superkernel/target/Backend.h"

namespace sk {

Expected<PlanOnlyResult> planOnly(const OpList& list, const CompileRequest& request, const PlanOnlyConfig& config) {
  // Session::compile's first part (session/PlanCompile.h); a target resolves to its back end's emitter, with
  // no toolchain (no compiler is searched for) and no device (the machine model is the back end's static one).
  PlanOnlyResult r;
  auto resolve = [&](const std::string& name) -> Expected<ResolvedTarget> {
    SK_ASSIGN_OR_RETURN(const Backend* backend, findBackend(name));
    ResolvedTarget t;
    SK_ASSIGN_OR_RETURN(t.emitter, backend->makeEmitter());
    return t;
  };
  SK_ASSIGN_OR_RETURN(r.plan, planCompile(list, request, config.sessionOptions, config.workers, resolve));
  r.cores = r.plan.plan.machine.totalCores();
  return r;
}

}  // namespace sk
