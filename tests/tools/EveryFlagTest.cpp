// Every flag and subcommand the tools' --help prints is run at least once in
// a valid invocation, with its exit code and something the flag causes in
// the output checked. The flags are discovered from --help, and each must
// have a row in the tables below: a new flag without a row, or a row for a
// flag that is gone, fails EveryHelpFlagHasARow.
//
// -h/--help of the subcommands (CLI11 adds one to each) are left out of the
// discovery; the top-level ones are rows.
#include <functional>
#include <regex>
#include <set>

#include "ToolTestUtil.h"
#include "cache/RedisServer.h"
#include "superkernel/support/Paths.h"

namespace sk::tooltest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// ---- discovery ------------------------------------------------------------

// The flags at the start of the option lines of a CLI11 help text:
// "  -v,--verbose", "  --run", "  -h,--help".
std::set<std::string> helpFlags(const std::string& help) {
  std::set<std::string> out;
  const size_t end = help.find("\nSubcommands:");
  const std::string options = help.substr(0, end);
  const std::regex line("\\n  (-[a-zA-Z])?,?(--[a-z][a-z0-9-]*)?");
  for (auto it = std::sregex_iterator(options.begin(), options.end(), line); it != std::sregex_iterator(); ++it) {
    if ((*it)[1].matched) out.insert((*it)[1].str());
    if ((*it)[2].matched) out.insert((*it)[2].str());
  }
  return out;
}

std::set<std::string> helpSubcommands(const std::string& help) {
  std::set<std::string> out;
  const size_t sub = help.find("\nSubcommands:");
  if (sub == std::string::npos) return out;
  const std::string block = help.substr(sub);
  const std::regex line("\\n  ([a-z][a-z-]*) ");
  for (auto it = std::sregex_iterator(block.begin(), block.end(), line); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str());
  return out;
}

std::string help(std::vector<std::string> argv) {
  argv.push_back("--help");
  Result r = run(argv);
  EXPECT_EQ(r.code, 0) << r.all();
  return r.out;
}

// "sk-compile --run", "sk-cache verify --quarantine", "sk-cache remote ls".
std::set<std::string> discover(const std::string& tool, const std::string& bin) {
  std::set<std::string> rows;
  std::function<void(std::vector<std::string>, std::string)> walk = [&](std::vector<std::string> argv,
                                                                        std::string prefix) {
    const std::string h = help(argv);
    const bool top = argv.size() == 1;
    for (const std::string& f : helpFlags(h))
      if (top || (f != "-h" && f != "--help")) rows.insert(prefix + " " + f);
    for (const std::string& s : helpSubcommands(h)) {
      rows.insert(prefix + " " + s);
      std::vector<std::string> sub = argv;
      sub.push_back(s);
      walk(sub, prefix + " " + s);
    }
  };
  walk({bin}, tool);
  return rows;
}

// ---- the tables -------------------------------------------------------------

// Per-run paths and services a row may use.
struct Env {
  fs::path dir;             // a private directory for this row
  fs::path cache;           // a cache holding the seed example's builds (warm)
  std::string key;          // a fused SuperKernel entry in `cache`
  std::string redisUrl;     // empty: no redis-server here
  std::string secretFile;
};

struct Row {
  std::function<std::vector<std::string>(const Env&)> args;  // after the tool
  int code = 0;
  std::string expect;       // in stdout + stderr
  bool warmCache = false;   // Env::cache (and key) filled
  bool needsRedis = false;
  std::function<void(const Env&)> check = {};  // more checks after the run
  /// Another documented outcome the row accepts instead (a measurement on a machine too busy to measure):
  /// exit code and text; `check` is then not run.
  int otherCode = -1;
  std::string otherExpect = {};
};

std::map<std::string, std::optional<std::string>> remoteEnv(const Env& e) {
  return {{"SK_REMOTE_CACHE", std::nullopt}, {"SK_REMOTE_CACHE_SECRET_FILE", e.secretFile}};
}

const std::string kSeed = seedList();

