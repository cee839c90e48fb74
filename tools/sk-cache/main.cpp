// sk-cache: look after the superkernel artifact cache (DESIGN sections 6, 7;
// docs/CACHE.md): stats, zero-stats, ls, inspect KEY, explain KEY [OTHER],
// verify, gc --max-size SIZE, clear, and remote ping|ls|verify for the shared
// Redis tier.
//
// The tool refuses a cache directory that the library would not trust (a
// symlink, someone else's, group/other writable) instead of letting
// Cache::open fall back to a private temporary cache: an administration
// tool that silently inspects an empty temp dir would report nonsense.
// A directory that does not exist yet is an empty cache, not an error (a
// fresh machine), and read-only commands do not create it.
//
// verify = rehash every entry + replay every stored op list (fused vs
// unfused, through the Session, with today's templates and the compiler the
// entry was built with, metadata.compiler). An entry is STALE when the key
// recomputed by the replay differs from the stored one (the compiler at that
// path, a template or a kernel source changed), so a CI job learns that its
// cached kernels no longer match what would be built; one whose compiler is
// not on this machine is UNVERIFIED, not stale (it is valid where it is).
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <algorithm>
#include <ctime>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unistd.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/Suggest.h"
#include "common/Stalls.h"
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
  std::string otherKey;
  std::string maxSize;
  bool quarantine = false;
  bool noReplay = false;
  bool verbose = false;
  std::string remote;  // --remote URL (default $SK_REMOTE_CACHE)
  bool deleteBad = false;  // remote verify --delete-bad
  unsigned replayTimeoutS = 1800;  // per replayed op list (its child process)
  std::string replayGroup;         // internal: this process is a replay child (verify --replay-group FILE)
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

// The library hands manifests over as JSON text (Cache.h, "JSON in this
// API"); parsed here. null when empty (unreadable) or not JSON.
json parseManifest(std::string_view text) {
  if (text.empty()) return json();
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json() : j;
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

// The key inputs that differ between two entries, by tag in order
// (repeated tags, e.g. one "object" per linked object, pair up by position).
struct InputDiff {
  std::string tag, mine, theirs;
};
std::vector<InputDiff> diffInputs(const std::vector<std::pair<std::string, std::string>>& a,
                                  const std::vector<std::pair<std::string, std::string>>& b) {
  std::map<std::string, std::vector<std::string>> ma, mb;
  std::vector<std::string> order;
  for (const auto& [t, v] : a) {
    if (!ma.count(t) && !mb.count(t)) order.push_back(t);
    ma[t].push_back(v);
  }
  for (const auto& [t, v] : b) {
    if (!ma.count(t) && !mb.count(t)) order.push_back(t);
    mb[t].push_back(v);
  }
  std::vector<InputDiff> out;
  for (const std::string& t : order) {
    const auto& va = ma[t];
    const auto& vb = mb[t];
    for (size_t i = 0; i < std::max(va.size(), vb.size()); ++i) {
      std::string x = i < va.size() ? va[i] : "(absent)";
      std::string y = i < vb.size() ? vb[i] : "(absent)";
      if (x != y) out.push_back({va.size() > 1 || vb.size() > 1 ? fmt::format("{}[{}]", t, i) : t, x, y});
    }
  }
  return out;
}

// An option string ("key=value:key=value", Options::canonical()'s form) as
// (key, value) pairs, split on unescaped ':' (a compile-options item may
// hold "\:").
std::vector<std::pair<std::string, std::string>> splitOptions(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '\\') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] != ':') continue;
    const std::string item = text.substr(start, i - start);
    start = i + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    out.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
  }
  return out;
}

