#include "superkernel/session/PlanOnly.h"

#include "session/PlanCompile.h"
#include "superkernel/cache/Cache.h"
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
  // The sync calibration a Session with the same cache directory would read (SessionOptions::cacheDir).
  std::filesystem::path calibration;
  if (config.diskCache) {
    if (!config.cacheDir.empty()) {
      calibration = std::filesystem::absolute(config.cacheDir).lexically_normal();
    } else if (auto root = defaultCacheRoot()) {
      calibration = *root;
    }
  }
  SK_ASSIGN_OR_RETURN(r.plan, planCompile(list, request, config.sessionOptions, config.workers, resolve, calibration));
  r.cores = r.plan.plan.machine.totalCores();
  return r;
}

}  // namespace sk
