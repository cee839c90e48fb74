// sk-compile, run as a user runs it: every flag, every exit code (DESIGN
// section 7), the report's contents. Fixtures: the seed example (4 fused
// adds) and tiny op lists under tests/tools/data/.
#include <cstring>
#include <set>

#include "ToolTestUtil.h"

namespace sk::tooltest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// ---- --help, --version, argument errors (exit 2) ---------------------------

TEST(SkCompile, HelpListsEveryFlag) {
  Result r = run({kCompile, "--help"});
  ASSERT_EQ(r.code, 0) << r.all();
  for (const char* flag : {"--run", "--tokens", "--repeat", "--emit-source", "--emit-dot", "--trace", "--json", "--dump",
                           "--options", "--cache-dir", "--jobs", "--target", "--workers", "--version", "OPLIST"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
  EXPECT_THAT(r.out, HasSubstr("3 compile or link failure"));
}

// Keys do not depend on where the data directory is installed (its files are keyed by content): the same
// release in another prefix or build tree, here a copy named by SK_DATA_DIR, hits every object and SuperKernel
// the first compiled.
TEST(SkCompile, AMovedDataDirectoryHitsTheSameKeys) {
  TempDir dir;
  fs::copy(fs::path(SK_BINARY_ROOT) / "share" / "superkernel", dir.path() / "data", fs::copy_options::recursive);
  Result first = run({kCompile, seedList(), "--cache-dir", dir / "cache"});
  ASSERT_EQ(first.code, 0) << first.all();
  EXPECT_THAT(first.out, HasSubstr("SuperKernels 0 hit / 1 miss"));
  Spawn moved;
  moved.argv = {kCompile, seedList(), "--cache-dir", dir / "cache"};
  moved.env["SK_DATA_DIR"] = dir / "data";
  Result second = run(moved);
  ASSERT_EQ(second.code, 0) << second.all();
  EXPECT_THAT(second.out, HasSubstr("SuperKernels 1 hit / 0 miss, objects 1 hit / 0 miss"));
}

// A planner warning (a scope split by an unfusible op) is logged once per run, plan-only or compiling
// (sk-compile plans for its report, then Session::compile plans again), and the report repeats it once.
TEST(SkCompile, APlannerWarningIsLoggedOnce) {
  TempDir dir;
  const std::string logged = "[superkernel warning] " + dataFile("scope_split.json") +
                             ": scope \"s\" split: ops[1] (y): unfusible op (fusible: false)";
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  for (const bool planOnly : {true, false}) {
    std::vector<std::string> argv{kCompile, dataFile("scope_split.json"), "--cache-dir", dir / "cache"};
    if (planOnly) argv.push_back("--plan-only");
    Result r = run(argv);
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_EQ(count(r.err, logged), 1u) << (planOnly ? "--plan-only: " : "compiling: ") << r.err;
    EXPECT_EQ(count(r.all(), "warning: scope \"s\" split"), 1u) << r.all();
  }
}

TEST(SkCompile, Version) {
  Result r = run({kCompile, "--version"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("sk-compile 0."));
}

TEST(SkCompile, ArgumentErrorsExit2WithOneLine) {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{"--frobnicate", seedList()}, "frobnicate"},             // unknown flag
      {{}, "OPLIST"},                                           // missing op list
      {{seedList(), "--jobs", "0"}, "--jobs"},                  // out of range
      {{seedList(), "--workers", "many"}, "--workers"},         // not a number
      {{seedList(), "--repeat", "100001"}, "--repeat"},  // out of range
      {{seedList(), "extra.json"}, "extra.json"},               // a second positional
      {{seedList(), "--run", "--baselines", "graph,nope"}, "'nope' is not a baseline; accepted: unfused, graph, graph-pdl"},
      {{seedList(), "--run", "--baselines", "graph,graph"}, "--baselines: 'graph' is listed twice"},
      {{seedList(), "--run", "--baselines", ""}, "'' is not a baseline"},
      {{seedList(), "--baselines", "all", "--dump", "d"}, "--baselines without --run or --tokens only builds"},
      {{seedList(), "--baselines", "graph", "--trace", "t.json"}, "cannot be combined with --dump, --trace or --plan-only"},
      {{seedList(), "--baselines", "unfused", "--plan-only"}, "cannot be combined with --dump, --trace or --plan-only"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {kCompile};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Result r = run(argv);
    EXPECT_EQ(r.code, 2) << c.says << "\n" << r.all();
    EXPECT_THAT(r.err, HasSubstr("sk-compile: error:")) << c.says;
    EXPECT_THAT(r.err, HasSubstr(c.says));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(SkCompile, BadOpListsExit2NamingWhere) {
  TempDir d;
  writeFile(d.path() / "broken.json", "{\"format\": \"superkernel.oplist\", \"version\": 1, ");
  std::string seed = readFile(seedList());
  // An unknown key inside ops[1]: the message must name the JSON path.
  std::string unknownKey = seed;
  const std::string needle = "{\"name\": \"add_1\",";
  ASSERT_NE(unknownKey.find(needle), std::string::npos);
  unknownKey.replace(unknownKey.find(needle), needle.size(), "{\"name\": \"add_1\", \"colour\": 3,");
  writeFile(d.path() / "unknown_key.json", unknownKey);
  // A bad option inside the op list.
  std::string badOpt = seed;
  badOpt.replace(badOpt.find("early-start=1"), 13, "early-start=7");
  writeFile(d.path() / "bad_option.json", badOpt);
  struct Case {
    std::string file;
    std::vector<const char*> says;
  };
  const std::vector<Case> cases = {
      {d / "broken.json", {"broken.json", "JSON"}},
      {d / "unknown_key.json", {"ops[1]", "colour"}},
      {d / "bad_option.json", {"early-start"}},
      {d / "does_not_exist.json", {"does_not_exist.json"}},
  };
  for (const Case& c : cases) {
    TempDir cache;
    Result r = run({kCompile, c.file, "--cache-dir", cache.path().string()});
    EXPECT_EQ(r.code, 2) << c.file << "\n" << r.all();
    for (const char* s : c.says) EXPECT_THAT(r.err, HasSubstr(s)) << c.file;
  }
}

TEST(SkCompile, BadOptionsTargetAndEnvironmentExit2) {
  TempDir cache;
  const std::string dir = cache.path().string();
  Result r = run({kCompile, seedList(), "--cache-dir", dir, "--options", "no-such-key=1"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("no-such-key"));

  r = run({kCompile, seedList(), "--cache-dir", dir, "--options", "early-start=1:early-start=2"});
  EXPECT_EQ(r.code, 2) << r.all();  // duplicate key

  r = run({kCompile, seedList(), "--cache-dir", dir, "--target", "nonsense"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("unknown target 'nonsense' (supported: ascend, ascend-sim, cpu, cuda, cuda-sim)"));

  r = run({kCompile, seedList(), "--cache-dir", dir}, {{"SK_NUM_WORKERS", std::string("zero")}});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("SK_NUM_WORKERS"));
}

// --baselines without --run builds what that --run loads and runs nothing (scripts/gpu-prepare.sh fills a GPU's
// cache so): afterwards --run --baselines all of the same list compiles nothing (a compiler launcher that fails
// every compile would fail it) and checks every baseline. cuda-sim: the cuda code, built by the host compiler.
TEST(SkCompile, BaselinesWithoutRunBuildWhatTheRunLoads) {
  TempDir d;
  const std::string tiny = (sourceRoot() / "tests/cuda/data/tiny.json").string();
  Result r = run({kCompile, tiny, "--target", "cuda-sim", "--baselines", "all", "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("unfused reference"));
  EXPECT_THAT(r.out, HasSubstr("Graph + PDL reference"));
  EXPECT_THAT(r.out, HasSubstr("note: --baselines without --run: built and cached what --run would load"));
  EXPECT_THAT(r.out, Not(HasSubstr("Run: fused vs")));
  const std::string refuse = d / "refuse";
  {
    std::ofstream out(refuse);
    out << "#!/bin/sh\necho \"refused compile: $*\" >&2\nexit 1\n";
  }
  fs::permissions(refuse, fs::perms::owner_all);
  r = run({kCompile, tiny, "--target", "cuda-sim", "--run", "--repeat", "0", "--baselines", "all", "--cache-dir",
           d / "cache"},
          {{"SK_COMPILER_LAUNCHER", refuse}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr(" compared bit-for-bit against each of unfused, graph, graph+pdl\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("refused compile")));
}

// --calibrate measures the sync costs, caches them, and later plans of that cache directory use them; what it
// cannot do is exit 2 with the reason.
TEST(SkCompile, CalibrateCachesTheCostsLaterPlansUse) {
  TempDir cache;
  const std::string dir = cache.path().string();
  // What it cannot do first (these never depend on how busy the machine is).
  Result r = run({kCompile, "--calibrate", "--target", "ascend-sim", "--cache-dir", dir});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("target ascend-sim has no sync calibration"));
  r = run({kCompile, "--calibrate", "--workers", "1", "--cache-dir", dir});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("sync calibration needs at least 2 workers"));
  r = run({kCompile, seedList(), "--plan-only", "--cache-dir", dir}, {{"SK_SYNC_COSTS", std::string("barrier=fast")}});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("SK_SYNC_COSTS=\"barrier=fast\""));
  // No calibration yet: the defaults, said so.
  r = run({kCompile, seedList(), "--plan-only", "--workers", "3", "--cache-dir", dir}, {{"SK_SYNC_COSTS", std::nullopt}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("(defaults; sk-compile --calibrate measures this machine)"));
  r = run({kCompile, "--calibrate", "--workers", "2", "--cache-dir", dir, "--json"}, {{"SK_SYNC_COSTS", std::nullopt}});
  // A machine too busy to measure: exit 4 saying so, and nothing saved (CpuBackend.SyncCalibrationTimes...).
  if (r.code == 4 && r.err.find("the machine was busy") != std::string::npos) {
    EXPECT_FALSE(fs::exists(cache.path() / "calibration" / "cpu-2.json"));
    GTEST_SKIP() << r.err;
  }
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out);
  EXPECT_EQ(j["sync_calibration"]["target"], "cpu");
  EXPECT_EQ(j["sync_calibration"]["cores"], 2);
  EXPECT_GT(j["sync_calibration"]["barrier_ns"].get<double>(), 0);
  EXPECT_THAT(j["sync_calibration"]["source"].get<std::string>(), HasSubstr("calibration/cpu-2.json"));
  EXPECT_TRUE(fs::exists(cache.path() / "calibration" / "cpu-2.json"));

  r = run({kCompile, seedList(), "--plan-only", "--workers", "2", "--cache-dir", dir}, {{"SK_SYNC_COSTS", std::nullopt}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Sync model: 0 boundaries made barriers"));
  EXPECT_THAT(r.out, HasSubstr("(calibrated, " + (cache.path() / "calibration" / "cpu-2.json").string() + ")"));
}

// ---- compile + report (exit 0) ---------------------------------------------

TEST(SkCompile, ColdThenWarmReportAndCache) {
  TempDir cache;
  const std::string dir = cache.path().string();
  Result r = run({kCompile, seedList(), "--cache-dir", dir, "--workers", "2", "--jobs", "2"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Fusion: 4 ops -> 1 launch (1 SuperKernel, 0 unfused ops), 1 kernel variant"));
  EXPECT_THAT(r.out, HasSubstr("sk1"));
  EXPECT_THAT(r.out, HasSubstr("SuperKernel"));
  EXPECT_THAT(r.out, HasSubstr("end of op list"));  // why the segment ended
  EXPECT_THAT(r.out, HasSubstr("local 3"));
  EXPECT_THAT(r.out, HasSubstr("sync_all barriers"));
  EXPECT_THAT(r.out, HasSubstr("Preload:"));
  EXPECT_THAT(r.out, HasSubstr("Cache: SuperKernels 0 hit / 1 miss, objects 0 hit / 1 miss"));
  EXPECT_THAT(r.out, HasSubstr("Compile: "));
  EXPECT_THAT(r.out, HasSubstr(dir));
  EXPECT_THAT(r.out, Not(HasSubstr("Run:")));  // no --run, no run section
  // Not a terminal: no progress line, and quiet logs.
  EXPECT_THAT(r.err, Not(HasSubstr("compiling")));
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_TRUE(fs::is_directory(cache.path() / "entries"));

  r = run({kCompile, seedList(), "--cache-dir", dir, "--workers", "2"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Cache: SuperKernels 1 hit / 0 miss, objects 1 hit / 0 miss"));
}

TEST(SkCompile, RunComparesAndTimes) {
  TempDir cache;
  fillWarmCache(cache.path());
  Result r = run({kCompile, seedList(), "--run", "--repeat", "3", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  // The bench's method, and the report says so: samples, batches, warm-up, min-max.
  EXPECT_THAT(r.out, HasSubstr("Run: fused vs unfused from identical buffers, 2 workers"));
  EXPECT_THAT(r.out, HasSubstr("3 samples per side, each the median run of a ~20 ms batch, after 2 warm-up runs"));
  EXPECT_THAT(r.out, HasSubstr("runs/sample"));
  EXPECT_THAT(r.out, HasSubstr("over sample pairs"));
  EXPECT_THAT(r.out, HasSubstr("fused"));
  EXPECT_THAT(r.out, HasSubstr("unfused"));
  EXPECT_THAT(r.out, HasSubstr("speedup"));
  EXPECT_THAT(r.out, HasSubstr("identical: 6 buffers, 96.0 KiB compared bit-for-bit"));
  EXPECT_THAT(r.out, HasSubstr("unfused reference"));
}

// --repeat 0 compares and stops: no timing rows, no timing fields, and the report says why they are missing.
TEST(SkCompile, RepeatZeroComparesWithoutTiming) {
  TempDir cache;
  fillWarmCache(cache.path());
  Result r = run({kCompile, seedList(), "--run", "--repeat", "0", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Run: fused vs unfused from identical buffers (compared, not timed: --repeat 0)"));
  EXPECT_THAT(r.out, HasSubstr("identical: 6 buffers, 96.0 KiB compared bit-for-bit"));
  EXPECT_THAT(r.out, Not(HasSubstr("speedup")));
  Result j = run({kCompile, seedList(), "--json", "--run", "--repeat", "0", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(j.code, 0) << j.all();
  json doc = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_TRUE(doc["run"]["identical"].get<bool>());
  EXPECT_EQ(doc["run"]["repeat"], 0);
  EXPECT_FALSE(doc["run"].contains("fused_seconds"));
  EXPECT_FALSE(doc["run"].contains("warmups"));
}

TEST(SkCompile, JsonReport) {
  TempDir cache;
  fillWarmCache(cache.path());
  Result r = run({kCompile, seedList(), "--json", "--run", "--repeat", "2", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["target"], "cpu");
  const json& p = j["plan"];
  EXPECT_EQ(p["ops_before"], 4);
  EXPECT_EQ(p["launches_after"], 1);
  EXPECT_EQ(p["superkernels"], 1);
  EXPECT_EQ(p["syncs"]["local"], 3);
  EXPECT_EQ(p["barriers"], 0);
  ASSERT_EQ(p["steps"].size(), 1u);
  EXPECT_EQ(p["steps"][0]["name"], "sk1");
  EXPECT_EQ(p["steps"][0]["fused"], true);
  EXPECT_EQ(p["steps"][0]["ops"], 4);
  EXPECT_EQ(p["steps"][0]["cached"], true);
  EXPECT_EQ(p["steps"][0]["key"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["compile"]["superkernel_hits"], 1);
  EXPECT_EQ(j["compile"]["superkernel_misses"], 0);
  EXPECT_EQ(j["reference"]["superkernel_hits"], 4);
  const json& run = j["run"];
  EXPECT_EQ(run["identical"], true);
  EXPECT_EQ(run["buffers"], 6);
  EXPECT_EQ(run["fused_samples"].size(), 2u);
  EXPECT_GT(run["fused_seconds"].get<double>(), 0);
  EXPECT_GT(run["unfused_seconds"].get<double>(), 0);
  EXPECT_GT(run["speedup"].get<double>(), 0);
}

TEST(SkCompile, OptionsMergeOverTheOpList) {
  TempDir cache;
  fillWarmCache(cache.path());
  // The seed says early-start=1; --options wins: a full barrier between
  // dependent ops instead of local edges.
  Result r = run({kCompile, seedList(), "--json", "--workers", "2", "--options", "early-start=0", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out);
  EXPECT_THAT(j["options"].get<std::string>(), HasSubstr("early-start=0"));
  EXPECT_EQ(j["plan"]["syncs"]["local"], 0);
  EXPECT_EQ(j["plan"]["syncs"]["barrier"], 3);
  EXPECT_EQ(j["plan"]["barriers"], 3);
  EXPECT_EQ(j["compile"]["superkernel_misses"], 1);  // a different SuperKernel
}

// --options gets exactly the checks the op list's own options get (docs/OPLIST.md): a refused compile option
// is exit 2 blaming the flag, with --plan-only too (it used to pass there), never "while compiling sub-kernels".
TEST(SkCompile, OptionsFlagIsCheckedLikeTheFilesOptions) {
  TempDir cache;
  for (bool planOnly : {true, false}) {
    std::vector<std::string> argv = {kCompile, seedList(), "--options", "compile-options=-fplugin=evil",
                                     "--cache-dir", cache.path().string()};
    if (planOnly) argv.push_back("--plan-only");
    Result r = run(argv);
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_THAT(r.err, HasSubstr("sk-compile: error: --options: compile-options item \"-fplugin=evil\" is not allowed"));
    EXPECT_THAT(r.err, Not(HasSubstr("while compiling")));
  }
  Result r = run({kCompile, seedList(), "--plan-only", "--options", "early-start=7"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--options: "));
  EXPECT_THAT(r.err, HasSubstr("early-start"));
}

// --plan-only knows no code sizes: the preload bytes it reports are one 2 KiB granule per prefetch, and the
// report says exactly that (it used to say "preload bytes read 0" under a non-zero preload line).
// (preload-code=per-func: cpu's default, auto, prefetches no code.)
TEST(SkCompile, PlanOnlyPreloadBytesAreWhatTheReportSays) {
  const std::string list = (sourceRoot() / "examples/two_stream/two_stream.json").string();
  Result none = run({kCompile, list, "--plan-only", "--json", "--workers", "2"});
  ASSERT_EQ(none.code, 0) << none.all();
  EXPECT_EQ(json::parse(none.out)["plan"]["prefetches"].get<uint64_t>(), 0u);
  Result r = run({kCompile, list, "--plan-only", "--json", "--workers", "2", "--options", "preload-code=per-func"});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out);
  const uint64_t prefetches = j["plan"]["prefetches"].get<uint64_t>();
  ASSERT_GT(prefetches, 0u);
  EXPECT_EQ(j["plan"]["preload_bytes"].get<uint64_t>(), prefetches * 2048);
  Result text = run({kCompile, list, "--plan-only", "--workers", "2", "--options", "preload-code=per-func"});
  ASSERT_EQ(text.code, 0) << text.all();
  EXPECT_THAT(text.out, HasSubstr("each prefetch counts one 2 KiB granule"));
  EXPECT_THAT(text.out, Not(HasSubstr("read 0")));
}

TEST(SkCompile, WorkersAndTargetFlags) {
  TempDir cache;
  fillWarmCache(cache.path());
  Result r = run({kCompile, seedList(), "--json", "--workers", "1", "--target", "cpu", "--jobs", "1", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out);
  EXPECT_EQ(j["workers"], 1);
  EXPECT_EQ(j["plan"]["steps"][0]["cores"], 1);
  EXPECT_EQ(j["target"], "cpu");
}

TEST(SkCompile, DumpWritesEveryBufferAfterTheFusedRun) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  for (bool withRun : {true, false}) {
    const fs::path dump = d.path() / (withRun ? "dump-run" : "dump-only");
    std::vector<std::string> argv = {kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache",
                                     "--dump", dump.string()};
    if (withRun) argv.push_back("--run");
    Result r = run(argv);
    ASSERT_EQ(r.code, 0) << r.all();
    for (const char* name : {"x", "y", "t1", "t2", "t3", "out"}) {
      const fs::path f = dump / (std::string(name) + ".bin");
      ASSERT_TRUE(fs::exists(f)) << f;
      EXPECT_EQ(fs::file_size(f), 4096u * 4u) << f;
    }
    // The contents are the fused run's results: out = (((x + 1) + 1) + 1) + 1.
    std::string x = readFile(dump / "x.bin"), out = readFile(dump / "out.bin");
    ASSERT_EQ(x.size(), out.size());
    for (size_t i = 0; i < 4096; i += 97) {
      float xi, oi;
      std::memcpy(&xi, x.data() + 4 * i, 4);
      std::memcpy(&oi, out.data() + 4 * i, 4);
      float expect = xi + 1.0f;
      expect = expect + 1.0f;
      expect = expect + 1.0f;
      expect = expect + 1.0f;
      EXPECT_EQ(oi, expect) << "element " << i;
    }
  }
}

TEST(SkCompile, EmitSourceWritesSourceAndManifest) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--emit-source", d / "src"});
  ASSERT_EQ(r.code, 0) << r.all();
  const std::string src = readFile(d.path() / "src" / "sk1.cpp");
  EXPECT_THAT(src, HasSubstr("Generated by superkernel"));
  EXPECT_THAT(src, HasSubstr("int run(uint32_t block_dim"));
  json m = json::parse(readFile(d.path() / "src" / "sk1.manifest.json"), nullptr, false);
  ASSERT_FALSE(m.is_discarded());
  EXPECT_EQ(m["name"], "sk1");
  EXPECT_EQ(m["buffers"].size(), 6u);
  EXPECT_EQ(m["ops"].size(), 4u);
  EXPECT_EQ(m["cache_key"].get<std::string>().size(), 64u);
  EXPECT_THAT(r.out, HasSubstr("emit_source: 2 files"));
}

TEST(SkCompile, EmitDotWritesGraphAndSvgWhenGraphvizWorks) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  const fs::path dot = d.path() / "out" / "plan.dot";
  fs::create_directory(d.path() / "out");  // output directories are not created for the caller
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--emit-dot", dot.string()});
  ASSERT_EQ(r.code, 0) << r.all();
  const std::string text = readFile(dot);
  EXPECT_EQ(text.rfind("digraph", 0), 0u) << text;
  for (const char* op : {"add_0", "add_1", "add_2", "add_3", "local"}) EXPECT_THAT(text, HasSubstr(op));
  // The SVG appears exactly when Graphviz can render here.
  bool graphviz = false;
  if (fs::exists("/usr/bin/dot") || fs::exists("/usr/local/bin/dot")) {
    writeFile(d.path() / "probe.dot", "digraph { a -> b }\n");
    Result probe = run({fs::exists("/usr/bin/dot") ? "/usr/bin/dot" : "/usr/local/bin/dot", "-Tsvg", "-o",
                        d / "probe.svg", d / "probe.dot"});
    graphviz = probe.code == 0;
  }
  const fs::path svg = d.path() / "out" / "plan.svg";
  if (graphviz) {
    ASSERT_TRUE(fs::exists(svg)) << r.out;
    EXPECT_THAT(readFile(svg), HasSubstr("<svg"));
  } else {
    EXPECT_FALSE(fs::exists(svg));
    EXPECT_THAT(r.out, HasSubstr("Graphviz"));
  }
  // The SVG's name, as docs/CLI.md gives it: .dot and .gv are replaced, any other name gets ".svg" appended.
  if (graphviz) {
    for (auto [name, picture] : {std::pair{"plan.gv", "plan.svg"}, std::pair{"plan.txt", "plan.txt.svg"}}) {
      const fs::path dir = d.path() / name;
      fs::create_directory(dir);
      r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--emit-dot", (dir / name).string()});
      ASSERT_EQ(r.code, 0) << r.all();
      EXPECT_TRUE(fs::exists(dir / picture)) << name << " -> " << picture;
    }
  }
}

TEST(SkCompile, TraceHasOneTrackPerWorker) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  const fs::path trace = d.path() / "trace.json";
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--trace", trace.string()});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(readFile(trace), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j.contains("traceEvents"));
  std::set<int> tracks, slicesOn;
  std::set<std::string> names;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["tid"].get<int>());
    if (e["ph"] == "X") {
      slicesOn.insert(e["tid"].get<int>());
      names.insert(e["name"].get<std::string>());
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  }
  // 40 blocks per op on 2 workers: both workers run slices, each has a named track.
  EXPECT_EQ(tracks, (std::set<int>{0, 1}));
  EXPECT_EQ(slicesOn, tracks);
  for (const char* op : {"add_0", "add_1", "add_2", "add_3"}) EXPECT_TRUE(names.count(op)) << op;
}

TEST(SkCompile, ProgressLineOnlyOnATerminal) {
  TempDir cache;
  fillWarmCache(cache.path());
  Spawn s;
  s.argv = {kCompile, seedList(), "--workers", "2", "--cache-dir", cache.path().string()};
  s.ptyStderr = true;
  Result tty = run(s);
  ASSERT_EQ(tty.code, 0) << tty.all();
  EXPECT_THAT(tty.err, HasSubstr("compiling 1 of 1 kernels"));
  EXPECT_THAT(tty.err, HasSubstr("linking 1 of 1 SuperKernels"));
  s.ptyStderr = false;
  Result pipe = run(s);
  ASSERT_EQ(pipe.code, 0) << pipe.all();
  EXPECT_THAT(pipe.err, Not(HasSubstr("compiling")));
}

TEST(SkCompile, UntrustedCacheDirFallsBackWithAWarning) {
  TempDir d;
  const fs::path shared = d.path() / "shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all);  // 0777: anyone could plant a .so
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", shared.string()});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.err, HasSubstr("not trusted"));
  EXPECT_THAT(r.out, HasSubstr("not trusted"));
  EXPECT_FALSE(fs::exists(shared / "entries"));  // nothing written into it
}

// ---- exit codes 1, 3, 4 -------------------------------------------------------

TEST(SkCompile, MismatchExits1ShowingTheFirstDifference) {
  TempDir cache;
  Result r = run({kCompile, dataFile("mismatch.json"), "--run", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 1) << r.all();
  // unfused out[0] = t[32] = x[32] + 1 = 33; fused block 0 read t[32] before it was written: 0.
  EXPECT_THAT(r.out, HasSubstr("DIFFER"));
  EXPECT_THAT(r.err, HasSubstr("fused and unfused results differ"));
  EXPECT_THAT(r.err, HasSubstr("buffer out: element 0"));
  EXPECT_THAT(r.err, HasSubstr("33"));
}

TEST(SkCompile, CompileErrorExits3WithCommandAndDiagnostic) {
  TempDir cache;
  Result r = run({kCompile, dataFile("syntax_error.json"), "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 3) << r.all();
  EXPECT_THAT(r.err, HasSubstr("sk-compile: error:"));
  EXPECT_THAT(r.err, HasSubstr("syntax_error.cpp"));
  EXPECT_THAT(r.err, HasSubstr("command:"));                       // the compiler command line
  EXPECT_THAT(r.err, HasSubstr("-c -O2"));
  EXPECT_THAT(r.err, HasSubstr("expected ';'"));                   // the compiler's diagnostic
}

TEST(SkCompile, CompilerNotFoundExits3WithAHint) {
  TempDir cache;
  Result r = run({kCompile, seedList(), "--cache-dir", cache.path().string()},
                 {{"SK_CXX", std::string("no-such-compiler-xyz")}});
  ASSERT_EQ(r.code, 3) << r.all();
  EXPECT_THAT(r.err, HasSubstr("no-such-compiler-xyz"));
  EXPECT_THAT(r.err, HasSubstr("hint:"));
}

// A bad SK_DATA_DIR is bad input (exit 2) at whichever stage meets it first: a builtin kernel at parse time
// (--plan-only) or the templates when compiling a list of plain sources (it used to be exit 4 there).
TEST(SkCompile, BadDataDirIsExit2Everywhere) {
  TempDir d;
  fs::create_directory(d.path() / "empty");
  const std::string layer = (sourceRoot() / "examples/decode_layer/decode_layer.json").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{layer, "--plan-only"}, std::vector<std::string>{layer},
        std::vector<std::string>{seedList()}}) {
    std::vector<std::string> argv = {kCompile, "--cache-dir", (d.path() / "cache").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    Result r = run(argv, {{"SK_DATA_DIR", (d.path() / "empty").string()}});
    EXPECT_EQ(r.code, 2) << args[0] << "\n" << r.all();
    EXPECT_THAT(r.err, HasSubstr("SK_DATA_DIR="));
  }
}

// profiling=1 without --trace records nothing: a note says so and how to get the trace.
TEST(SkCompile, ProfilingWithoutTraceSaysNothingIsWritten) {
  TempDir cache;
  Result r = run({kCompile, seedList(), "--workers", "2", "--options", "profiling=1", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("note: profiling=1 builds profiled SuperKernels, but only --trace FILE writes a trace"));
  Result plain = run({kCompile, seedList(), "--workers", "2", "--cache-dir", cache.path().string()});
  ASSERT_EQ(plain.code, 0) << plain.all();
  EXPECT_THAT(plain.out, Not(HasSubstr("profiling=1 builds")));
}

// A missing compiler launcher is named, with a hint about the launcher (it used to suggest installing clang).
TEST(SkCompile, MissingCompilerLauncherHintNamesTheLauncher) {
  TempDir cache;
  Result r = run({kCompile, seedList(), "--cache-dir", cache.path().string()},
                 {{"SK_COMPILER_LAUNCHER", std::string("no-such-launcher-xyz")}});
  ASSERT_EQ(r.code, 3) << r.all();
  EXPECT_THAT(r.err, HasSubstr("no-such-launcher-xyz"));
  EXPECT_THAT(r.err, HasSubstr("hint: install the launcher"));
  EXPECT_THAT(r.err, HasSubstr("unset SK_COMPILER_LAUNCHER"));
  EXPECT_THAT(r.err, Not(HasSubstr("install clang")));
}

TEST(SkCompile, KernelReportedErrorExits4) {
  TempDir cache;
  Result r = run({kCompile, dataFile("report_error.json"), "--run", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("fixture kernel: input out of range at element 0"));
  EXPECT_THAT(r.err, HasSubstr("fail_0"));
  EXPECT_THAT(r.out, HasSubstr("Fusion:"));  // the plan report is still printed
}

TEST(SkCompile, WaitTimeoutExits4WithAHint) {
  TempDir cache;
  Result r = run({kCompile, dataFile("timeout.json"), "--run", "--workers", "2", "--cache-dir",
                  cache.path().string()},
                 {{"SK_WAIT_TIMEOUT_MS", std::string("300")}});
  ASSERT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("timed out after 300 ms"));
  EXPECT_THAT(r.err, HasSubstr("SK_WAIT_TIMEOUT_MS"));
}

TEST(SkCompile, JsonReportOnFailureCarriesTheError) {
  TempDir cache;
  Result r = run({kCompile, dataFile("report_error.json"), "--run", "--json", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 4) << r.all();
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["exit_code"], 4);
  EXPECT_EQ(j["error"]["kind"], "runtime error");
  EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr("input out of range"));
}

// One smoke run of the real decode layer (builtin kernels, many variants).
TEST(SkCompile, DecodeLayerSmoke) {
  TempDir cache;
  Result r = run({kCompile, (sourceRoot() / "examples/decode_layer/decode_layer.json").string(), "--run", "--repeat",
                  "2", "--json", "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out);
  EXPECT_GT(j["plan"]["ops_before"].get<int>(), j["plan"]["launches_after"].get<int>());
  EXPECT_EQ(j["run"]["identical"], true);
}

}  // namespace
}  // namespace sk::tooltest
