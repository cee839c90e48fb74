// Chrome / Perfetto trace export of profiling records.
//
// Records are begin/end pairs per worker; they are paired here (per worker,
// per kind of slice, innermost first) into "X" complete events, which need no
// strict nesting between op and wait slices the way B/E events would. A
// begin without an end (a failed launch) becomes a zero-length slice marked
// "unfinished" rather than vanishing.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "ExecutorImpl.h"

namespace sk {

namespace {

std::string opName(const std::vector<std::vector<std::string>>& names, uint32_t launch, uint32_t id) {
  if (launch < names.size() && id < names[launch].size() && !names[launch][id].empty())
    return names[launch][id];
  return "op " + std::to_string(id);
}

nlohmann::json slice(std::string name, const char* cat, const TraceEvent& b, uint64_t endNs, uint64_t t0,
                     bool finished) {
  nlohmann::json e;
  e["name"] = std::move(name);
  e["cat"] = cat;
  e["ph"] = "X";
  e["pid"] = 1;
  e["tid"] = b.worker;
  e["ts"] = static_cast<double>(b.ns - t0) / 1000.0;  // microseconds
  e["dur"] = static_cast<double>(endNs - b.ns) / 1000.0;
  e["args"] = {{"core", b.core}, {"op", b.id}, {"launch", b.launch}};
  if (!finished) e["args"]["unfinished"] = true;
  return e;
}

}  // namespace

std::string Executor::traceToJson(const std::vector<TraceEvent>& input,
                                  const std::vector<std::vector<std::string>>& opNamesByLaunch,
                                  const std::map<uint32_t, std::string>& trackNames) {
  std::vector<TraceEvent> events = input;
  std::stable_sort(events.begin(), events.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.ns < b.ns; });
  const uint64_t t0 = events.empty() ? 0 : events.front().ns;

  nlohmann::json out = nlohmann::json::array();
  std::set<uint32_t> workers;
  // Open begins per (worker, is-wait).
  std::map<std::pair<uint32_t, bool>, std::vector<TraceEvent>> open;
  for (const TraceEvent& e : events) {
    workers.insert(e.worker);
    const bool isWait = e.kind == SK_PROF_WAIT_BEGIN || e.kind == SK_PROF_WAIT_END;
    auto& stack = open[{e.worker, isWait}];
    if (e.kind == SK_PROF_OP_BEGIN || e.kind == SK_PROF_WAIT_BEGIN) {
      stack.push_back(e);
      continue;
    }
    if (e.kind != SK_PROF_OP_END && e.kind != SK_PROF_WAIT_END) continue;  // unknown kind: ignore
    // The innermost open begin with the same op id and launch.
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (it->id == e.id && it->launch == e.launch) {
        out.push_back(slice(isWait ? "wait" : opName(opNamesByLaunch, it->launch, it->id), isWait ? "wait" : "op",
                            *it, e.ns, t0, true));
        stack.erase(std::next(it).base());
        break;
      }
    }
  }
  for (auto& [key, stack] : open)
    for (const TraceEvent& b : stack)
      out.push_back(slice(key.second ? "wait" : opName(opNamesByLaunch, b.launch, b.id), key.second ? "wait" : "op",
                          b, b.ns, t0, false));

  out.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "superkernel"}}}});
  for (uint32_t w : workers) {
    out.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", w},
                   {"args", {{"name", trackNames.count(w) ? trackNames.at(w) : "worker " + std::to_string(w)}}}});
    out.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", w},
                   {"args", {{"sort_index", w}}}});
  }
  nlohmann::json doc;
  doc["traceEvents"] = std::move(out);
  doc["displayTimeUnit"] = "ns";
  // Invalid UTF-8 in an op name must not throw out of an export.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sk
