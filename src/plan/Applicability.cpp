// Options the target does not implement (DESIGN sections 4 and 9).
//
// Guarantee: one op list serves every target, so an option another target
// uses (split-mode, feed-sync-all on cpu) is not an error; but it is never
// silently ignored either. Each key the machine model lists as inapplicable
// whose effective value (list, scope and caller options; split-mode unset =
// the target's default) differs from the default gets one warning per key
// and plan, in PlanReport::warnings (shown by reports) and the log, naming
// the option, the target and why.
#include <spdlog/spdlog.h>

#include <set>

#include "plan/PlanInternal.h"
#include "superkernel/support/Log.h"

namespace sk::plan {

namespace {
// "key=value" items of a canonical option string, by key.
std::map<std::string, std::string> items(const Options& o) {
  std::map<std::string, std::string> out;
  std::string c = o.canonical();
  size_t start = 0;
  while (start <= c.size()) {
    size_t end = start;
    // ':' separates items; "\:" inside a value is escaped.
    while (end < c.size() && !(c[end] == ':' && (end == 0 || c[end - 1] != '\\'))) ++end;
    std::string item = c.substr(start, end - start);
    if (auto eq = item.find('='); eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}
}  // namespace

void reportInapplicable(PlanContext& ctx) {
  const MachineModel& m = ctx.config.machine;
  if (m.inapplicable.empty()) return;
  Options defaults;
  defaults.splitMode = m.defaultSplitMode;
  defaults.preloadCode = m.defaultPreloadCode;
  defaults.preloadData = m.defaultPreloadData;
  const auto base = items(defaults);
  std::set<std::string> warned;
  for (const SuperKernelPlan& sk : ctx.plan.steps) {
    Options o = sk.options;
    if (!o.splitMode) o.splitMode = m.defaultSplitMode;  // (preload-code/-data=auto are resolved already: plan/Bind.cpp)
    const auto now = items(o);
    for (const InapplicableOption& ia : m.inapplicable) {
      auto a = now.find(ia.key);
      auto b = base.find(ia.key);
      std::string value = a == now.end() ? "" : a->second;
      if (value == (b == base.end() ? "" : b->second) || !warned.insert(ia.key).second) continue;
      std::string msg = "option " + ia.key + "=" + value + " does not apply to target " + m.target + " (" + ia.why +
                        "); ignored";
      initLogging();
      spdlog::warn("{}{}", ctx.list.origin.empty() ? "" : ctx.list.origin + ": ", msg);
      ctx.plan.report.warnings.push_back(std::move(msg));
    }
  }
}

}  // namespace sk::plan