std::vector<std::string> warm(const Env& e, std::vector<std::string> more) {
  std::vector<std::string> a = {kSeed, "--workers", "2", "--cache-dir", e.cache.string()};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::map<std::string, Row> skCompileRows() {
  std::map<std::string, Row> t;
  t["sk-compile -h"] = {[](const Env&) { return std::vector<std::string>{"-h"}; }, 0, "Usage: sk-compile"};
  t["sk-compile --help"] = {[](const Env&) { return std::vector<std::string>{"--help"}; }, 0, "Usage: sk-compile"};
  t["sk-compile --version"] = {[](const Env&) { return std::vector<std::string>{"--version"}; }, 0,
                               "sk-compile " + std::string(libraryVersion())};
  t["sk-compile --run"] = {[](const Env& e) { return warm(e, {"--run", "--repeat", "1"}); }, 0,
                           "results  identical", true};
  t["sk-compile --tokens"] = {[](const Env& e) {
                                return std::vector<std::string>{dataFile("decode_loop_tiny.json"), "--tokens", "2",
                                                                "--repeat", "1", "--workers", "2", "--cache-dir",
                                                                (e.dir / "cache").string()};
                              },
                              0, "Tokens: 2 decode steps fused vs unfused"};
  t["sk-compile --force-recompile"] = {[](const Env& e) { return warm(e, {"--force-recompile"}); }, 0,
                                       "SuperKernels 0 hit / 1 miss, objects 0 hit / 1 miss", true};
  t["sk-compile --calibrate"] = {
      [](const Env& e) {
        return std::vector<std::string>{"--calibrate", "--workers", "2", "--cache-dir", (e.dir / "cache").string()};
      },
      0, "Sync calibration (cpu, 2 workers): barrier ", false, false,
      [](const Env& e) { EXPECT_TRUE(fs::exists(e.dir / "cache" / "calibration" / "cpu-2.json")); }, 4,
      "the machine was busy with other work, so nothing was saved"};
  t["sk-compile --plan-only"] = {[](const Env&) { return std::vector<std::string>{kSeed, "--plan-only"}; }, 0,
                                 "Plan only: nothing was compiled or run"};
  // cpu has no launch graphs: the graph baselines are skipped with one note each, unfused is compared and timed.
  t["sk-compile --baselines"] = {[](const Env& e) { return warm(e, {"--run", "--repeat", "1", "--baselines", "all"}); },
                                 0, "note: the graph baseline is skipped: target cpu has no launch graphs", true,
                                 false, [](const Env&) {}};
  t["sk-compile --repeat"] = {[](const Env& e) { return warm(e, {"--run", "--repeat", "2"}); }, 0,
                              "2 samples per side", true};
  t["sk-compile --emit-source"] = {
      [](const Env& e) { return warm(e, {"--emit-source", (e.dir / "src").string()}); }, 0, "emit_source: 2 files in",
      true, false, [](const Env& e) { EXPECT_FALSE(fs::is_empty(e.dir / "src")); }};
  t["sk-compile --emit-dot"] = {
      [](const Env& e) {
        return std::vector<std::string>{kSeed, "--plan-only", "--emit-dot", (e.dir / "plan.gv").string()};
      },
      0, "emit_dot: ", false, false,
      [](const Env& e) { EXPECT_THAT(readFile(e.dir / "plan.gv"), HasSubstr("digraph")); }};
  t["sk-compile --trace"] = {
      [](const Env& e) { return warm(e, {"--run", "--repeat", "1", "--trace", (e.dir / "t.json").string()}); }, 0,
      "trace: ", true, false,
      [](const Env& e) { EXPECT_THAT(readFile(e.dir / "t.json"), HasSubstr("traceEvents")); }};
  t["sk-compile --json"] = {[](const Env&) { return std::vector<std::string>{kSeed, "--plan-only", "--json"}; }, 0,
                            "\"ok\": true"};
  t["sk-compile --dump"] = {
      [](const Env& e) { return warm(e, {"--run", "--repeat", "1", "--dump", (e.dir / "dump").string()}); }, 0,
      "dump: ", true, false, [](const Env& e) { EXPECT_TRUE(fs::exists(e.dir / "dump" / "x.bin")); }};
  t["sk-compile --options"] = {
      [](const Env&) { return std::vector<std::string>{kSeed, "--plan-only", "--options", "early-start=0"}; }, 0,
      ":early-start=0:"};
  t["sk-compile --cache-dir"] = {[](const Env& e) { return warm(e, {}); }, 0, "", true, false, [](const Env&) {}};
  t["sk-compile --remote-cache"] = {
      [](const Env& e) {
        return std::vector<std::string>{kSeed,        "--workers", "2", "--cache-dir", (e.dir / "cache").string(),
                                        "--remote-cache", e.redisUrl};
      },
      0, "SuperKernels 0 hit / 1 miss", false, true, [](const Env& e) {
        Result s = run({kCache, "stats", "--json", "--cache-dir", (e.dir / "cache").string()});
        EXPECT_GT(json::parse(s.out, nullptr, false).value("remote_uploads", 0), 0) << s.all();
      }};
  t["sk-compile --jobs"] = {[](const Env& e) { return warm(e, {"--jobs", "1"}); }, 0,
                            "SuperKernels 1 hit / 0 miss", true};
  t["sk-compile --target"] = {[](const Env&) {
                                return std::vector<std::string>{
                                    (sourceRoot() / "examples/decode_layer/decode_layer.json").string(), "--plan-only",
                                    "--target", "ascend-sim"};
                              },
                              0, "target ascend-sim"};
  t["sk-compile --workers"] = {[](const Env&) { return std::vector<std::string>{kSeed, "--plan-only", "--workers", "3"}; },
                               0, "target cpu (arch native), 3 workers"};
  t["sk-compile --run-timeout"] = {[](const Env& e) {
                                     return std::vector<std::string>{dataFile("hang.json"), "--run", "--repeat", "1",
                                                                     "--workers", "2", "--run-timeout", "1000",
                                                                     "--cache-dir", (e.dir / "cache").string()};
                                   },
                                   4, "(limit 1000 ms set by the caller)"};
  return t;
}

std::vector<std::string> on(const Env& e, std::vector<std::string> a) {
  a.push_back("--cache-dir");
  a.push_back(e.cache.string());
  return a;
}

std::map<std::string, Row> skCacheRows() {
  std::map<std::string, Row> t;
  auto remote = [](std::vector<std::string> a) {
    return [a](const Env& e) {
      std::vector<std::string> v = a;
      v.push_back("--remote");
      v.push_back(e.redisUrl);
      return v;
    };
  };
  t["sk-cache -h"] = {[](const Env&) { return std::vector<std::string>{"-h"}; }, 0, "Usage: sk-cache"};
  t["sk-cache --help"] = {[](const Env&) { return std::vector<std::string>{"--help"}; }, 0, "Usage: sk-cache"};
  t["sk-cache --version"] = {[](const Env&) { return std::vector<std::string>{"--version"}; }, 0,
                             "sk-cache " + std::string(libraryVersion())};
  t["sk-cache --cache-dir"] = {[](const Env& e) { return on(e, {"ls"}); }, 0, "", true};
  t["sk-cache --json"] = {[](const Env& e) { return on(e, {"ls", "--json"}); }, 0, "\"entries\": [", true};
  t["sk-cache stats"] = {[](const Env& e) { return on(e, {"stats"}); }, 0, "hit rate", true};
  t["sk-cache zero-stats"] = {[](const Env& e) { return on(e, {"zero-stats"}); }, 0, "statistics zeroed", true};
  t["sk-cache explain"] = {[](const Env& e) { return on(e, {"explain", e.key.substr(0, 8)}); }, 0,
                           "sk1 (fused, step 0)", true};
  t["sk-cache ls"] = {[](const Env& e) { return on(e, {"ls"}); }, 0, "(most recently used first)", true};
  t["sk-cache inspect"] = {[](const Env& e) { return on(e, {"inspect", e.key.substr(0, 8)}); }, 0, "sha256 ", true};
  t["sk-cache verify"] = {[](const Env& e) { return on(e, {"verify"}); }, 0, "verify: all good", true};
  t["sk-cache verify --quarantine"] = {
      [](const Env& e) {
        // A flipped byte in one artifact: moved aside, and the exit says so.
        for (auto& f : fs::recursive_directory_iterator(e.cache / "entries"))
          if (f.path().filename() == "superkernel.so" && f.path().parent_path().filename() == e.key) {
            std::string bytes = readFile(f.path());
            bytes[bytes.size() / 2] ^= 1;
            fs::permissions(f.path(), fs::perms::owner_read | fs::perms::owner_write);
            writeFile(f.path(), bytes);
            fs::permissions(f.path(), fs::perms::owner_read);
          }
        return on(e, {"verify", "--no-replay", "--quarantine"});
      },
      1, "CORRUPT", true, false, [](const Env& e) { EXPECT_FALSE(fs::is_empty(e.cache / "quarantine")); }};
  t["sk-cache verify --no-replay"] = {[](const Env& e) { return on(e, {"verify", "--no-replay"}); }, 0,
                                      "0 op lists replayed", true};
  // Healthy entries are listed (a table) only with -v.
  t["sk-cache verify -v"] = {[](const Env& e) { return on(e, {"verify", "--no-replay", "-v"}); }, 0, "  status  key",
                             true};
  t["sk-cache verify --verbose"] = {[](const Env& e) { return on(e, {"verify", "--no-replay", "--verbose"}); }, 0,
                                    "  status  key", true};
  t["sk-cache verify --replay-timeout"] = {[](const Env& e) { return on(e, {"verify", "--replay-timeout", "600"}); }, 0,
                                           ": identical (1 fused vs 4 unfused launches)", true};
  t["sk-cache gc"] = {[](const Env& e) { return on(e, {"gc", "--max-size", "1G"}); }, 0, "removed 0 entries", true};
  t["sk-cache gc --max-size"] = {[](const Env& e) { return on(e, {"gc", "--max-size", "1"}); }, 0, "remain", true};
  t["sk-cache clear"] = {[](const Env& e) { return on(e, {"clear"}); }, 0, ", 0 remain (", true};
  t["sk-cache remote"] = {remote({"remote", "ping"}), 0, "PONG", false, true};
  t["sk-cache remote --remote"] = {remote({"remote", "ls"}), 0, ": 0 entries", false, true};
  t["sk-cache remote ping"] = {remote({"remote", "ping"}), 0, "secret   ok", false, true};
  t["sk-cache remote ls"] = {remote({"remote", "ls", "--json"}), 0, "\"entries\": []", false, true};
  t["sk-cache remote verify"] = {remote({"remote", "verify"}), 0, "remote verify: all good", false, true};
  t["sk-cache remote verify -v"] = {remote({"remote", "verify", "-v"}), 0, "remote verify: all good", false, true};
  t["sk-cache remote verify --verbose"] = {remote({"remote", "verify", "--verbose"}), 0, "remote verify: all good",
                                           false, true};
  t["sk-cache remote verify --delete-bad"] = {remote({"remote", "verify", "--delete-bad"}), 0,
                                              "remote verify: all good", false, true};
  return t;
}

// ---- the tests ----------------------------------------------------------------

TEST(EveryFlag, EveryHelpFlagHasARow) {
  for (const auto& [tool, bin, rows] : {std::tuple{std::string("sk-compile"), kCompile, skCompileRows()},
                                        std::tuple{std::string("sk-cache"), kCache, skCacheRows()}}) {
    const std::set<std::string> found = discover(tool, bin);
    ASSERT_GE(found.size(), tool == "sk-compile" ? 20u : 25u) << "positive control: the scan finds the flags";
    for (const std::string& f : found) EXPECT_TRUE(rows.count(f)) << f << ": in --help, but no row runs it";
    for (const auto& [f, row] : rows) EXPECT_TRUE(found.count(f)) << f << ": a row, but not in --help";
  }
}

void runRows(const std::map<std::string, Row>& rows, const std::string& bin) {
  test::RedisServer server;
  TempDir keys;
  const std::string secret = (keys.path() / "secret").string();
  test::writeFile(secret, "every-flag-secret-0123456789", 0600);
  for (const auto& [name, row] : rows) {
    SCOPED_TRACE(name);
    if (row.needsRedis && !server.ok()) {
      std::printf("skipped %s: %s\n", name.c_str(), server.reason().c_str());
      continue;
    }
    TempDir d;
    Env e;
    e.dir = d.path();
    e.cache = d.path() / "warm";
    e.redisUrl = row.needsRedis ? server.url() : "";
    e.secretFile = secret;
    if (row.warmCache) {
      fillWarmCache(e.cache);
      e.key = findEntry(e.cache, "sk1", true).filename().string();
      ASSERT_EQ(e.key.size(), 64u);
    }
    std::vector<std::string> argv = {bin};
    for (const std::string& a : row.args(e)) argv.push_back(a);
    Spawn s;
    s.argv = argv;
    s.env = remoteEnv(e);
    s.timeoutSec = 120;
    Result r = run(s);
    if (row.otherCode >= 0 && r.code == row.otherCode && r.all().find(row.otherExpect) != std::string::npos) continue;
    EXPECT_EQ(r.code, row.code) << r.all();
    EXPECT_THAT(r.all(), HasSubstr(row.expect));
    // A flag taking a directory or file names it in what it prints.
    if (name.ends_with("--cache-dir")) {
      EXPECT_THAT(r.all(), HasSubstr(e.cache.string()));
    }
    if (row.check) row.check(e);
  }
}

TEST(EveryFlag, EverySkCompileFlagRuns) { runRows(skCompileRows(), kCompile); }

TEST(EveryFlag, EverySkCacheFlagAndSubcommandRuns) { runRows(skCacheRows(), kCache); }

}  // namespace
}  // namespace sk::tooltest
