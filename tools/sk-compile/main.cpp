// sk-compile OPLIST.json: plan, generate, compile and cache an op list, then
// print the plan report; optionally run it fused and unfused and compare
// (DESIGN section 7; flags, output and exit codes in docs/CLI.md).
//
// Structure: parse arguments (CLI11; any parse error is exit 2), load the op
// list, create a Session, compile the fused plan (and the unfused reference
// for --run), write the requested artifacts, run, then print one report.
// The report is assembled as JSON first and the text form is rendered from
// that object, so --json and the text never disagree.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "common/Baselines.h"
#include "common/Suggest.h"
#include "common/Timing.h"
#include "common/Stalls.h"
#include "common/ToolSupport.h"
#include "common/Tokens.h"
#include "superkernel/driver/Deadline.h"
#include "superkernel/runtime/Communicator.h"
#include "superkernel/session/PlanOnly.h"
#include "superkernel/superkernel.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace sk::tools {
namespace {

constexpr const char* kTool = "sk-compile";

struct Args {
  std::string opList;
  bool run = false;
  bool planOnly = false;
  bool calibrate = false;
  bool forceRecompile = false;
  int repeat = 5;
  int tokens = 0;  // --tokens T: a decode loop of T steps (0: not given)
  std::string baselinesText;                   // --baselines as given
  std::vector<Baseline> baselines{Baseline::Unfused};
  bool buildOnly = false;  // --baselines without --run: build what that --run would load, run nothing
  std::string emitSource, emitDot, trace, dump;
  bool json = false;
  std::string options, cacheDir, target;
  std::string remoteCache;  // --remote-cache URL (default $SK_REMOTE_CACHE)
  unsigned jobs = 0;
  unsigned workers = 0;
  uint32_t runTimeoutMs = 0;
};

// A failure with the exit code it maps to; carried to main's single exit.
struct Failure {
  Error error;
  int code;
};
Failure failure(Error e) {
  const int code = exitCodeFor(e.kind());
  return Failure{std::move(e), code};
}

// Output paths are used as given: no directory is created on the way (a
// mistyped path must fail, not grow a tree), and every failure carries the
// system's reason (errno text).
Status writeFile(const fs::path& path, std::string_view bytes, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    return ioError(fmt::format("cannot write {} {}: {}{}", what, path.string(), std::strerror(e),
                               e == ENOENT ? " (its directory does not exist; create it first)" : ""));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : ENOSPC;
      ::close(fd);
      return ioError(fmt::format("cannot write {} {}: {}", what, path.string(), std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return ioError(fmt::format("cannot write {} {}: {}", what, path.string(), std::strerror(errno)));
  return Status::success();
}

// An output directory (--emit-source): created if missing, its parent never.
Status makeOutputDir(const fs::path& dir, const std::string& what) {
  if (::mkdir(dir.c_str(), 0755) == 0) return Status::success();
  const int e = errno;
  std::error_code ec;
  if (e == EEXIST && fs::is_directory(dir, ec)) return Status::success();
  return ioError(fmt::format("cannot create {} directory {}: {}{}", what, dir.string(),
                             e == EEXIST ? "a file of that name exists" : std::strerror(e),
                             e == ENOENT ? " (its parent directory does not exist; create it first)" : ""));
}

// Whether `path` can be written as `what` (a file, or with `directory` a
// directory makeOutputDir would make or reuse), checked before anything is
// compiled so a mistyped path costs no compile. Creates nothing; the errors
// read as writing would report them.
Status checkOutputPath(const fs::path& path, const std::string& what, bool directory) {
  auto fail = [&](int e, std::string_view extra) {
    return ioError(directory ? fmt::format("cannot create {} directory {}: {}{}", what, path.string(),
                                           std::strerror(e), extra)
                             : fmt::format("cannot write {} {}: {}{}", what, path.string(), std::strerror(e), extra));
  };
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (directory && !S_ISDIR(st.st_mode)) return fail(EEXIST, " (a file of that name exists)");
    if (!directory && S_ISDIR(st.st_mode)) return fail(EISDIR, "");
    return ::access(path.c_str(), W_OK) == 0 ? Status::success() : fail(errno, "");
  }
  if (errno != ENOENT) return fail(errno, "");
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const bool parentFound = ::stat(parent.c_str(), &st) == 0;
  if (!parentFound || !S_ISDIR(st.st_mode)) {
    const int e = parentFound ? ENOTDIR : errno;
    return fail(e, e != ENOENT        ? ""
                   : directory        ? " (its parent directory does not exist; create it first)"
                                      : " (its directory does not exist; create it first)");
  }
  return ::access(parent.c_str(), W_OK) == 0 ? Status::success() : fail(errno, "");
}

// ---- progress (a terminal only) --------------------------------------------

// Compile progress on stderr, overwritten in place ("\r" + clear line). Only
// when stderr is a terminal: logs and CI output must not fill up with it.
class Progress {
 public:
  Progress() : enabled_(::isatty(STDERR_FILENO) == 1) {}
  void phase(std::string label) {
    std::lock_guard lock(mu_);
    label_ = std::move(label);
  }
  void update(std::string_view stage, size_t done, size_t total) {
    if (!enabled_) return;
    std::lock_guard lock(mu_);
    const bool objects = stage == "objects";
    std::fprintf(stderr, "\r\033[K%s: %s %zu of %zu %s", label_.c_str(), objects ? "compiling" : "linking", done,
                 total, objects ? "kernels" : "SuperKernels");
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    std::lock_guard lock(mu_);
    if (enabled_ && shown_) std::fputs("\r\033[K", stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::mutex mu_;
  std::string label_ = "fused";
};

// ---- report -----------------------------------------------------------------

json syncCounts(const std::map<SyncKind, uint32_t>& edges) {
  json j = json::object();
  for (SyncKind k : {SyncKind::Local, SyncKind::Flag, SyncKind::Counter, SyncKind::Barrier, SyncKind::Event}) {
    auto it = edges.find(k);
    j[syncKindName(k)] = it == edges.end() ? 0u : it->second;
  }
  return j;
}

json planJson(const CompiledPlan& cp) {
  const FusionPlan& plan = cp.plan;
  const PlanReport& r = plan.report;
  json j;
  j["ops_before"] = r.opsBefore;
  j["launches_after"] = r.launchesAfter;
  j["superkernels"] = r.superKernels;
  j["unfused_ops"] = r.launchesAfter - r.superKernels;
  j["side_launches"] = r.sideLaunches;
  j["variants"] = plan.variants.size();
  j["syncs"] = syncCounts(r.syncs.edges);
  j["barriers"] = r.syncs.barriers;
  const SyncModelReport& m = r.syncModel;
  j["sync_model"] = {{"on", m.on},
                     {"costs", m.costs},
                     {"boundaries_made_barriers", m.boundaries},
                     {"edges_replaced", m.toBarrier},
                     {"edges_dropped", m.dropped},
                     {"kept_cheaper", m.keptCheaper},
                     {"kept_independent", m.keptIndependent},
                     {"kept_early_start", m.keptEarlyStart},
                     {"summary", describeSyncModel(m)}};
  uint64_t preload = 0, prefetches = 0;
  json steps = json::array();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const SuperKernelPlan& sk = plan.steps[i];
    std::map<SyncKind, uint32_t> kinds;
    for (const Edge& e : sk.edges) ++kinds[e.sync];
    uint32_t barriers = 0, blocks = 0;
    for (const PlannedOp& op : sk.ops) {
      barriers += op.barrierBefore;
      blocks += op.blockDim;
      prefetches += op.preloadVariant >= 0 && sk.options.preloadCode != PreloadCode::None;
    }
    const uint64_t pre = preloadBytesOf(sk, plan);
    preload += pre;
    json s;
    s["index"] = i;
    s["name"] = sk.name;
    s["fused"] = sk.fused;
    s["scope"] = sk.scope;
    s["ops"] = sk.ops.size();
    s["blocks"] = blocks;
    s["cores"] = sk.numCores;
    s["queues"] = sk.queues.size();
    s["edges"] = syncCounts(kinds);
    s["barriers"] = barriers;
    s["preload_bytes"] = pre;
    s["end_reason"] = sk.endReason;
    if (sk.besideStep >= 0) s["beside_step"] = sk.besideStep;
    if (!sk.sides.empty()) {
      json sides = json::array();
      for (const SideLaunch& side : sk.sides) {
        json after = json::array(), before = json::array();
        for (uint32_t o : side.after) after.push_back(sk.ops[o].name);
        for (uint32_t o : side.before) before.push_back(sk.ops[o].name);
        sides.push_back({{"step", side.step}, {"stream", side.stream}, {"after", after}, {"before", before}});
      }
      s["sides"] = std::move(sides);
    }
    if (i < cp.steps.size()) {
      s["cached"] = cp.steps[i].cached;
      s["key"] = cp.steps[i].artifact.key;
    }
    steps.push_back(std::move(s));
  }
  j["preload_bytes"] = preload;
  j["prefetches"] = prefetches;
  j["steps"] = std::move(steps);
  j["splits"] = r.splits;
  j["collectives"] = r.collectives;
  j["warnings"] = r.warnings;
  return j;
}

json compileJson(const CompiledPlan& cp) {
  const CompileStats& s = cp.stats;
  return json{{"seconds", toSeconds(s.compileTime)},
              {"superkernel_hits", s.superKernelHits},
              {"superkernel_misses", s.superKernelMisses},
              {"object_hits", s.objectHits},
              {"object_misses", s.objectMisses},
              {"objects", s.objects}};
}

std::string plural(uint64_t n, std::string_view one, std::string_view many = "") {
  if (n == 1) return fmt::format("1 {}", one);
  return many.empty() ? fmt::format("{} {}s", n, one) : fmt::format("{} {}", n, many);
}

std::string edgesCell(const json& e) {
  return fmt::format("{}/{}/{}/{}/{}", e["local"].get<uint32_t>(), e["flag"].get<uint32_t>(),
                     e["counter"].get<uint32_t>(), e["barrier"].get<uint32_t>(), e["event"].get<uint32_t>());
}

std::string renderOutputs(const json& rep);
std::string renderTokens(const json& rep, const json& p, const std::string& cores);

// A baseline's row label from its report name ("graph-pdl" -> "graph+pdl").
std::string labelOf(const json& name) {
  const std::optional<Baseline> b = baselineNamed(name.get<std::string>());
  return b ? baselineLabel(*b) : name.get<std::string>();
}
// --baselines in the run sections: "unfused", or "unfused, graph, graph+pdl" (what was checked).
std::string baselinesTitle(const json& r) {
  std::string t;
  for (const json& n : r.value("checked", json::array({"unfused"}))) t += (t.empty() ? "" : ", ") + labelOf(n);
  return t;
}
std::string baselineRow(const json& b) { return labelOf(b["name"]); }
// Kernel launches per run: the fused plan's, or one per op (the graphs replay those launches as one).
std::string baselineLaunches(const json& b, const json& p) {
  const uint32_t ops = p["ops_before"].get<uint32_t>();
  return b["name"].get<std::string>() == "unfused" ? std::to_string(ops) : fmt::format("{} in 1 graph", ops);
}
// "  speedup  1.26x (min-max ...)" for unfused alone (the line every run printed before --baselines), else one
// line per baseline naming it.
std::string speedupLines(const json& r) {
  const json& bs = r["baselines"];
  std::string s;
  if (bs.size() == 1 && bs[0]["name"] == "unfused")
    return fmt::format("  speedup  {:.2f}x (min-max {:.2f}x-{:.2f}x over sample pairs)\n", bs[0]["speedup"].get<double>(),
                       bs[0]["speedup_min"].get<double>(), bs[0]["speedup_max"].get<double>());
  for (const json& b : bs)
    s += fmt::format("  speedup  {:.2f}x vs {} (min-max {:.2f}x-{:.2f}x over sample pairs)\n",
                     b["speedup"].get<double>(), baselineRow(b), b["speedup_min"].get<double>(),
                     b["speedup_max"].get<double>());
  return s;
}
// After the results line: which sides were compared with fused, when more than unfused.
std::string checkedSuffix(const json& r) {
  const json c = r.value("checked", json::array());
  return c.size() > 1 ? " against each of " + baselinesTitle(r) : std::string();
}

// The text report: a header, the per-step table (like a profiler's), totals,
// cache and compile lines, then the run section.
std::string renderText(const json& rep) {
  std::string s;
  s += fmt::format("sk-compile {}: {}\n", rep["version"].get<std::string>(), rep["op_list"].get<std::string>());
  // No compiler line when none was looked for (--plan-only) or found.
  const std::string compiler = rep.contains("compiler") ? rep["compiler"]["version"].get<std::string>()
                                                        : std::string("no compiler used");
  // The machine model's word for its cores ("workers", "cores", "resident CTAs").
  std::string cores = fmt::format("{} {}", rep["workers"].get<uint32_t>(), rep.value("core_noun", std::string("workers")));
  // A machine of several core pools counts in its own units, as --workers does: "8 AI Cores (24 cores: 8 cube
  // + 16 vector)".
  if (const auto u = rep.find("device_units"); u != rep.end())
    cores = fmt::format("{} {} ({}: {})", (*u)["count"].get<uint32_t>(), (*u)["noun"].get<std::string>(), cores,
                        (*u)["pools"].get<std::string>());
  s += fmt::format("  target {} (arch {}), {}, {}\n", rep["target"].get<std::string>(), rep["arch"].get<std::string>(),
                   cores, compiler);
  s += fmt::format("  options {}\n", rep["options"].get<std::string>());
  const json& p = rep["plan"];
  s += fmt::format("\nFusion: {} -> {} ({}, {}), {}\n", plural(p["ops_before"].get<uint32_t>(), "op"),
                   plural(p["launches_after"].get<uint32_t>(), "launch", "launches"),
                   plural(p["superkernels"].get<uint32_t>(), "SuperKernel"),
                   plural(p["unfused_ops"].get<uint32_t>(), "unfused op") +
                       (p.value("side_launches", 0u) ? fmt::format(", {} beside a SuperKernel",
                                                                     p["side_launches"].get<uint32_t>())
                                                     : std::string()),
                   plural(p["variants"].get<size_t>(), "kernel variant"));
  Table t({"#", "step", "kind", "ops", "blocks", "cores", "queues", "edges l/f/c/b/e", "sync_all", "preload", "cache",
           "split / reason"},
          "rllrrrrrrrll");
  // Long op lists: the table keeps its head and tail; --json has every step.
  constexpr size_t kMaxRows = 40;
  const json& steps = p["steps"];
  const size_t n = steps.size();
  for (size_t i = 0; i < n; ++i) {
    if (n > kMaxRows && i == kMaxRows / 2) {
      t.add({"...", fmt::format("{} more steps (see --json)", n - kMaxRows)});
      i = n - kMaxRows / 2 - 1;
      continue;
    }
    const json& st = steps[i];
    std::string cache = st.contains("cached") ? (st["cached"].get<bool>() ? "hit" : "miss") : "-";
    const std::string kind = st["fused"].get<bool>()     ? "SuperKernel"
                             : st.contains("beside_step") ? fmt::format("beside {}", st["beside_step"].get<int>())
                                                          : "unfused";
    t.add({std::to_string(i), st["name"].get<std::string>(), kind,
           std::to_string(st["ops"].get<size_t>()), std::to_string(st["blocks"].get<uint32_t>()),
           std::to_string(st["cores"].get<uint32_t>()), std::to_string(st["queues"].get<size_t>()),
           edgesCell(st["edges"]), std::to_string(st["barriers"].get<uint32_t>()),
           formatSize(st["preload_bytes"].get<uint64_t>()), cache, st["end_reason"].get<std::string>()});
  }
  s += t.str();
  const json& sy = p["syncs"];
  s += fmt::format("Syncs: {} edges: local {}, flag {}, counter {}, barrier {}, event {}; {} sync_all barriers\n",
                   sy["local"].get<uint32_t>() + sy["flag"].get<uint32_t>() + sy["counter"].get<uint32_t>() +
                       sy["barrier"].get<uint32_t>() + sy["event"].get<uint32_t>(),
                   sy["local"].get<uint32_t>(), sy["flag"].get<uint32_t>(), sy["counter"].get<uint32_t>(),
                   sy["barrier"].get<uint32_t>(), sy["event"].get<uint32_t>(), p["barriers"].get<uint32_t>());
  if (const std::string m = p["sync_model"]["summary"].get<std::string>(); !m.empty()) s += "Sync model: " + m + "\n";
  s += fmt::format("Preload: {} of code prefetched ({} prefetches)\n", formatSize(p["preload_bytes"].get<uint64_t>()),
                   p["prefetches"].get<uint64_t>());
  for (const auto& c : p["collectives"]) s += "Collective " + c.get<std::string>() + "\n";
  for (const auto& w : p["warnings"]) s += "warning: " + w.get<std::string>() + "\n";
  if (rep.value("plan_only", false)) {
    s += "Plan only: nothing was compiled or run (code sizes unknown: each prefetch counts one 2 KiB granule, "
         "preload-code=max 16 KiB, a lower bound of what a compile reports)\n";
  }
  if (!rep.contains("compile")) return s + renderOutputs(rep);
  const json& c = rep["compile"];
  s += fmt::format("Cache: SuperKernels {} hit / {} miss, objects {} hit / {} miss ({})\n",
                   c["superkernel_hits"].get<uint64_t>(), c["superkernel_misses"].get<uint64_t>(),
                   c["object_hits"].get<uint64_t>(), c["object_misses"].get<uint64_t>(),
                   rep["cache_dir"].get<std::string>());
  std::string compileLine = fmt::format("Compile: {} fused", formatSeconds(c["seconds"].get<double>()));
  if (rep.contains("reference")) {
    const json& r = rep["reference"];
    compileLine += fmt::format(", {} unfused reference ({} SuperKernel hits / {} misses)",
                               formatSeconds(r["seconds"].get<double>()), r["superkernel_hits"].get<uint64_t>(),
                               r["superkernel_misses"].get<uint64_t>());
  }
  if (rep.contains("pdl_reference")) {
    const json& r = rep["pdl_reference"];
    compileLine += fmt::format(", {} Graph + PDL reference ({} SuperKernel hits / {} misses)",
                               formatSeconds(r["seconds"].get<double>()), r["superkernel_hits"].get<uint64_t>(),
                               r["superkernel_misses"].get<uint64_t>());
  }
  s += compileLine + "\n";
  if (rep.contains("run") && rep["run"].contains("tokens")) {
    s += renderTokens(rep, p, cores);
  } else if (rep.contains("run")) {
    const json& r = rep["run"];
    s += "\nRun: fused vs " + baselinesTitle(r) + " from identical buffers";
    if (r.contains("fused_seconds")) {
      // Say exactly what was measured: the numbers are medians of samples,
      // each the median run of a batch (bench/suite.cpp's method).
      s += fmt::format(", {}\n  {} samples per side, each the median run of a ~{:g} ms batch, after {} warm-up "
                       "runs; median and min-max over the samples\n",
                       cores, r["repeat"].get<int>(), r["batch_ms"].get<double>(),
                       r["warmups"].get<int>());
      Table rt({"", "median", "min", "max", "runs/sample", "launches"}, "lrrrrr");
      rt.add({"fused", formatSeconds(r["fused_seconds"].get<double>()),
              formatSeconds(r["fused_min_seconds"].get<double>()), formatSeconds(r["fused_max_seconds"].get<double>()),
              std::to_string(r["fused_batch"].get<long>()), std::to_string(p["launches_after"].get<uint32_t>())});
      for (const json& b : r["baselines"])
        rt.add({baselineRow(b), formatSeconds(b["seconds"].get<double>()), formatSeconds(b["min_seconds"].get<double>()),
                formatSeconds(b["max_seconds"].get<double>()), std::to_string(b["batch"].get<long>()),
                baselineLaunches(b, p)});
      s += rt.str();
      s += speedupLines(r);
    } else {
      s += r["repeat"].get<int>() == 0 ? " (compared, not timed: --repeat 0)\n" : "\n";
    }
    if (r["identical"].get<bool>()) {
      s += fmt::format("  results  identical: {} buffers, {} compared bit-for-bit{}\n", r["buffers"].get<size_t>(),
                       formatSize(r["bytes_compared"].get<uint64_t>()), checkedSuffix(r));
    } else {
      const json& m = r["mismatch"];
      s += fmt::format("  results  DIFFER in {} of {} buffers; first: {}\n", m["differing_buffers"].get<size_t>(),
                       r["buffers"].get<size_t>(), m["message"].get<std::string>());
    }
  }
  return s + renderOutputs(rep);
}

// The "Tokens:" section of a --tokens run (common/Tokens.h says what is measured).
std::string renderTokens(const json& rep, const json& p, const std::string& cores) {
  const json& r = rep["run"];
  const int tokens = r["tokens"].get<int>();
  std::string s = fmt::format("\nTokens: {} decode step{} fused vs {} from identical buffers", tokens,
                              tokens == 1 ? "" : "s", baselinesTitle(r));
  if (r.contains("fused_tokens_per_second")) {
    s += fmt::format(", {}\n  {} samples per side, each {} consecutive run{} from the initial buffers (restored "
                     "before each sample, untimed), after {} warm-up sequence; median and min-max over the samples\n",
                     cores, r["repeat"].get<int>(), tokens, tokens == 1 ? "" : "s",
                     r["warmups"].get<int>());
    Table rt({"", "tokens/s", "min", "max", "ms/token", "launches/token"}, "lrrrrr");
    auto row = [&](const char* side, const char* key, std::string launches) {
      const double med = r[std::string(key)].get<double>();
      rt.add({side, fmt::format("{:.1f}", med), fmt::format("{:.1f}", r[std::string(key) + "_min"].get<double>()),
              fmt::format("{:.1f}", r[std::string(key) + "_max"].get<double>()),
              med > 0 ? fmt::format("{:.3f}", 1e3 / med) : std::string("-"), std::move(launches)});
    };
    row("fused", "fused_tokens_per_second", std::to_string(p["launches_after"].get<uint32_t>()));
    for (const json& b : r["baselines"]) {
      const double med = b["tokens_per_second"].get<double>();
      rt.add({baselineRow(b), fmt::format("{:.1f}", med), fmt::format("{:.1f}", b["tokens_per_second_min"].get<double>()),
              fmt::format("{:.1f}", b["tokens_per_second_max"].get<double>()),
              med > 0 ? fmt::format("{:.3f}", 1e3 / med) : std::string("-"), baselineLaunches(b, p)});
    }
    s += rt.str();
    s += speedupLines(r);
    if (r.contains("ranks")) {
      // mpirun: the table above is rank 0's; every rank's medians, then the job's.
      Table kt({"rank", "fused tokens/s", "unfused tokens/s"}, "lrr");
      for (const auto& k : r["ranks"])
        kt.add({std::to_string(k["rank"].get<uint32_t>()), fmt::format("{:.1f}", k["fused_tokens_per_second"].get<double>()),
                fmt::format("{:.1f}", k["unfused_tokens_per_second"].get<double>())});
      const json& t = r["total"];
      kt.add({"total", fmt::format("{:.1f}", t["fused_tokens_per_second"].get<double>()),
              fmt::format("{:.1f}", t["unfused_tokens_per_second"].get<double>())});
      s += "  per rank (the table above is rank 0's); total = the job's rate: every rank takes part in each token, so "
           "the slowest rank's (the sum over ranks would be " +
           fmt::format("{:.1f} fused", t["fused_sum_over_ranks"].get<double>()) + ")\n" + kt.str();
    }
  } else {
    s += r["repeat"].get<int>() == 0 ? " (compared, not timed: --repeat 0)\n" : "\n";
  }
  if (r["identical"].get<bool>()) {
    s += fmt::format("  results  identical after every token: {} buffers, {} compared bit-for-bit{}\n",
                     r["buffers"].get<size_t>(), formatSize(r["bytes_compared"].get<uint64_t>()), checkedSuffix(r));
  } else {
    const json& m = r["mismatch"];
    s += fmt::format("  results  DIFFER after token {} in {} of {} buffers; first: {}\n", m["token"].get<int>(),
                     m["differing_buffers"].get<size_t>(), r["buffers"].get<size_t>(), m["message"].get<std::string>());
  }
  if (r.contains("compiles")) {
    s += fmt::format("  compiles {} in this run (one plan serves every token: the same for any --tokens)\n",
                     r["compiles"].get<uint64_t>());
  }
  return s;
}

// The "Wrote" and "note" lines.
std::string renderOutputs(const json& rep) {
  std::string s;
  if (rep.contains("outputs") && !rep["outputs"].empty()) {
    s += "\nWrote:\n";
    for (auto& [k, v] : rep["outputs"].items()) {
      if (v.is_array()) {
        s += fmt::format("  {}: {} files in {}\n", k, v.size(), rep["output_dirs"].value(k, std::string()));
      } else {
        s += fmt::format("  {}: {}\n", k, v.get<std::string>());
      }
    }
  }
  for (const auto& n : rep.value("notes", json::array())) s += "note: " + n.get<std::string>() + "\n";
  return s;
}

// ---- the work ---------------------------------------------------------------

class Compiler {
 public:
  explicit Compiler(const Args& a) : args_(a) {}

  // Returns the exit code; the report goes to stdout, errors to stderr.
  int run() {
    std::optional<Failure> f = work();
    progress_.clear();
    // Under mpirun every rank says what failed (and which rank it is); on
    // success rank 0 alone prints the report, whose tokens table has every
    // rank's figures.
    const bool ranks = comm_ && comm_->size() > 1;
    if (f && ranks) f->error = std::move(f->error).context(fmt::format("rank {} of {}", comm_->rank(), comm_->size()));
    if (f || !ranks || comm_->rank() == 0) printReport(f);
    if (f) printError(kTool, f->error);
    if (f && ranks) {
      // mpirun ends the other ranks as soon as one exits non-zero: a moment's wait lets a peer that failed
      // too (a mismatch is seen by both sides at once) print its own error first.
      std::fflush(stderr);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    // After a failed collective a peer may never match what this rank left
    // pending, so MPI_Finalize could wait forever: only a clean run finalizes.
    if (comm_ && !f) {
      comm_.reset();
      finalizeMpi();
    }
    return f ? f->code : kExitOk;
  }

 private:
  // The report on stdout (--json: one object, with "ok": false and the error on a failure; else the text,
  // once a plan exists). Also called by the launch watchdog's handler before it ends the process: the main
  // thread is stuck in the hung launch then and does not touch the report.
  void printReport(const std::optional<Failure>& f) {
    if (f) {
      rep_["ok"] = false;
      rep_["exit_code"] = f->code;
      rep_["error"] = json{{"kind", errorKindName(f->error.kind())}, {"message", f->error.message()}};
    } else {
      rep_["ok"] = true;
      rep_["exit_code"] = 0;
    }
    // The report (or as much as was known) is printed even on failure: the
    // plan of a list that then fails to run is what one debugs from.
    if (args_.json) {
      std::fputs((rep_.dump(2, ' ', false, json::error_handler_t::replace) + "\n").c_str(), stdout);
    } else {
      std::string text;
      if (rep_.contains("sync_calibration")) {
        const json& c = rep_["sync_calibration"];
        text += fmt::format("Sync calibration ({}, {} {}): barrier {} ns, counter {} ns, flag {} ns per boundary\n"
                            "  saved: {} (every later plan for this target and core count reads it; "
                            "$SK_SYNC_COSTS overrides it)\n",
                            c["target"].get<std::string>(), c["cores"].get<uint32_t>(), c["core_noun"].get<std::string>(),
                            c["barrier_ns"].get<double>(), c["counter_ns"].get<double>(), c["flag_ns"].get<double>(),
                            c["source"].get<std::string>());
      }
      if (rep_.contains("plan")) text += (text.empty() ? "" : "\n") + renderText(rep_);
      std::fputs(text.c_str(), stdout);
    }
    std::fflush(stdout);
  }

  // The one Session of this run (--calibrate and the compile share it: one cache, device and toolchain lookup).
  Expected<Session*> openSession() {
    if (session_) return session_.get();
    SessionOptions so;
    so.workers = args_.workers;
    so.cacheDir = args_.cacheDir;
    so.forceRecompile = args_.forceRecompile;
    so.remoteCache.url = args_.remoteCache;
    so.jobs = args_.jobs;
    so.runTimeoutMs = args_.runTimeoutMs;
    // A hung kernel ends the process from the watchdog thread: the report (--json included) is printed first,
    // as for any other failure.
    so.onRunTimeout = exitOnRunTimeout(kTool, [this](const std::string& report) {
      printReport(Failure{Error(ErrorKind::Runtime, report), kExitRuntimeFailure});
    });
    so.options = args_.options;
    so.progress = [this](std::string_view stage, size_t done, size_t total) { progress_.update(stage, done, total); };
    so.communicator = comm_;
    SK_ASSIGN_OR_RETURN(session_, Session::create(so));
    return session_.get();
  }

  // --calibrate: the sync costs of the target's device (this machine), cached where the plans read them.
  std::optional<Failure> calibrate() {
    auto session = openSession();
    if (!session) return failure(std::move(session).error());
    const std::string target = args_.target.empty() ? std::string(hostTargetName()) : args_.target;
    auto costs = (**session).calibrateSync(target);
    if (!costs) return failure(std::move(costs).error().context("--calibrate"));
    auto device = (**session).device(target);
    if (!device) return failure(std::move(device).error());
    const MachineModel& m = (*device)->machine();
    rep_["sync_calibration"] = {{"target", target},          {"cores", m.deviceCores()},
                                {"core_noun", m.coreNoun},    {"barrier_ns", costs->barrierNs},
                                {"counter_ns", costs->counterNs}, {"flag_ns", costs->flagNs},
                                {"source", costs->source}};
    return std::nullopt;
  }

  std::optional<Failure> work() {
    rep_["tool"] = kTool;
    rep_["version"] = libraryVersion();
    rep_["op_list"] = args_.opList;

    // Environment knobs that would otherwise be ignored with a warning are
    // hard errors here: a CI job that sets them means them.
    if (args_.workers == 0) {
      if (auto w = workerCountFromEnv(); !w) return Failure{w.error(), kExitBadInput};
    }
    if (auto e = badTimeoutEnvironment()) return Failure{*e, kExitBadInput};

    // --options gets exactly the checks the file's options get, blamed on the flag (also under --plan-only).
    if (Status st = checkOptionString(args_.options); !st)
      return Failure{Error(ErrorKind::BadInput, "--options: " + st.error().message()), kExitBadInput};
    if (args_.calibrate) {
      if (auto f = calibrate()) return f;
      if (args_.opList.empty()) return std::nullopt;
    }

    auto list = loadOpList(args_.opList);
    // The op list is input: a missing or unreadable file is exit 2 as much
    // as a malformed one.
    if (!list) return Failure{Error(ErrorKind::BadInput, list.error().message()), kExitBadInput};
    makePathsAbsolute(*list);
    // Every output is checked before anything is planned or compiled.
    for (const auto& [path, what, directory] : {std::tuple{&args_.emitSource, "--emit-source", true},
                                                std::tuple{&args_.dump, "--dump", true},
                                                std::tuple{&args_.emitDot, "--emit-dot", false},
                                                std::tuple{&args_.trace, "--trace", false}}) {
      if (path->empty()) continue;
      if (Status st = checkOutputPath(*path, what, directory); !st) return failure(st.error());
    }
    // A list with runtime values is one step of a loop: each run may advance its position, so it is run and
    // timed as T tokens from its initial buffers (common/Tokens.h), never as thousands of runs of one state.
    tokens_ = args_.tokens;
    // Collectives run over MPI: under mpirun (or for a list that has them)
    // the session's executor gets the communicator (docs/COLLECTIVES.md).
    if (!args_.planOnly && (startedByMpirun() || hasCollectiveOps(*list))) {
      auto c = mpiCommunicator();
      if (!c) return Failure{c.error(), kExitBadInput};
      comm_ = std::move(*c);
      if (comm_->size() > 1 && args_.run && tokens_ == 0) {
        // A frozen --run batches runs by how long they take, which differs per rank; ranks must run
        // their collectives the same number of times.
        tokens_ = 1;
        note("under mpirun --run runs and times the list as a decode loop of 1 token (--tokens T for T): ranks "
             "must run their collectives the same number of times");
      }
    }
    if (args_.run && tokens_ == 0 && hasRuntimeValues(*list)) {
      tokens_ = 1;
      note("the op list has runtime values: --run runs and times it as a decode loop of 1 token from its initial "
           "buffers (--tokens T for T)");
    }

    CompileRequest fusedReq;
    fusedReq.target = args_.target;
    // The plan first, without compiling: --plan-only stops here (no compiler
    // is looked for or run), and otherwise the report has the plan even if
    // compiling then fails.
    PlanOnlyConfig pc;
    pc.sessionOptions = args_.options;
    pc.workers = args_.workers;
    pc.cacheDir = args_.cacheDir;
    // Compiling plans again (Session::compile) and logs the planner's warnings then; this first pass stays
    // quiet, or each one would be logged twice (the report repeats them once at the end either way).
    auto plannedOr = [&] {
      if (args_.planOnly) return planOnly(*list, fusedReq, pc);
      const spdlog::level::level_enum level = spdlog::default_logger_raw()->level();
      spdlog::set_level(std::max(level, spdlog::level::err));
      auto planned = planOnly(*list, fusedReq, pc);
      spdlog::set_level(level);
      return planned;
    }();
    if (!plannedOr) return failure(std::move(plannedOr).error());
    const CompiledPlan& planned = plannedOr->plan;
    rep_["target"] = planned.list.target;
    rep_["arch"] = planned.list.arch;
    rep_["options"] = planned.options.canonical();
    rep_["plan"] = planJson(planned);
    // The machine the plan was made for (the back end's static model, the same with or without the device).
    rep_["workers"] = plannedOr->cores;
    rep_["core_noun"] = planned.plan.machine.coreNoun;  // "workers" on cpu, "resident CTAs" / "cores" elsewhere
    if (const MachineModel& m = planned.plan.machine; m.pools.size() > 1) {
      std::vector<std::string> pools;
      for (const CorePool& p : m.pools) pools.push_back(fmt::format("{} {}", p.count, coreTypeName(p.kind)));
      rep_["device_units"] = json{{"count", m.deviceCores()}, {"noun", m.unitNoun}, {"pools", fmt::format("{}", fmt::join(pools, " + "))}};
    }
    if (args_.planOnly) {
      rep_["plan_only"] = true;
      if (!args_.emitDot.empty()) {
        if (auto f = emitDot(planned)) return f;
      }
      return std::nullopt;
    }

    auto session = openSession();
    if (!session) return failure(std::move(session).error());
    Session& ss = **session;
    // The planned target's device and compiler (nvcc for cuda; the simulator's host compiler for ascend).
    auto device = ss.device(planned.list.target);
    if (!device) return failure(std::move(device).error().context(list->origin));
    // The graph baselines this device can run, decided before anything compiles: one that cannot (no graphs
    // on the target, a libcudart without the symbols, a GPU below sm_90 for PDL) is skipped with one note.
    if (args_.run || args_.buildOnly) {
      for (Baseline b : args_.baselines) {
        if (b == Baseline::Unfused) continue;
        const std::string why =
            hasCollectiveOps(*list)
                ? std::string("the op list has collective ops, which run per launch, not in a replayed graph")
                : (*device)->launchGraphUnavailable(b == Baseline::GraphPdl ? GraphLaunch::Pdl : GraphLaunch::Plain);
        if (why.empty()) {
          graphBaselines_.push_back(b);
        } else {
          note(fmt::format("the {} baseline is skipped: {}", baselineLabel(b), why));
          skippedBaselines_[baselineName(b)] = why;
        }
      }
    }
    auto toolchain = ss.toolchain(planned.list.target);
    if (!toolchain) return failure(std::move(toolchain).error().context(list->origin));
    rep_["compiler"] = json{{"path", (*toolchain)->path.string()}, {"version", (*toolchain)->versionLine()}};
    const auto& cache = ss.cache();
    if (auto st = cache->stats()) compilesBefore_ = st->compiles;
    rep_["cache_dir"] = cache->root().string();
    if (cache->usingPrivateFallback()) {
      note(fmt::format("cache directory {} is not trusted; this run used a private temporary cache",
                       cache->requestedRoot().string()));
    }

    progress_.phase("fused");
    auto fused = ss.compile(*list, fusedReq);
    noteDiskFull(*cache);
    if (!fused) return failure(std::move(fused).error());
    rep_["target"] = fused->list.target;
    rep_["arch"] = fused->list.arch;
    rep_["options"] = fused->options.canonical();
    rep_["plan"] = planJson(*fused);
    rep_["compile"] = compileJson(*fused);
    if (fused->options.profiling && args_.trace.empty()) {
      // profiling=1 alone builds profiled kernels whose records nobody reads: say so rather than write nothing.
      note("profiling=1 builds profiled SuperKernels, but only --trace FILE writes a trace (and sets profiling=1 "
           "itself): this run recorded nothing");
    }

    if (!args_.emitSource.empty()) {
      if (auto f = emitSource(*fused)) return f;
    }
    if (!args_.emitDot.empty()) {
      if (auto f = emitDot(*fused)) return f;
    }

    std::optional<CompiledPlan> unfused;
    if (args_.run || args_.buildOnly) {
      CompileRequest ref = fusedReq;
      ref.fuse = false;
      progress_.phase("unfused reference");
      auto u = ss.compile(*list, ref);
      noteDiskFull(*cache);
      if (!u) return failure(std::move(u).error().context("unfused reference"));
      rep_["reference"] = compileJson(*u);
      unfused = std::move(*u);
      if (std::find(graphBaselines_.begin(), graphBaselines_.end(), Baseline::GraphPdl) != graphBaselines_.end()) {
        // The same unfused plan with its kernels built as the PDL variant (griddepcontrol in each kernel, the
        // launch recorded for the capture): a second build of every unfused step.
        CompileRequest pdl = ref;
        pdl.graphPdl = true;
        progress_.phase("Graph + PDL reference");
        auto p = ss.compile(*list, pdl);
        noteDiskFull(*cache);
        if (!p) return failure(std::move(p).error().context("Graph + PDL reference"));
        rep_["pdl_reference"] = compileJson(*p);
        pdlReference_ = std::move(*p);
      }
    }
    progress_.clear();
    if (args_.buildOnly) {
      note("--baselines without --run: built and cached what --run would load (the fused plan, the unfused "
           "reference" + std::string(pdlReference_ ? ", the Graph + PDL build" : "") + "); nothing was run");
      return std::nullopt;
    }

    if (args_.run && comm_ && comm_->size() > 1) {
      // Ranks compile at their own pace (one may hit the cache, another compile cold), and a collective
      // waits only SK_WAIT_TIMEOUT_MS for its peers: meet here first, with the compile's own limit.
      std::vector<char> mine(1), all(comm_->size());
      sk_collective_args a{mine.data(), all.data(), 1, int64_t(all.size()), 1u | uint64_t(DType::U8) << 16,
                           allRanks(), 0x736b2d7265616479ull};
      const auto limitMs = std::chrono::duration_cast<std::chrono::milliseconds>(compileLimits().total).count();
      const auto limit = uint32_t(std::clamp<int64_t>(limitMs, 1, UINT32_MAX));
      if (Status st = comm_->run(a, "\"sk-compile ready to run\"", limit, [] { return false; }); !st)
        return failure(st.error());
    }
    if (args_.run && tokens_ > 0) {
      if (auto f = runTokensCompare(ss, *fused, *unfused)) return f;
    } else if (args_.run) {
      if (auto f = runCompare(ss, *fused, *unfused)) return f;
    } else if (!args_.dump.empty()) {
      // --dump without --run: one fused run from the initial buffers.
      auto buffers = BufferSet::create(fused->list);
      if (!buffers) return failure(std::move(buffers).error());
      if (Status st = ss.run(*fused, *buffers); !st) return failure(Error(st.error()).context("fused run"));
      if (auto f = dump(*buffers)) return f;
    }
    if (!args_.trace.empty()) {
      if (auto f = trace(ss, *list, fusedReq)) return f;
    }
    return std::nullopt;
  }

  void noteDiskFull(const Cache& cache) {
    if (notedDiskFull_ || !cache.usingDiskFullFallback()) return;
    notedDiskFull_ = true;
    note(fmt::format("cache directory {} ran out of space: this run built into a private temporary cache and stored "
                     "nothing there (free space, or run sk-cache gc)",
                     cache.root().string()));
  }

  void note(std::string n) {
    rep_["notes"].push_back(std::move(n));
  }

  static json mismatchJson(const BufferMismatch& m) {
    return json{{"buffer", m.buffer},          {"index", m.index},
                {"unfused", m.expected},       {"fused", m.actual},
                {"differing_buffers", m.differingBuffers}, {"message", m.message()}};
  }

  // Exit 1 with the first difference; `when` says after which token (--tokens) or nothing.
  static Failure mismatchFailure(const BufferMismatch& m, const std::string& when,
                                 const std::string& against = "unfused") {
    return Failure{Error(ErrorKind::Mismatch,
                         fmt::format("fused and {} results differ{} ({} buffer{}): {} (expected: {}, got: "
                                     "fused); run with --dump DIR to inspect, or --options debug-sync-all=1 to check "
                                     "for a missing dependency",
                                     against, when, m.differingBuffers, m.differingBuffers == 1 ? "" : "s",
                                     m.message(), against)),
                   kExitMismatch};
  }

  uint64_t allRanks() const {
    const uint32_t n = comm_->size();
    return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  }

  static bool hasCollectiveOps(const OpList& list) {
    return std::any_of(list.ops.begin(), list.ops.end(), [](const Op& o) { return o.kind == Op::Kind::Collective; });
  }

  // Every rank's medians, gathered over the communicator (its own collective, so a rank that is gone is
  // an error, not a hang). The job makes each token on every rank at once (tensor parallelism), so its
  // rate is the slowest rank's; the sum is what independent ranks would make together.
  std::optional<Failure> gatherRanks(json& r, double fused, double unfused) {
    const uint32_t n = comm_->size();
    std::vector<double> mine{fused, unfused}, all(2 * size_t(n));
    sk_collective_args a{mine.data(), all.data(), 2, int64_t(2 * n), 1u | uint64_t(DType::F64) << 16, allRanks(),
                         0x736b2d746f6b656eull};
    Status st = comm_->run(a, "\"sk-compile tokens report\"", defaultWaitTimeoutMs(), [] { return false; });
    if (!st) return failure(st.error());
    json by = json::array();
    double fusedMin = all[0], unfusedMin = all[1], fusedSum = 0, unfusedSum = 0;
    for (uint32_t i = 0; i < n; ++i) {
      by.push_back({{"rank", i}, {"fused_tokens_per_second", all[2 * i]}, {"unfused_tokens_per_second", all[2 * i + 1]}});
      fusedMin = std::min(fusedMin, all[2 * i]);
      unfusedMin = std::min(unfusedMin, all[2 * i + 1]);
      fusedSum += all[2 * i];
      unfusedSum += all[2 * i + 1];
    }
    r["ranks"] = by;
    r["total"] = {{"fused_tokens_per_second", fusedMin}, {"unfused_tokens_per_second", unfusedMin},
                  {"fused_sum_over_ranks", fusedSum}, {"unfused_sum_over_ranks", unfusedSum}};
    return std::nullopt;
  }

  // --tokens T (and --run of a list with runtime values: T = 1): common/Tokens.h.
  std::optional<Failure> runTokensCompare(Session& ss, CompiledPlan& fused, CompiledPlan& unfused) {
    TimingConfig tc;
    tc.samples = args_.repeat;
    auto graphs = captureGraphs(ss, fused.list, unfused);
    if (!graphs) return failure(std::move(graphs).error());
    std::vector<GraphSide*> graphSides;
    for (const auto& g : *graphs) graphSides.push_back(g.get());
    auto tr = runTokens(ss, fused, unfused, tokens_, tc, /*time=*/args_.repeat > 0, graphSides, timesUnfused());
    if (!tr) return failure(std::move(tr).error());
    json r;
    r["repeat"] = args_.repeat;
    r["tokens"] = tr->tokens;
    r["buffers"] = tr->fused.size();
    r["bytes_compared"] = tr->bytesCompared;
    r["identical"] = !tr->mismatch.has_value();
    r["checked"] = checkedBaselines(*graphs);
    if (!skippedBaselines_.empty()) r["skipped"] = skippedBaselines_;
    // Compiler runs this invocation caused (the cache's counter is persisted: the difference since the
    // session opened it): the same for any T, since one plan serves every token.
    if (auto st = ss.cache()->stats()) r["compiles"] = st->compiles - compilesBefore_;
    if (!args_.dump.empty()) {
      if (auto f = dump(tr->fused)) {
        rep_["run"] = r;
        return f;
      }
    }
    if (tr->mismatch) {
      r["mismatch"] = mismatchJson(*tr->mismatch);
      r["mismatch"]["token"] = tr->mismatchToken;
      r["mismatch"]["baseline"] = baselineName(tr->mismatchBaseline);
      rep_["run"] = r;
      return mismatchFailure(*tr->mismatch, fmt::format(" after token {} of {}", tr->mismatchToken, tr->tokens),
                             baselineLabel(tr->mismatchBaseline));
    }
    if (args_.repeat == 0) {  // compared, not timed
      rep_["run"] = r;
      return std::nullopt;
    }
    r["warmups"] = tr->warmups;
    r["fused_tokens_per_second"] = tr->fusedTokensPerSecond.median;
    r["fused_tokens_per_second_min"] = tr->fusedTokensPerSecond.min;
    r["fused_tokens_per_second_max"] = tr->fusedTokensPerSecond.max;
    r["fused_samples"] = tr->fusedSeconds;
    json baselines = json::array();
    auto baseline = [&](Baseline b, const Summary& tps, const std::vector<double>& samples, const Summary& speedup) {
      baselines.push_back({{"name", baselineName(b)}, {"tokens_per_second", tps.median},
                           {"tokens_per_second_min", tps.min}, {"tokens_per_second_max", tps.max},
                           {"samples", samples}, {"speedup", speedup.median}, {"speedup_min", speedup.min},
                           {"speedup_max", speedup.max}});
    };
    if (timesUnfused()) {
      // The unfused figures keep their keys (docs/CLI.md's schema).
      r["unfused_tokens_per_second"] = tr->unfusedTokensPerSecond.median;
      r["unfused_tokens_per_second_min"] = tr->unfusedTokensPerSecond.min;
      r["unfused_tokens_per_second_max"] = tr->unfusedTokensPerSecond.max;
      r["unfused_samples"] = tr->unfusedSeconds;
      r["speedup"] = tr->speedup.median;
      r["speedup_min"] = tr->speedup.min;
      r["speedup_max"] = tr->speedup.max;
      baseline(Baseline::Unfused, tr->unfusedTokensPerSecond, tr->unfusedSeconds, tr->speedup);
    }
    for (const TokenGraphTiming& g : tr->graphs) baseline(g.kind, g.tokensPerSecond, g.seconds, g.speedup);
    r["baselines"] = baselines;
    if (comm_ && comm_->size() > 1) {
      if (auto f = gatherRanks(r, tr->fusedTokensPerSecond.median, tr->unfusedTokensPerSecond.median)) return f;
    }
    rep_["run"] = r;
    return std::nullopt;
  }

  std::optional<Failure> runCompare(Session& ss, CompiledPlan& fused, CompiledPlan& unfused) {
    auto replay = runAndCompare(ss, fused, unfused);
    if (!replay) return failure(std::move(replay).error());
    json r;
    r["repeat"] = args_.repeat;
    r["buffers"] = replay->fused.size();
    r["bytes_compared"] = replay->bytesCompared;
    r["identical"] = !replay->mismatch.has_value();
    // The dump is of the checked run, from the initial buffers, before the
    // timing repetitions run the plan again on the same memory.
    if (!args_.dump.empty()) {
      if (auto f = dump(replay->fused)) {
        rep_["run"] = r;
        return f;
      }
    }
    if (replay->mismatch) {
      r["mismatch"] = mismatchJson(*replay->mismatch);
      rep_["run"] = r;
      // Timing wrong results would only hide the finding: stop here.
      return mismatchFailure(*replay->mismatch, "");
    }
    // Each graph baseline as unfused was: one replay from the initial buffers, every buffer against fused's.
    auto graphs = captureGraphs(ss, fused.list, unfused);
    if (!graphs) {
      rep_["run"] = r;
      return failure(std::move(graphs).error());
    }
    r["checked"] = checkedBaselines(*graphs);
    if (!skippedBaselines_.empty()) r["skipped"] = skippedBaselines_;
    for (const auto& g : *graphs) {
      Status st = g->launch();
      if (st) st = g->synchronize();
      if (st) st = g->download();
      auto diff = st ? g->buffers().compare(replay->fused) : Expected<std::optional<BufferMismatch>>(st.error());
      if (!diff) {
        rep_["run"] = r;
        return failure(std::move(diff).error());
      }
      r["bytes_compared"] = r["bytes_compared"].get<uint64_t>() + replay->bytesCompared;
      if (diff->has_value()) {
        r["identical"] = false;
        r["mismatch"] = mismatchJson(**diff);
        r["mismatch"]["baseline"] = baselineName(g->kind());
        rep_["run"] = r;
        return mismatchFailure(**diff, "", baselineLabel(g->kind()));
      }
    }
    // --repeat 0: the comparison is the whole answer (a CI check of a cached plan needs no timed runs, and on a
    // simulator they cost several times the comparison).
    if (args_.repeat == 0) {
      rep_["run"] = r;
      return std::nullopt;
    }
    TimingConfig tc;
    tc.samples = args_.repeat;
    // Every side interleaved (Timing.h): fused, unfused when asked, each graph baseline.
    DeviceBuffers fusedMemory(*fused.device, replay->fused), unfusedMemory(*unfused.device, replay->unfused);
    std::vector<TimedSide> sides;
    std::vector<Baseline> timed;
    Status up = fusedMemory.upload();
    if (up) sides.push_back(planSide(ss, fused, fusedMemory, "fused"));
    if (up && timesUnfused()) {
      up = unfusedMemory.upload();
      sides.push_back(planSide(ss, unfused, unfusedMemory, "unfused"));
      timed.push_back(Baseline::Unfused);
    }
    for (const auto& g : *graphs) {
      GraphSide* gs = g.get();
      sides.push_back(
          TimedSide{baselineLabel(gs->kind()), [gs] { return gs->launch(); }, [gs] { return gs->synchronize(); }});
      timed.push_back(gs->kind());
    }
    auto timing = up ? timeSides(sides, tc) : Expected<std::vector<SideTiming>>(up.error());
    if (!timing) {
      rep_["run"] = r;
      return failure(std::move(timing).error());
    }
    const std::vector<SideTiming>& t = *timing;
    r["warmups"] = tc.warmups;
    r["batch_ms"] = tc.sampleMs;
    r["fused_batch"] = t[0].batch;
    r["fused_seconds"] = t[0].summary.median;
    r["fused_min_seconds"] = t[0].summary.min;
    r["fused_max_seconds"] = t[0].summary.max;
    r["fused_samples"] = t[0].seconds;
    json baselines = json::array();
    for (size_t i = 0; i < timed.size(); ++i) {
      const SideTiming& b = t[i + 1];
      const Summary speedup = pairedSpeedup(t[0].seconds, b.seconds);
      baselines.push_back({{"name", baselineName(timed[i])}, {"batch", b.batch}, {"seconds", b.summary.median},
                           {"min_seconds", b.summary.min}, {"max_seconds", b.summary.max}, {"samples", b.seconds},
                           {"speedup", speedup.median}, {"speedup_min", speedup.min}, {"speedup_max", speedup.max}});
      if (timed[i] != Baseline::Unfused) continue;
      // The unfused figures keep their keys (docs/CLI.md's schema).
      r["unfused_batch"] = b.batch;
      r["unfused_seconds"] = b.summary.median;
      r["unfused_min_seconds"] = b.summary.min;
      r["unfused_max_seconds"] = b.summary.max;
      r["unfused_samples"] = b.seconds;
      r["speedup"] = speedup.median;
      r["speedup_min"] = speedup.min;
      r["speedup_max"] = speedup.max;
    }
    r["baselines"] = baselines;
    rep_["run"] = r;
    return std::nullopt;
  }

  bool timesUnfused() const {
    return std::find(args_.baselines.begin(), args_.baselines.end(), Baseline::Unfused) != args_.baselines.end();
  }

  // The graph baselines this run checks and times (graphBaselines_), each captured on its own copies of the
  // initial buffers (Baselines.h).
  Expected<std::vector<std::unique_ptr<GraphSide>>> captureGraphs(Session& ss, const OpList& list,
                                                                  CompiledPlan& unfused) {
    std::vector<std::unique_ptr<GraphSide>> out;
    if (graphBaselines_.empty()) return out;
    auto initial = BufferSet::create(list);
    if (!initial) return std::move(initial).error().context("while creating the buffers");
    for (Baseline b : graphBaselines_) {
      CompiledPlan& plan = b == Baseline::GraphPdl ? *pdlReference_ : unfused;
      auto g = GraphSide::capture(ss, plan, b, *initial);
      if (!g) return std::move(g).error().context(std::string("the ") + baselineLabel(b) + " baseline");
      out.push_back(std::move(*g));
    }
    return out;
  }

  // The baselines the run compared with fused, for the report's results line.
  json checkedBaselines(const std::vector<std::unique_ptr<GraphSide>>& graphs) const {
    json names = json::array({baselineName(Baseline::Unfused)});
    for (const auto& g : graphs) names.push_back(baselineName(g->kind()));
    return names;
  }

  std::optional<Failure> dump(const BufferSet& buffers) {
    if (Status st = buffers.dump(args_.dump); !st) return failure(Error(st.error()).context("--dump " + args_.dump));
    json files = json::array();
    for (size_t i = 0; i < buffers.size(); ++i) files.push_back(buffers.name(i) + ".bin");
    rep_["outputs"]["dump"] = files;
    rep_["output_dirs"]["dump"] = args_.dump;
    return std::nullopt;
  }

  std::optional<Failure> emitSource(const CompiledPlan& cp) {
    if (Status st = makeOutputDir(args_.emitSource, "--emit-source"); !st) return failure(st.error());
    json files = json::array();
    std::set<std::string> used;
    for (const CompiledStep& step : cp.steps) {
      // File names are sanitized step names; a collision (two names that
      // sanitize alike) gets the step index as a prefix.
      std::string name = step.source.fileName.empty() ? fmt::format("step{}.cpp", step.stepIndex) : step.source.fileName;
      if (!used.insert(name).second) {
        name = fmt::format("{}_{}", step.stepIndex, name);
        used.insert(name);
      }
      const fs::path src = fs::path(args_.emitSource) / name;
      fs::path man = src;
      man.replace_extension(".manifest.json");
      if (Status st = writeFile(src, step.source.text, "--emit-source"); !st) return failure(st.error());
      json mj = json::parse(step.source.manifest, nullptr, false);
      std::string manText = mj.is_discarded() ? step.source.manifest : mj.dump(2);
      // The cache key ties the emitted text to the cache entry (sk-cache inspect KEY).
      if (!mj.is_discarded()) {
        mj["cache_key"] = step.artifact.key;
        manText = mj.dump(2);
      }
      if (Status st = writeFile(man, manText + "\n", "--emit-source"); !st) return failure(st.error());
      files.push_back(src.filename().string());
      files.push_back(man.filename().string());
    }
    rep_["outputs"]["emit_source"] = files;
    rep_["output_dirs"]["emit_source"] = args_.emitSource;
    return std::nullopt;
  }

  std::optional<Failure> emitDot(const CompiledPlan& cp) {
    const fs::path dot = args_.emitDot;
    if (Status st = writeFile(dot, planToDot(cp.plan), "--emit-dot"); !st) return failure(st.error());
    rep_["outputs"]["emit_dot"] = dot.string();
    // A picture too when Graphviz is installed: spawned with argv (never a
    // shell), so odd characters in the path are harmless.
    const fs::path dotExe = findExecutable("dot");
    if (dotExe.empty()) {
      note("Graphviz 'dot' not found on PATH: wrote the DOT file only (apt-get install graphviz for an SVG)");
      return std::nullopt;
    }
    fs::path svg = dot;
    if (dot.extension() == ".dot" || dot.extension() == ".gv") {
      svg.replace_extension(".svg");
    } else {
      svg += ".svg";
    }
    ProcessOptions po;
    po.timeout = std::chrono::seconds(120);
    // -Kdot: Graphviz picks its layout engine from argv[0]'s name, and on
    // Debian the resolved /usr/bin/dot is "libgvc6-config-update".
    auto r = runProcess({dotExe.string(), "-Kdot", "-Tsvg", "-o", svg.string(), dot.string()}, po);
    if (!r || !r->succeeded()) {
      // The DOT file is the product; a failed rendering is only noted.
      note(fmt::format("Graphviz could not render {}: {}", dot.string(),
                       r ? r->describe() + (r->err.empty() ? "" : ": " + r->err) : r.error().message()));
      return std::nullopt;
    }
    rep_["outputs"]["emit_dot_svg"] = svg.string();
    return std::nullopt;
  }

  std::optional<Failure> trace(Session& ss, const OpList& list, CompileRequest req) {
    // A profiled build is a different SuperKernel (timestamps compiled in),
    // so it has its own cache key; objects are shared with the plain build.
    req.options = req.options.empty() ? "profiling=1" : req.options + ":profiling=1";
    progress_.phase("profiled");
    auto prof = ss.compile(list, req);
    progress_.clear();
    if (!prof) return failure(std::move(prof).error().context("profiled build for --trace"));
    if (prof->steps.empty()) {
      // Nothing to launch (an op list without ops): an empty, valid trace.
      if (Status st = writeFile(args_.trace, "{\"traceEvents\":[]}\n", "--trace"); !st) return failure(st.error());
      rep_["outputs"]["trace"] = args_.trace;
      return std::nullopt;
    }
    auto buffers = BufferSet::create(prof->list);
    if (!buffers) return failure(std::move(buffers).error());
    auto text = ss.runProfiled(*prof, *buffers);
    if (!text) return failure(std::move(text).error().context("profiled run for --trace"));
    if (Status st = writeFile(args_.trace, *text, "--trace"); !st) return failure(st.error());
    rep_["outputs"]["trace"] = args_.trace;
    return std::nullopt;
  }

  const Args& args_;
  int tokens_ = 0;  // decode steps to run (common/Tokens.h); 0: the frozen-step --run
  std::shared_ptr<Communicator> comm_;  // collectives' ranks (mpirun, or a list with collectives)
  uint64_t compilesBefore_ = 0;  // the cache's compile counter when the session opened it
  // "notes" and "outputs" are always there, empty or not (docs/CLI.md's schema).
  json rep_ = json{{"notes", json::array()}, {"outputs", json::object()}};
  std::vector<Baseline> graphBaselines_;   // --baselines' graphs this device runs
  json skippedBaselines_ = json::object(); // name -> why
  std::optional<CompiledPlan> pdlReference_;  // the unfused plan built as the PDL variant (graph-pdl)
  Progress progress_;
  // openSession(); declared after what its callbacks use (progress_, the report), so it is destroyed first.
  std::unique_ptr<Session> session_;
  bool notedDiskFull_ = false;
};

int realMain(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Plan, generate, compile and cache a superkernel op list, then print the plan report.\n"
      "Exit codes: 0 ok, 1 fused and unfused results differ, 2 bad input (op list, options, arguments),\n"
      "3 compile or link failure, 4 runtime failure (a wait timed out, a kernel reported an error or never returned).",
      kTool};
  app.set_version_flag("--version", fmt::format("sk-compile {} (superkernel {})", libraryVersion(), libraryVersion()));
  app.add_option("OPLIST", a.opList, "op list (superkernel.oplist JSON, format v1); optional with --calibrate");
  app.add_flag("--calibrate", a.calibrate,
               "measure the sync costs of --target's device (cpu: barrier, counter and flag waits on --workers "
               "workers; cuda: on the GPU's SMs; cuda-sim: the simulator's) for the sync cost model and cache them "
               "in the cache directory, where every later plan reads them; then compile OPLIST if one is given");
  app.add_flag("--run", a.run,
               "execute fused and unfused from identical buffers, compare every buffer bit-for-bit, print both times");
  app.add_option("--tokens", a.tokens,
                 "run T decode steps of a list with runtime values (implies --run): fused and unfused compared after "
                 "every token, tokens per second; --run of such a list alone runs 1")
      ->type_name("T")
      ->check(CLI::Range(1, 1000000));
  CLI::Option* baselines = app.add_option("--baselines", a.baselinesText,
                 "what --run and --tokens compare the fused SuperKernel with, checked bit-for-bit and timed "
                 "interleaved: unfused (one launch per op), graph (those launches as one CUDA graph, replayed), "
                 "graph-pdl (the graph with programmatic dependent launch, sm_90+); comma-separated, or all "
                 "(default: unfused; graphs on cuda and cuda-sim). Without --run or --tokens: build what that run "
                 "would load into the cache (the fused plan, the unfused reference, the Graph + PDL build) and run "
                 "nothing, which needs no GPU")
      ->type_name("LIST");
  app.add_flag("--force-recompile", a.forceRecompile,
               "compile everything again instead of loading it from the cache, replacing the cached entries "
               "(also: SK_FORCE_RECOMPILE=1)");
  app.add_flag("--plan-only", a.planOnly,
               "plan and print the report without compiling or running anything (no compiler needed)");
  app.add_option("--repeat", a.repeat,
                 "timed samples per side for --run (each the median run of a ~20 ms batch) and --tokens (each T tokens); "
                 "median and min-max reported; 0 compares without timing (a correctness check)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--emit-source", a.emitSource, "write each step's generated source and manifest into DIR")
      ->type_name("DIR");
  app.add_option("--emit-dot", a.emitDot, "write the plan as Graphviz DOT to FILE (and an SVG next to it if dot is installed)")
      ->type_name("FILE");
  app.add_option("--trace", a.trace, "write a Chrome/Perfetto trace of a profiled (profiling=1) fused run to FILE")
      ->type_name("FILE");
  app.add_flag("--json", a.json, "print the report as one JSON object on stdout instead of text");
  app.add_option("--dump", a.dump, "after the fused run, write each buffer's bytes to DIR/<name>.bin")
      ->type_name("DIR");
  app.add_option("--options", a.options, "option string merged over the op list's options (later keys win)")
      ->type_name("STR");
  app.add_option("--cache-dir", a.cacheDir, "cache directory (default: $SK_CACHE_DIR, $XDG_CACHE_HOME/superkernel, ~/.cache/superkernel)")
      ->type_name("DIR");
  app.add_option("--remote-cache", a.remoteCache,
                 "shared Redis cache tier, redis://host:port[/db] (default: $SK_REMOTE_CACHE; needs "
                 "SK_REMOTE_CACHE_SECRET_FILE; see docs/CACHE.md)")
      ->type_name("URL");
  app.add_option("--jobs", a.jobs, "parallel compiler processes (default: hardware threads)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--target", a.target, "target override (cpu; ascend: bisheng + CANN, needs the CANN toolkit and an Ascend device to run; ascend-sim: the Ascend C simulator; cuda: nvcc, needs a GPU to run; cuda-sim: the cuda code run by the cuda simulator)")->type_name("T");
  app.add_option("--workers", a.workers, "executor worker threads (default: $SK_NUM_WORKERS, else hardware threads)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--run-timeout", a.runTimeoutMs,
                 "launch watchdog: a launch with no block started for MS milliseconds is reported and ends the run "
                 "with exit 4 (default: $SK_RUN_TIMEOUT_MS, else 120000)")
      ->type_name("MS")
      ->check(CLI::Range(1u, 86400000u));
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help / --version: printed on stdout, exit 0
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s (see %s --help)\n", kTool, e.what(), kTool);
    printSuggestions(kTool, suggestForArgs(app, argc, argv));
    return kExitBadInput;
  }
  if (a.opList.empty() && !a.calibrate) {
    std::fprintf(stderr, "%s: error: OPLIST is required (or --calibrate alone) (see %s --help)\n", kTool, kTool);
    return kExitBadInput;
  }
  if (a.tokens > 0) a.run = true;
  if (baselines->count() > 0) {
    auto b = parseBaselines(a.baselinesText);
    if (!b) {
      std::fprintf(stderr, "%s: error: %s (see %s --help)\n", kTool, b.error().message().c_str(), kTool);
      return kExitBadInput;
    }
    // Without --run: build what that --run would load into the cache and stop (e.g. on a machine without the
    // GPU, for one that has it: scripts/gpu-prepare.sh).
    a.buildOnly = !a.run;
    if (a.buildOnly && (!a.dump.empty() || !a.trace.empty() || a.planOnly)) {
      std::fprintf(stderr, "%s: error: --baselines without --run or --tokens only builds (what that --run would "
                   "load), so it cannot be combined with --dump, --trace or --plan-only (see %s --help)\n", kTool,
                   kTool);
      return kExitBadInput;
    }
    a.baselines = std::move(*b);
  }
  if (a.planOnly && (a.run || !a.trace.empty() || !a.dump.empty() || !a.emitSource.empty())) {
    std::fprintf(stderr, "%s: error: --plan-only compiles nothing, so it cannot be combined with --run, --tokens, "
                 "--trace, --dump or --emit-source (see %s --help)\n", kTool, kTool);
    return kExitBadInput;
  }
  initLogging();
  installToolSignalHandlers(kTool);
  Compiler c(a);
  return c.run();
}

}  // namespace
}  // namespace sk::tools

int main(int argc, char** argv) { return sk::tools::guardedMain("sk-compile", sk::tools::realMain, argc, argv); }
