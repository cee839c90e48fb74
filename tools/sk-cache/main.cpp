// sk-cache: look after the superkernel artifact cache (DESIGN sections 6, 7;
// docs/CACHE.md): stats, ls, inspect KEY, verify, gc --max-size SIZE, clear.
//
// The tool refuses a cache directory that the library would not trust (a
// symlink, someone else's, group/other writable) instead of letting
// Cache::open fall back to a private temporary cache: an administration
// tool that silently inspects an empty temp dir would report nonsense.
// A directory that does not exist yet is an empty cache, not an error (a
// fresh machine), and read-only commands do not create it.
//
// verify = rehash every entry + replay every stored op list (fused vs
// unfused, through the Session, with today's toolchain and templates). An
// entry is STALE when the key recomputed by the replay differs from the
// stored one (the compiler, a template or a kernel source changed), so a CI
// job learns that its cached kernels no longer match what would be built.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <algorithm>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/ToolSupport.h"
#include "superkernel/superkernel.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace sk::tools {
namespace {

constexpr const char* kTool = "sk-cache";

struct Args {
  std::string cacheDir;
  bool json = false;
  std::string key;
  std::string maxSize;
  bool quarantine = false;
  bool noReplay = false;
  bool verbose = false;
};

// An error with its exit code (I/O trouble is 4; bad arguments, unknown
// keys and untrusted directories are 2).
struct Failure {
  Error error;
  int code;
};
Failure failure(Error e) {
  int code = e.kind() == ErrorKind::BadInput ? kExitBadInput : kExitRuntimeFailure;
  return Failure{std::move(e), code};
}

void out(const std::string& s) { std::fputs(s.c_str(), stdout); }
void outJson(const json& j) { out(j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"); }

std::string shortKey(const std::string& key) { return key.substr(0, 16); }

std::string age(int64_t unixSeconds) {
  if (unixSeconds <= 0) return "-";
  const int64_t d = static_cast<int64_t>(std::time(nullptr)) - unixSeconds;
  if (d < 0) return "just now";
  if (d < 120) return fmt::format("{}s ago", d);
  if (d < 2 * 3600) return fmt::format("{}m ago", d / 60);
  if (d < 2 * 86400) return fmt::format("{}h ago", d / 3600);
  return fmt::format("{}d ago", d / 86400);
}

std::string isoTime(int64_t unixSeconds) {
  if (unixSeconds <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unixSeconds);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// What an entry was built for, from its manifest metadata: "sk1 (fused,
// step 0)" for SuperKernels, "kernel add (add_kernel__v...)" for objects.
std::string describeEntry(const json& manifest) {
  if (!manifest.is_object()) return "";
  const json meta = manifest.value("metadata", json::object());
  if (!meta.is_object()) return "";
  if (manifest.value("kind", "") == kKindObject) {
    return fmt::format("kernel {} ({})", meta.value("kernel", "?"), meta.value("symbol", "?"));
  }
  std::string s = meta.value("name", "?");
  if (meta.contains("fuse") && meta["fuse"].is_boolean()) {
    s += meta["fuse"].get<bool>() ? " (fused" : " (unfused";
    if (meta.contains("step") && meta["step"].is_number_unsigned()) s += fmt::format(", step {}", meta["step"].get<uint64_t>());
    s += ")";
  }
  if (meta.value("options", "").find("profiling=1") != std::string::npos) s += " [profiling]";
  return s;
}

class CacheTool {
 public:
  explicit CacheTool(const Args& a) : args_(a) {}

  // Resolve the root and check that it may be used; `exists` tells the
  // caller whether there is anything to look at.
  std::optional<Failure> resolve() {
    if (!args_.cacheDir.empty()) {
      std::error_code ec;
      root_ = fs::absolute(args_.cacheDir, ec).lexically_normal();
      if (ec) return Failure{badInput(fmt::format("--cache-dir {}: {}", args_.cacheDir, ec.message())), kExitBadInput};
    } else {
      auto r = defaultCacheRoot();
      if (!r) return failure(std::move(r).error());
      root_ = *r;
    }
    if (root_.filename().empty()) root_ = root_.parent_path();
    if (std::string p = cacheRootTrustProblem(root_); !p.empty()) {
      return Failure{badInput(fmt::format("cache directory {} is not trusted: {}; sk-cache leaves it alone",
                                          root_.string(), p)),
                     kExitBadInput};
    }
    std::error_code ec;
    exists_ = fs::exists(root_, ec);
    return std::nullopt;
  }

  std::optional<Failure> open(bool readOnly = false) {
    if (cache_) return std::nullopt;
    CacheConfig cfg;
    cfg.root = root_;
    cfg.readOnly = readOnly;
    auto c = Cache::open(cfg);
    if (!c) return failure(std::move(c).error().context("opening the cache"));
    cache_ = std::move(*c);
    if (cache_->usingPrivateFallback()) {
      // Raced with a permission change after resolve(): same refusal.
      return Failure{badInput(fmt::format("cache directory {} is not trusted", root_.string())), kExitBadInput};
    }
    return std::nullopt;
  }

  std::optional<Failure> stats() {
    CacheStats s;
    s.root = root_;
    if (exists_) {
      if (auto f = open()) return f;
      auto st = cache_->stats();
      if (!st) return failure(std::move(st).error());
      s = *st;
    }
    if (args_.json) {
      outJson(s.toJson());
      return std::nullopt;
    }
    std::string t = fmt::format("cache {}{}\n", s.root.string(), exists_ ? "" : " (does not exist yet)");
    auto row = [&](std::string_view k, const std::string& v) { t += fmt::format("  {:<18}{}\n", k, v); };
    row("entries", fmt::format("{} ({})", s.entries, formatSize(s.bytes)));
    row("hits", fmt::format("{} (memory {}, disk {})", s.hits, s.memoryHits, s.diskHits));
    row("misses", std::to_string(s.misses));
    const uint64_t lookups = s.hits + s.misses;
    row("hit rate",
        lookups ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(s.hits) / static_cast<double>(lookups)) : "-");
    row("compiles", std::to_string(s.compiles));
    row("compile failures", std::to_string(s.compileFailures));
    row("corrupt", std::to_string(s.corrupt));
    row("untrusted", std::to_string(s.untrusted));
    row("evicted", std::to_string(s.evicted));
    out(t);
    return std::nullopt;
  }

  std::optional<Failure> ls() {
    std::vector<CacheEntryInfo> entries;
    if (exists_) {
      if (auto f = open()) return f;
      auto l = cache_->list();
      if (!l) return failure(std::move(l).error());
      entries = std::move(*l);
    }
    json arr = json::array();
    Table tab({"key", "kind", "size", "last use", "created", "what"}, "llrrll");
    for (const CacheEntryInfo& e : entries) {
      auto m = cache_->inspect(e.key);
      const json manifest = m ? *m : json();
      const std::string what = describeEntry(manifest);
      arr.push_back(json{{"key", e.key},
                         {"kind", e.kind},
                         {"artifact", e.artifactName},
                         {"bytes", e.bytes},
                         {"created", e.created},
                         {"last_use", e.lastUse},
                         {"what", what}});
      tab.add({shortKey(e.key), e.kind, formatSize(e.bytes), age(e.lastUse), isoTime(e.created), what});
    }
    if (args_.json) {
      outJson(json{{"root", root_.string()}, {"entries", arr}});
    } else if (entries.empty()) {
      out(fmt::format("cache {}: no entries\n", root_.string()));
    } else {
      uint64_t bytes = 0;
      for (const auto& e : entries) bytes += e.bytes;
      out(fmt::format("cache {}: {} entries, {} (most recently used first)\n", root_.string(), entries.size(),
                      formatSize(bytes)) +
          tab.str());
    }
    return std::nullopt;
  }

  std::optional<Failure> inspect() {
    if (!exists_) {
      return Failure{badInput(fmt::format("no cache entry {}: cache directory {} does not exist", args_.key,
                                          root_.string())),
                     kExitBadInput};
    }
    if (auto f = open()) return f;
    auto m = cache_->inspect(args_.key);
    if (!m) return failure(std::move(m).error());
    const json& j = *m;
    if (args_.json) {
      outJson(j);
      return std::nullopt;
    }
    std::string s;
    auto field = [&](const char* k) -> std::string {
      if (!j.contains(k)) return "-";
      return j[k].is_string() ? j[k].get<std::string>() : j[k].dump();
    };
    s += fmt::format("key        {}\n", field("key"));
    s += fmt::format("kind       {}\n", field("kind"));
    s += fmt::format("what       {}\n", describeEntry(j));
    s += fmt::format("artifact   {} ({} bytes)\n", field("artifact"), field("size"));
    s += fmt::format("sha256     {}\n", field("sha256"));
    s += fmt::format("created    {}\n", j.contains("created") && j["created"].is_number_integer()
                                            ? isoTime(j["created"].get<int64_t>())
                                            : field("created"));
    s += fmt::format("library    {} (key schema {})\n", field("library_version"), field("schema"));
    s += fmt::format("toolchain  {}\n", field("toolchain"));
    if (j.contains("command") && j["command"].is_array()) {
      std::vector<std::string> argv;
      for (const auto& w : j["command"])
        if (w.is_string()) argv.push_back(w.get<std::string>());
      s += fmt::format("command    {}\n", formatCommand(argv));
    }
    const json meta = j.value("metadata", json::object());
    if (meta.is_object() && !meta.empty()) {
      s += "metadata\n";
      for (auto& [k, v] : meta.items()) {
        if (k == "op_list" && v.is_string()) {
          // The stored op list can be large: summarize (inspect --json has it all).
          auto list = json::parse(v.get<std::string>(), nullptr, false);
          size_t ops = list.is_object() && list.contains("ops") ? list["ops"].size() : 0;
          s += fmt::format("  op_list      {} ops, {} bytes (replayed by sk-cache verify; full text with --json)\n", ops,
                           v.get<std::string>().size());
        } else {
          std::string text = v.is_string() ? v.get<std::string>() : v.dump();
          if (text.size() > 200) text = text.substr(0, 200) + "...";
          s += fmt::format("  {:<12} {}\n", k, text);
        }
      }
    }
    out(s);
    return std::nullopt;
  }

  std::optional<Failure> gc() {
    auto max = parseSize(args_.maxSize);
    if (!max) return Failure{Error(std::move(max).error()).context("--max-size"), kExitBadInput};
    GcResult r;
    if (exists_) {
      if (auto f = open()) return f;
      auto g = cache_->gc(*max);
      if (!g) return failure(std::move(g).error());
      r = *g;
    }
    report(r, "gc", fmt::format("limit {}", formatSize(*max)));
    return std::nullopt;
  }

  std::optional<Failure> clear() {
    GcResult r;
    if (exists_) {
      if (auto f = open()) return f;
      auto g = cache_->clear();
      if (!g) return failure(std::move(g).error());
      r = *g;
    }
    report(r, "clear", "");
    return std::nullopt;
  }

  void report(const GcResult& r, const char* what, const std::string& extra) {
    if (args_.json) {
      outJson(json{{"root", root_.string()},
                   {"removed_entries", r.removedEntries},
                   {"removed_bytes", r.removedBytes},
                   {"skipped_in_use", r.skippedHeld},
                   {"remaining_entries", r.remainingEntries},
                   {"remaining_bytes", r.remainingBytes}});
      return;
    }
    out(fmt::format("{} {}{}: removed {} entries ({}), {} remain ({}){}\n", what, root_.string(),
                    extra.empty() ? "" : " (" + extra + ")", r.removedEntries, formatSize(r.removedBytes),
                    r.remainingEntries, formatSize(r.remainingBytes),
                    r.skippedHeld ? fmt::format(", {} skipped: in use by a running process", r.skippedHeld) : ""));
  }

  // ---- verify ---------------------------------------------------------------

  struct Item {
    std::string key, kind, what;
    std::string status = "ok";  // ok | corrupt | stale | mismatch | replay_failed | unverified (not a problem)
    std::string problem;
  };

  // Entries built from one op list with one option set and worker count:
  // one replay (fused + unfused compile, one run each) checks them all.
  struct Group {
    std::string opList, options;
    uint32_t workers = 0;
    std::string baseDir;
    std::vector<size_t> items;      // into items_
    std::vector<std::pair<bool, uint64_t>> steps;  // (fuse, step) per item
  };

  std::optional<Failure> verify() {
    if (exists_) {
      // Read-only unless asked to quarantine: verifying must not change what it verifies.
      if (auto f = open(!args_.quarantine)) return f;
      auto rep = cache_->verifyIntegrity(args_.quarantine);
      if (!rep) return failure(std::move(rep).error());
      std::map<std::string, Group> groups;
      for (const IntegrityItem& it : rep->entries) {
        Item item;
        item.key = it.info.key;
        item.kind = it.info.kind;
        item.what = describeEntry(it.manifest);
        if (!it.ok) {
          item.status = "corrupt";
          item.problem = it.problem;
        }
        const size_t idx = items_.size();
        items_.push_back(std::move(item));
        if (args_.noReplay || it.info.kind != kKindSuperKernel || !it.manifest.is_object()) continue;
        const json meta = it.manifest.value("metadata", json::object());
        if (!meta.is_object() || !meta.contains("op_list") || !meta["op_list"].is_string()) continue;
        Group g;
        g.opList = meta["op_list"].get<std::string>();
        g.options = meta.value("options", "");
        g.workers = meta.value("workers", 0u);
        g.baseDir = meta.value("base_dir", "");
        const std::string gk = fmt::format("{}\n{}\n{}\n{}", g.workers, g.options, g.baseDir, g.opList);
        auto [pos, inserted] = groups.emplace(gk, std::move(g));
        pos->second.items.push_back(idx);
        pos->second.steps.emplace_back(meta.value("fuse", true), meta.value("step", uint64_t{0}));
      }
      for (auto& [gk, g] : groups) replay(g);
    }
    return printVerify();
  }

  // Replay one op list: recompile fused and unfused (hits when nothing
  // changed), compare each stored key with the recomputed one, run both and
  // compare every buffer.
  void replay(Group& g) {
    auto markAll = [&](const std::string& status, const std::string& problem) {
      for (size_t i : g.items) {
        if (items_[i].status != "ok") continue;  // keep the first finding (corrupt)
        items_[i].status = status;
        items_[i].problem = problem;
      }
    };
    json rj;
    rj["entries"] = g.items.size();
    rj["workers"] = g.workers;
    rj["options"] = g.options;
    // Entries made through the C++ API from an op list with relative kernel
    // paths (and no recorded base directory) cannot be rebuilt from their
    // stored text: they are rehashed only, not reported stale.
    if (g.baseDir.empty()) {
      const json raw = json::parse(g.opList, nullptr, false);
      if (raw.is_object() && raw.contains("kernels") && raw["kernels"].is_object()) {
        for (auto& [name, k] : raw["kernels"].items()) {
          if (!k.is_object() || !k.contains("source") || !k["source"].is_string()) continue;
          const std::string src = k["source"].get<std::string>();
          if (fs::path(src).is_relative()) {
            rj["result"] = "skipped";
            rj["reason"] = fmt::format("kernel {} has a relative source path ({}); its op list cannot be replayed",
                                       name, src);
            replays_.push_back(rj);
            return;
          }
        }
      }
    }
    // Init files only give the replayed run its input values; keys do not
    // depend on them. One that is gone (moved, a temp file) still lets the
    // keys be checked, but the run cannot be: say so instead of calling the
    // entries stale.
    const fs::path base = g.baseDir.empty() ? fs::path("/") : fs::path(g.baseDir);
    std::string notRun;
    std::string opListText = g.opList;
    {
      json raw = json::parse(g.opList, nullptr, false);
      if (raw.is_object() && raw.contains("buffers") && raw["buffers"].is_object()) {
        bool changed = false;
        for (auto& [name, b] : raw["buffers"].items()) {
          if (!b.is_object() || !b.contains("init") || !b["init"].is_object() || !b["init"].contains("file") ||
              !b["init"]["file"].is_string())
            continue;
          fs::path f = b["init"]["file"].get<std::string>();
          if (f.is_relative()) f = base / f;
          std::error_code ec;
          if (fs::is_regular_file(f, ec)) continue;
          notRun += fmt::format("{}buffer {}: init file {} is gone", notRun.empty() ? "" : "; ", name, f.string());
          b["init"] = "zeros";
          changed = true;
        }
        if (changed) opListText = raw.dump();
      }
    }
    auto list = parseOpList(opListText, "stored op list", base);
    if (!list) {
      // It loaded when the entry was built: a kernel source was removed or
      // the format moved on. Either way the entry cannot be reproduced.
      markAll("stale", "the stored op list no longer loads: " + list.error().message());
      rj["result"] = "stale";
      replays_.push_back(rj);
      return;
    }
    rj["ops"] = std::count_if(list->ops.begin(), list->ops.end(), [](const Op& o) { return o.kind == Op::Kind::Launch; });
    Session* ss = session(g.workers);
    if (!ss) {
      markAll("replay_failed", sessionError_);
      rj["result"] = "replay_failed";
      replays_.push_back(rj);
      return;
    }
    CompileRequest fr;
    fr.options = g.options;
    auto fused = ss->compile(*list, fr);
    CompileRequest ur = fr;
    ur.fuse = false;
    auto unfused = fused ? ss->compile(*list, ur) : Expected<CompiledPlan>(fused.error());
    if (!fused || !unfused) {
      // A list that no longer plans or compiles (a kernel source removed or
      // changed so it fails to build) cannot reproduce its entries: stale.
      const Error& e = fused ? unfused.error() : fused.error();
      markAll("stale", "the stored op list no longer compiles: " + e.message());
      rj["result"] = "stale";
      replays_.push_back(rj);
      return;
    }
    for (size_t k = 0; k < g.items.size(); ++k) {
      const auto [fuse, step] = g.steps[k];
      const CompiledPlan& cp = fuse ? *fused : *unfused;
      Item& item = items_[g.items[k]];
      std::string now = step < cp.steps.size() ? cp.steps[step].artifact.key : "";
      if (now != item.key && item.status == "ok") {
        item.status = "stale";
        item.problem = now.empty() ? fmt::format("the replayed plan has no step {}", step)
                                   : fmt::format("rebuilt today it would be {}: the compiler, a template, a "
                                                 "runtime header or a kernel source changed",
                                                 shortKey(now));
      }
    }
    if (!notRun.empty()) {
      for (size_t i : g.items) {
        if (items_[i].status != "ok") continue;
        items_[i].status = "unverified";
        items_[i].problem = "key checked, not run: " + notRun;
      }
      rj["result"] = "keys_only";
      rj["reason"] = "not run: " + notRun;
      replays_.push_back(rj);
      return;
    }
    auto r = runAndCompare(*ss, *fused, *unfused);
    if (!r) {
      markAll("replay_failed", "replay run failed: " + r.error().message());
      rj["result"] = "replay_failed";
    } else if (r->mismatch) {
      markAll("mismatch", "fused and unfused results differ: " + r->mismatch->message());
      rj["result"] = "mismatch";
      rj["mismatch"] = r->mismatch->message();
    } else {
      rj["result"] = "identical";
      rj["launches_fused"] = fused->steps.size();
      rj["launches_unfused"] = unfused->steps.size();
    }
    replays_.push_back(rj);
  }

  Session* session(uint32_t workers) {
    auto it = sessions_.find(workers);
    if (it != sessions_.end()) return it->second.get();
    SessionOptions so;
    so.cacheDir = root_;
    so.workers = workers;  // the plan's core counts depend on it: same workers, same keys
    so.readOnlyCache = true;  // hits run the cached artifacts; what the replay builds stays in memory
    auto s = Session::create(so);
    if (!s) {
      sessionError_ = "cannot create a session to replay: " + s.error().message();
      return nullptr;
    }
    Session* raw = s->get();
    sessions_.emplace(workers, std::move(*s));
    return raw;
  }

  std::optional<Failure> printVerify() {
    std::map<std::string, size_t> counts;
    size_t problems = 0;
    for (const Item& i : items_) {
      ++counts[i.status];
      problems += i.status != "ok" && i.status != "unverified";
    }
    if (args_.json) {
      json items = json::array();
      for (const Item& i : items_)
        items.push_back(json{{"key", i.key}, {"kind", i.kind}, {"what", i.what}, {"status", i.status}, {"problem", i.problem}});
      outJson(json{{"root", root_.string()},
                   {"entries", items_.size()},
                   {"problems", problems},
                   {"counts", counts},
                   {"replays", replays_},
                   {"items", items}});
    } else {
      std::string s = fmt::format("verify {}: {} entries rehashed, {} op lists replayed\n", root_.string(),
                                  items_.size(), replays_.size());
      Table tab({"status", "key", "kind", "what", "problem"}, "lllll");
      for (const Item& i : items_) {
        if (i.status == "ok" && !args_.verbose) continue;
        std::string st = i.status;
        for (auto& c : st) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        tab.add({i.status == "ok" ? "ok" : st, shortKey(i.key), i.kind, i.what, i.problem});
      }
      if (tab.rows()) s += tab.str();
      for (const json& r : replays_) {
        s += fmt::format("  replay: {} launches, {} workers, {} entries: {}{}{}\n", r.value("ops", size_t{0}),
                         r.value("workers", 0u), r.value("entries", size_t{0}), r.value("result", ""),
                         r.contains("reason") ? " (" + r.value("reason", "") + ")" : "",
                         r.contains("launches_fused")
                             ? fmt::format(" ({} fused vs {} unfused launches)", r["launches_fused"].get<size_t>(),
                                           r["launches_unfused"].get<size_t>())
                             : "");
      }
      s += fmt::format("verify: {} ({} ok, {} corrupt, {} stale, {} mismatch, {} replay failed){}\n",
                       problems ? fmt::format("{} problem{}", problems, problems == 1 ? "" : "s") : "all good",
                       counts["ok"], counts["corrupt"], counts["stale"], counts["mismatch"], counts["replay_failed"],
                       counts["unverified"] ? fmt::format("; {} entr{} not fully verified (keys checked, not run)",
                                                          counts["unverified"], counts["unverified"] == 1 ? "y" : "ies")
                                            : "");
      out(s);
    }
    if (problems) {
      return Failure{Error(ErrorKind::Mismatch,
                           fmt::format("{} of {} cache entries failed verification (corrupt: rebuilt on next use or "
                                       "removed by --quarantine; stale: run sk-cache gc/clear and rebuild)",
                                       problems, items_.size())),
                     kExitMismatch};
    }
    return std::nullopt;
  }

 private:
  const Args& args_;
  fs::path root_;
  bool exists_ = false;
  std::shared_ptr<Cache> cache_;
  std::vector<Item> items_;
  json replays_ = json::array();
  std::map<uint32_t, std::unique_ptr<Session>> sessions_;
  std::string sessionError_;
};

int realMain(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Inspect and maintain the superkernel artifact cache.\n"
      "Exit codes: 0 ok, 1 verify found a problem, 2 bad input (arguments, unknown key, untrusted directory),\n"
      "4 I/O failure.",
      kTool};
  app.set_version_flag("--version", fmt::format("sk-cache {}", libraryVersion()));
  app.require_subcommand(1);
  // Global options may come before or after the subcommand (fallthrough).
  app.fallthrough();
  app.add_option("--cache-dir", a.cacheDir,
                 "cache directory (default: $SK_CACHE_DIR, $XDG_CACHE_HOME/superkernel, ~/.cache/superkernel)")
      ->type_name("DIR");
  app.add_flag("--json", a.json, "machine-readable output (one JSON object on stdout)");

  auto* stats = app.add_subcommand("stats", "counters (hits, misses, compiles, ...) and size");
  auto* ls = app.add_subcommand("ls", "list entries, most recently used first");
  auto* inspect = app.add_subcommand("inspect", "show one entry's manifest");
  inspect->add_option("KEY", a.key, "cache key or a unique prefix of at least 4 hex digits")->required();
  auto* verify = app.add_subcommand("verify", "rehash every entry and replay every stored op list (fused vs unfused)");
  verify->add_flag("--quarantine", a.quarantine, "move corrupt entries aside (they are rebuilt on next use)");
  verify->add_flag("--no-replay", a.noReplay, "only rehash; do not recompile or run stored op lists");
  verify->add_flag("-v,--verbose", a.verbose, "list every entry, not only the ones with a problem");
  auto* gc = app.add_subcommand("gc", "evict least recently used entries until the cache fits SIZE");
  gc->add_option("--max-size", a.maxSize, "size limit, e.g. 500M, 2G, 1.5GiB, 0 (empty the cache)")
      ->type_name("SIZE")
      ->required();
  auto* clear = app.add_subcommand("clear", "remove every entry not in use by a running process");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s (see %s --help)\n", kTool, e.what(), kTool);
    return kExitBadInput;
  }
  initLogging();
  CacheTool tool(a);
  std::optional<Failure> f = tool.resolve();
  if (!f) {
    if (stats->parsed()) f = tool.stats();
    else if (ls->parsed()) f = tool.ls();
    else if (inspect->parsed()) f = tool.inspect();
    else if (verify->parsed()) f = tool.verify();
    else if (gc->parsed()) f = tool.gc();
    else if (clear->parsed()) f = tool.clear();
  }
  std::fflush(stdout);
  if (f) {
    printError(kTool, f->error);
    return f->code;
  }
  return kExitOk;
}

}  // namespace
}  // namespace sk::tools

int main(int argc, char** argv) { return sk::tools::guardedMain("sk-cache", sk::tools::realMain, argc, argv); }