// The options two SuperKernel entries were built with (metadata.options),
// per option that differs. A Session keys its SuperKernels on the generated
// source and only the build options (DriverConfig::sourceEncodesPlanOptions):
// a planning option such as early-start changes the key through the source,
// so this is what says which option made the source differ.
std::vector<InputDiff> diffBuildOptions(const json& a, const json& b) {
  auto optionsOf = [](const json& manifest) -> std::optional<std::string> {
    const json meta = manifest.is_object() ? manifest.value("metadata", json::object()) : json();
    if (!meta.is_object() || !meta.contains("options") || !meta["options"].is_string()) return std::nullopt;
    return meta["options"].get<std::string>();
  };
  const auto oa = optionsOf(a), ob = optionsOf(b);
  if (!oa || !ob || *oa == *ob) return {};
  return diffInputs(splitOptions(*oa), splitOptions(*ob));
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
    auto cap = defaultCacheMaxBytes();
    if (!cap) return Failure{Error(cap.error()), kExitBadInput};
    s.maxBytes = *cap;
    if (exists_) {
      if (auto f = open()) return f;
      auto st = cache_->stats();
      if (!st) return failure(std::move(st).error());
      s = *st;
    }
    if (args_.json) {
      outJson(json::parse(s.toJson()));
      return std::nullopt;
    }
    std::string t = fmt::format("cache {}{}\n", s.root.string(), exists_ ? "" : " (does not exist yet)");
    auto row = [&](std::string_view k, const std::string& v) { t += fmt::format("  {:<18}{}\n", k, v); };
    row("entries", fmt::format("{} ({})", s.entries, formatSize(s.bytes)));
    // Name the variable only when it set the cap: a default cap says it is the default.
    const char* capEnv = std::getenv("SK_CACHE_MAX_SIZE");
    const bool capFromEnv = capEnv && *capEnv;
    row("size cap", s.maxBytes ? fmt::format("{} ({:.1f}% used; {})", formatSize(s.maxBytes),
                                             100.0 * static_cast<double>(s.bytes) / static_cast<double>(s.maxBytes),
                                             capFromEnv ? "SK_CACHE_MAX_SIZE" : "the default; SK_CACHE_MAX_SIZE sets it")
                               : std::string("unlimited (SK_CACHE_MAX_SIZE=0)"));
    row("hits", fmt::format("{} (memory {}, disk {}, remote {})", s.hits, s.memoryHits, s.diskHits, s.remoteHits));
    row("misses", std::to_string(s.misses));
    const uint64_t lookups = s.hits + s.misses;
    row("hit rate",
        lookups ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(s.hits) / static_cast<double>(lookups)) : "-");
    row("compiles", std::to_string(s.compiles));
    row("compile failures", std::to_string(s.compileFailures));
    row("corrupt", std::to_string(s.corrupt));
    row("untrusted", std::to_string(s.untrusted));
    row("evicted", std::to_string(s.evicted));
    row("remote", fmt::format("hits {}, misses {}, uploads {}, errors {}, rejected {}", s.remoteHits, s.remoteMisses,
                              s.remoteUploads, s.remoteErrors, s.remoteRejected));
    out(t);
    return std::nullopt;
  }

  // Counters back to zero; entries stay (ccache -z).
  std::optional<Failure> zeroStats() {
    if (!exists_) {
      if (!args_.json) out(fmt::format("cache {} does not exist yet: nothing to zero\n", root_.string()));
      else outJson(json{{"zeroed", false}, {"root", root_.string()}});
      return std::nullopt;
    }
    if (auto f = open()) return f;
    if (Status st = cache_->zeroStats(); !st) return failure(st.error());
    if (args_.json) outJson(json{{"zeroed", true}, {"root", root_.string()}});
    else out(fmt::format("cache {}: statistics zeroed\n", root_.string()));
    return std::nullopt;
  }

  // Why a lookup missed: the entry's key inputs (recorded at build time)
  // against another entry's, named or else the closest one built for the same
  // thing (same kind and description), so "what changed" reads directly.
  std::optional<Failure> explain() {
    if (!exists_) return Failure{badInput(fmt::format("cache {} does not exist", root_.string())), kExitBadInput};
    if (auto f = open()) return f;
    auto m = inspectManifest(args_.key);
    if (!m) return failure(std::move(m).error());
    const json& a = *m;
    auto inputsOf = [](const json& manifest) {
      std::vector<std::pair<std::string, std::string>> v;
      if (!manifest.contains("key_inputs") || !manifest["key_inputs"].is_array()) return v;
      for (const auto& p : manifest["key_inputs"])
        if (p.is_array() && p.size() == 2 && p[0].is_string() && p[1].is_string())
          v.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
      return v;
    };
    const auto mine = inputsOf(a);
    const std::string key = a.value("key", std::string());
    if (mine.empty())
      return Failure{badInput(fmt::format("entry {} has no recorded key inputs (built by an older superkernel); "
                                          "nothing to explain",
                                          shortKey(key))),
                     kExitBadInput};
    // The entry to compare with.
    json b;
    if (!args_.otherKey.empty()) {
      auto o = inspectManifest(args_.otherKey);
      if (!o) return failure(std::move(o).error());
      b = *o;
    } else {
      auto l = cache_->list();
      if (!l) return failure(std::move(l).error());
      size_t best = SIZE_MAX;
      for (const CacheEntryInfo& e : *l) {
        if (e.key == key || e.kind != a.value("kind", std::string())) continue;
        auto o = inspectManifest(e.key);
        if (!o || describeEntry(*o) != describeEntry(a)) continue;
        const size_t d = diffInputs(mine, inputsOf(*o)).size();
        if (!inputsOf(*o).empty() && d < best) best = d, b = *o;
      }
    }
    json j{{"key", key}, {"what", describeEntry(a)}, {"inputs", a["key_inputs"]}};
    std::string t = fmt::format("{} {}: {}\n", a.value("kind", std::string()), shortKey(key), describeEntry(a));
    if (b.is_null()) {
      t += "  no other entry was built for the same thing: a first build, not a changed input\n";
      t += "  its key inputs:\n";
      for (const auto& [tag, value] : mine) t += fmt::format("    {:<22}{}\n", tag, value);
      const json meta = a.value("metadata", json::object());
      if (meta.is_object() && meta.contains("options") && meta["options"].is_string())
        t += fmt::format("  built with options {}\n", meta["options"].get<std::string>());
      j["compared_with"] = nullptr;
    } else {
      const auto theirs = inputsOf(b);
      const std::string other = b.value("key", std::string());
      const auto diffs = diffInputs(mine, theirs);
      t += fmt::format("  compared with {} ({}, created {}): {} of {} key inputs differ\n", shortKey(other),
                       describeEntry(b), isoTime(b.value("created", int64_t{0})), diffs.size(), mine.size());
      json jd = json::array();
      for (const auto& d : diffs) {
        t += fmt::format("    {:<22}{}\n    {:<22}{}\n", d.tag, "this:  " + d.mine, "", "other: " + d.theirs);
        jd.push_back(json{{"input", d.tag}, {"this", d.mine}, {"other", d.theirs}});
      }
      j["compared_with"] = other;
      j["differences"] = jd;
      const auto optionDiffs = diffBuildOptions(a, b);
      json jo = json::array();
      if (!optionDiffs.empty())
        t += "  built with other options (they reach the key through the generated source):\n";
      for (const auto& d : optionDiffs) {
        t += fmt::format("    {:<22}{}\n    {:<22}{}\n", d.tag, "this:  " + d.mine, "", "other: " + d.theirs);
        jo.push_back(json{{"option", d.tag}, {"this", d.mine}, {"other", d.theirs}});
      }
      j["option_differences"] = jo;
    }
    if (args_.json) outJson(j);
    else out(t);
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
      auto m = inspectManifest(e.key);
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
    auto m = inspectManifest(args_.key);
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
    // SK_CACHE_MAX_SIZE=0 means "no cap"; the same 0 here emptying the cache
    // would turn a copied setting into data loss, and reading it as "no cap"
    // would make gc a silent no-op. Refused: emptying has its own command.
    if (*max == 0)
      return Failure{badInput(fmt::format("--max-size {}: a limit of 0 is refused (SK_CACHE_MAX_SIZE=0 means "
                                          "unlimited); run sk-cache clear to remove every entry, or give a "
                                          "size such as 100M",
                                          args_.maxSize)),
                     kExitBadInput};
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
    std::string compiler;  // the cpu compiler the entries were built with (metadata.compiler); empty: today's
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
        const json manifest = parseManifest(it.manifest);
        item.what = describeEntry(manifest);
        if (!it.ok) {
          item.status = "corrupt";
          item.problem = it.problem;
        }
        const size_t idx = items_.size();
        items_.push_back(std::move(item));
        if (args_.noReplay || it.info.kind != kKindSuperKernel || !manifest.is_object()) continue;
        const json meta = manifest.value("metadata", json::object());
        if (!meta.is_object() || !meta.contains("op_list") || !meta["op_list"].is_string()) continue;
        Group g;
        g.opList = meta["op_list"].get<std::string>();
        g.options = meta.value("options", "");
        g.workers = meta.value("workers", 0u);
        g.baseDir = meta.value("base_dir", "");
        // SessionOptions::compiler is the host target's; other targets use their own variable. An entry
        // without a target predates the field and was the host's.
        const std::string host = hostTargetName();
        if (meta.value("target", host) == host) g.compiler = meta.value("compiler", "");
        const std::string gk =
            fmt::format("{}\n{}\n{}\n{}\n{}", g.workers, g.compiler, g.options, g.baseDir, g.opList);
        auto [pos, inserted] = groups.emplace(gk, std::move(g));
        pos->second.items.push_back(idx);
        pos->second.steps.emplace_back(meta.value("fuse", true), meta.value("step", uint64_t{0}));
      }
      for (auto& [gk, g] : groups) replayInChild(g);
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
    if (!g.compiler.empty()) rj["compiler"] = g.compiler;
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
    // Entries are judged against the compiler they were built with (an entry
    // built with SK_CXX=g++ is valid for every g++ build, whatever SK_CXX says
    // now). When that compiler is not here, their keys cannot be recomputed:
    // not verified, which is no reason to delete them.
    if (!g.compiler.empty()) {
      ToolchainRequest tr;
      tr.compiler = g.compiler;
      tr.launcher = std::vector<std::string>{};  // the launcher is not part of keys
      if (auto tc = findToolchain(tr); !tc) {
        // The error's own hint (set SK_CXX) does not apply: the entry names its compiler.
        const std::string m = tc.error().message();
        const std::string why = fmt::format("built with {}, which cannot be used here ({}): key not checked, not "
                                            "run; not stale (verify on a machine that has that compiler)",
                                            g.compiler, m.substr(0, m.find(';')));
        for (size_t i : g.items) {
          if (items_[i].status != "ok") continue;
          items_[i].status = "unverified";
          items_[i].problem = why;
        }
        rj["result"] = "other_toolchain";
        rj["reason"] = why;
        replays_.push_back(rj);
        return;
      }
    }
    Session* ss = session(g.workers, g.compiler);
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

  // ---- replay in a child process -------------------------------------------
  //
  // Each op list is replayed by a child process (this executable, `verify
  // --replay-group FILE`) under a deadline: a kernel that never returns
  // cannot be stopped inside a process (the child's launch watchdog,
  // SK_RUN_TIMEOUT_MS, reports it and exits 4), and a hung compiler or a
  // crash must not take the rest of the verify down. The child runs replay()
  // unchanged and prints its findings as JSON on stdout.

  static json groupToJson(const Group& g, const std::vector<Item>& items) {
    json j{{"op_list", g.opList},   {"options", g.options},   {"workers", g.workers},
           {"base_dir", g.baseDir}, {"compiler", g.compiler}};
    json its = json::array();
    for (size_t k = 0; k < g.items.size(); ++k) {
      const Item& it = items[g.items[k]];
      its.push_back(json{{"key", it.key},
                         {"kind", it.kind},
                         {"what", it.what},
                         {"status", it.status},
                         {"problem", it.problem},
                         {"fuse", g.steps[k].first},
                         {"step", g.steps[k].second}});
    }
    j["items"] = std::move(its);
    return j;
  }

  void replayInChild(Group& g) {
    auto markAll = [&](const std::string& problem) {
      for (size_t i : g.items) {
        if (items_[i].status != "ok") continue;
        items_[i].status = "replay_failed";
        items_[i].problem = problem;
      }
    };
    json rj{{"entries", g.items.size()}, {"workers", g.workers}, {"options", g.options}};
    if (!g.compiler.empty()) rj["compiler"] = g.compiler;
    auto fail = [&](const std::string& problem) {
      markAll(problem);
      rj["result"] = "replay_failed";
      rj["reason"] = problem.substr(0, problem.find('\n'));  // the entries above carry all of it
      replays_.push_back(rj);
    };
    // The group goes through a private temporary file (0600, removed after).
    std::string tmpl = (fs::temp_directory_path() / "sk-cache-replay.XXXXXX").string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return fail(fmt::format("cannot create a temporary file for the replay: {}", std::strerror(errno)));
    const std::string text = groupToJson(g, items_).dump();
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    struct Unlink {
      std::string path;
      ~Unlink() { ::unlink(path.c_str()); }
    } unlinkLater{tmpl};
    if (!written) return fail(fmt::format("cannot write the replay file {}: {}", tmpl, std::strerror(errno)));

    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    ProcessOptions po;
    po.timeout = std::chrono::seconds(args_.replayTimeoutS);
    po.terminateGrace = std::chrono::seconds(2);  // its handler kills its compilers first
    auto res = runProcess({ec ? std::string("/proc/self/exe") : self.string(), "--cache-dir", root_.string(), "verify",
                           "--replay-group", tmpl},
                          po);
    if (!res) return fail("cannot start the replay process: " + res.error().message());
    const json out = json::parse(res->out, nullptr, false);
    if (!res->succeeded() || out.is_discarded() || !out.contains("items") || !out["items"].is_array() ||
        out["items"].size() != g.items.size()) {
      // What the child said last is why (the watchdog's report, a crash).
      std::string why = res->err;
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      if (why.size() > 2000) why = "..." + why.substr(why.size() - 2000);
      return fail(fmt::format("replay process {}{}", res->describe(), why.empty() ? "" : ": " + why));
    }
    for (size_t k = 0; k < g.items.size(); ++k) {
      Item& item = items_[g.items[k]];
      const json& c = out["items"][k];
      item.status = c.value("status", item.status);
      item.problem = c.value("problem", item.problem);
    }
    replays_.push_back(out.value("replay", rj));
  }

  // The child's side: replay one group read from `file`, print the findings.
  std::optional<Failure> replayGroupChild(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    const json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("items") || !j["items"].is_array())
      return Failure{badInput(fmt::format("--replay-group {}: not a replay group file", file)), kExitBadInput};
    Group g;
    g.opList = j.value("op_list", "");
    g.options = j.value("options", "");
    g.workers = j.value("workers", 0u);
    g.baseDir = j.value("base_dir", "");
    g.compiler = j.value("compiler", "");
    for (const json& it : j["items"]) {
      Item item;
      item.key = it.value("key", "");
      item.kind = it.value("kind", "");
      item.what = it.value("what", "");
      item.status = it.value("status", "ok");
      item.problem = it.value("problem", "");
      g.items.push_back(items_.size());
      g.steps.emplace_back(it.value("fuse", true), it.value("step", uint64_t{0}));
      items_.push_back(std::move(item));
    }
    replay(g);
    json items = json::array();
    for (const Item& i : items_) items.push_back(json{{"status", i.status}, {"problem", i.problem}});
    outJson(json{{"items", items}, {"replay", replays_.empty() ? json::object() : replays_.back()}});
    return std::nullopt;
  }

  Session* session(uint32_t workers, const std::string& compiler) {
    auto it = sessions_.find({workers, compiler});
    if (it != sessions_.end()) return it->second.get();
    SessionOptions so;
    so.cacheDir = root_;
    so.workers = workers;  // the plan's core counts depend on it: same workers, same keys
    so.compiler = compiler;  // and the compiler's identity: the one the entries were built with
    so.onRunTimeout = exitOnRunTimeout(kTool);  // a kernel that never returns: report, exit 4 (replay child)
    so.readOnlyCache = true;  // hits run the cached artifacts; what the replay builds stays in memory
    auto s = Session::create(so);
    if (!s) {
      sessionError_ = "cannot create a session to replay: " + s.error().message();
      return nullptr;
    }
    Session* raw = s->get();
    sessions_.emplace(std::make_pair(workers, compiler), std::move(*s));
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
                       counts["unverified"] ? fmt::format("; {} entr{} not fully verified (UNVERIFIED says why)",
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

  // Cache::inspect's JSON text, parsed (inspect checked that it is JSON).
  Expected<json> inspectManifest(std::string_view key) const {
    auto m = cache_->inspect(key);
    if (!m) return std::move(m).error();
    return parseManifest(*m);
  }

  std::vector<Item> items_;
  json replays_ = json::array();
  std::map<std::pair<uint32_t, std::string>, std::unique_ptr<Session>> sessions_;
  std::string sessionError_;
};


// ---- sk-cache remote ping|ls|verify ----------------------------------------
// The shared Redis tier (RemoteCache.h). These talk to the server directly
// and never load anything; verify checks every entry's signature with this
// machine's secret, which is how an operator finds a machine with the wrong
// SK_REMOTE_CACHE_SECRET_FILE or a tampered entry.
class RemoteTool {
 public:
  explicit RemoteTool(const Args& a) : args_(a) {}

  std::optional<Failure> open() {
    RemoteCacheConfig cfg;
    cfg.url = args_.remote;
    auto r = RemoteCacheAdmin::open(cfg);
    if (!r) return failure(std::move(r).error());
    admin_ = std::move(*r);
    return std::nullopt;
  }

  std::optional<Failure> ping() {
    if (auto f = open()) return f;
    auto rtt = admin_->ping();
    if (!rtt) return failure(std::move(rtt).error());
    auto info = admin_->serverInfo();
    const json server = info ? json(*info) : json::object();
    const std::string secret = admin_->secretProblem();
    if (args_.json) {
      outJson(json{{"url", admin_->url()},
                   {"ok", true},
                   {"latency_us", rtt->count()},
                   {"server", server},
                   {"prefix", admin_->prefix()},
                   {"secret_ok", secret.empty()},
                   {"secret_problem", secret},
                   {"read_only", admin_->readOnly()},
                   {"timeout_ms", admin_->timeout().count()}});
      return std::nullopt;
    }
    std::string s = fmt::format("remote {}: PONG in {:.2f} ms", admin_->url(), static_cast<double>(rtt->count()) / 1000.0);
    if (server.contains("redis_version"))
      s += fmt::format(" (redis {}, maxmemory {}, policy {})", server.value("redis_version", "?"),
                       server.value("maxmemory", "?"), server.value("maxmemory_policy", "?"));
    s += "\n";
    s += fmt::format("  prefix   {}\n", admin_->prefix());
    s += fmt::format("  secret   {}\n", secret.empty() ? "ok" : "NOT USABLE: " + secret +
                                                             " (this machine will not use the remote cache)");
    s += fmt::format("  mode     {}\n", admin_->readOnly() ? "read-only" : "read-write");
    s += fmt::format("  timeout  {} ms\n", admin_->timeout().count());
    out(s);
    return std::nullopt;
  }

  std::optional<Failure> ls(bool verify) {
    if (auto f = open()) return f;
    auto l = admin_->list(verify);
    if (!l) return failure(std::move(l).error());
    size_t problems = 0;
    uint64_t bytes = 0;
    json arr = json::array();
    Table tab(verify ? std::vector<std::string>{"status", "key", "kind", "size", "created", "what", "problem"}
                     : std::vector<std::string>{"key", "kind", "size", "created", "what"},
              verify ? "lllrlll" : "llrll");
    for (const RemoteEntryInfo& e : *l) {
      const bool ok = e.status == "ok" || e.status == "unchecked";
      problems += !ok;
      bytes += e.bytes;
      const json manifest = parseManifest(e.manifest);
      const std::string kind = manifest.is_object() ? manifest.value("kind", "") : "";
      const int64_t created = manifest.is_object() ? manifest.value("created", int64_t{0}) : 0;
      const std::string what = describeEntry(manifest);
      arr.push_back(json{{"key", e.key}, {"kind", kind}, {"bytes", e.bytes}, {"created", created}, {"what", what},
                         {"status", e.status}, {"problem", e.problem}});
      if (verify && ok && !args_.verbose) continue;
      std::string st = e.status;
      for (auto& c : st) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (verify) tab.add({e.status == "ok" ? "ok" : st, shortKey(e.key), kind, formatSize(e.bytes), isoTime(created), what, e.problem});
      else tab.add({shortKey(e.key), kind, formatSize(e.bytes), isoTime(created), what});
    }
    uint64_t deleted = 0;
    if (verify && args_.deleteBad && problems) {
      std::vector<std::string> bad;
      for (const RemoteEntryInfo& e : *l)
        if (e.status != "ok") bad.push_back(e.key);
      auto d = admin_->remove(bad);
      if (!d) return failure(std::move(d).error());
      deleted = *d;
    }
    if (args_.json) {
      json j{{"url", admin_->url()}, {"prefix", admin_->prefix()}, {"entries", arr}};
      if (verify) j["problems"] = problems;
      if (verify && args_.deleteBad) j["deleted"] = deleted;
      outJson(j);
    } else {
      std::string s = fmt::format("remote {} ({}): {} entries, {}\n", admin_->url(), admin_->prefix(), l->size(),
                                  formatSize(bytes));
      if (tab.rows()) s += tab.str();
      if (verify)
        s += fmt::format("remote verify: {} ({} ok, {} bad){}\n",
                         problems ? fmt::format("{} problem{}", problems, problems == 1 ? "" : "s") : "all good",
                         l->size() - problems, problems,
                         args_.deleteBad && problems ? fmt::format("; deleted {}", deleted) : "");
      out(s);
    }
    if (verify && problems && !args_.deleteBad) {
      return Failure{Error(ErrorKind::Mismatch,
                           fmt::format("{} of {} remote entries failed verification (rejected: signed with another "
                                       "secret or modified; no machine with this secret loads them)",
                                       problems, l->size())),
                     kExitMismatch};
    }
    return std::nullopt;
  }

 private:
  const Args& args_;
  std::unique_ptr<RemoteCacheAdmin> admin_;
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

  auto* stats = app.add_subcommand("stats", "counters (hits, misses, compiles, ...), size and size cap");
  auto* zeroStats = app.add_subcommand("zero-stats", "set the counters to zero (entries are kept)");
  auto* explain = app.add_subcommand("explain", "why a lookup missed: how KEY's inputs differ from another entry's");
  explain->add_option("KEY", a.key, "cache key or a unique prefix of at least 4 hex digits")->required();
  explain->add_option("OTHER", a.otherKey,
                      "the entry to compare with (default: the closest one built for the same thing)");
  auto* ls = app.add_subcommand("ls", "list entries, most recently used first");
  auto* inspect = app.add_subcommand("inspect", "show one entry's manifest");
  inspect->add_option("KEY", a.key, "cache key or a unique prefix of at least 4 hex digits")->required();
  auto* verify = app.add_subcommand("verify", "rehash every entry and replay every stored op list (fused vs unfused)");
  verify->add_flag("--quarantine", a.quarantine, "move corrupt entries aside (they are rebuilt on next use)");
  verify->add_flag("--no-replay", a.noReplay, "only rehash; do not recompile or run stored op lists");
  verify->add_flag("-v,--verbose", a.verbose, "list every entry, not only the ones with a problem");
  verify->add_option("--replay-timeout", a.replayTimeoutS,
                     "seconds one op list's replay (its own process) may take before it is killed and reported")
      ->check(CLI::Range(1u, 86400u))
      ->capture_default_str();
  verify->add_option("--replay-group", a.replayGroup, "internal: replay one group in this process")
      ->group("");  // hidden: the parent verify runs its children with it
  auto* gc = app.add_subcommand("gc", "evict least recently used entries until the cache fits SIZE");
  gc->add_option("--max-size", a.maxSize, "size limit above 0, e.g. 500M, 2G, 1.5GiB (to empty the cache: clear)")
      ->type_name("SIZE")
      ->required();
  auto* clear = app.add_subcommand("clear", "remove every entry not in use by a running process");
  auto* remote = app.add_subcommand("remote", "the shared Redis tier ($SK_REMOTE_CACHE): ping | ls | verify");
  remote->add_option("--remote", a.remote, "redis://[[user]:password@]host[:port][/db] (default: $SK_REMOTE_CACHE)")
      ->type_name("URL");
  remote->require_subcommand(1);
  auto* rping = remote->add_subcommand("ping", "connect, PING, and check this machine's secret file");
  auto* rls = remote->add_subcommand("ls", "list the entries of this library version");
  auto* rverify = remote->add_subcommand("verify", "check every entry's signature and contents (exit 1 on a problem)");
  rverify->add_flag("-v,--verbose", a.verbose, "list every entry, not only the bad ones");
  rverify->add_flag("--delete-bad", a.deleteBad,
                    "delete rejected and corrupt entries (only from a machine whose secret is known to be right)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A misspelt subcommand is what the user needs to hear first, not CLI11's "A subcommand is required".
    const std::string unknown = unknownSubcommand(app, argc, argv);
    std::fprintf(stderr, "%s: error: %s (see %s --help)\n", kTool, unknown.empty() ? e.what() : unknown.c_str(),
                 kTool);
    printSuggestions(kTool, suggestForArgs(app, argc, argv));
    return kExitBadInput;
  }
  initLogging();
  installToolSignalHandlers(kTool);
  if (auto e = badTimeoutEnvironment()) {
    printError(kTool, *e);
    return kExitBadInput;
  }
  if (remote->parsed()) {
    RemoteTool rt(a);
    std::optional<Failure> rf;
    if (rping->parsed()) rf = rt.ping();
    else if (rls->parsed()) rf = rt.ls(false);
    else if (rverify->parsed()) rf = rt.ls(true);
    std::fflush(stdout);
    if (rf) {
      printError(kTool, rf->error);
      return rf->code;
    }
    return kExitOk;
  }
  CacheTool tool(a);
  std::optional<Failure> f = tool.resolve();
  if (!f) {
    if (stats->parsed()) f = tool.stats();
    else if (zeroStats->parsed()) f = tool.zeroStats();
    else if (explain->parsed()) f = tool.explain();
    else if (ls->parsed()) f = tool.ls();
    else if (inspect->parsed()) f = tool.inspect();
    else if (verify->parsed() && !a.replayGroup.empty()) f = tool.replayGroupChild(a.replayGroup);
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
