// sk-compile --target ascend-sim: the ascend back end's simulator through the
// Session with no tool change; and --target ascend (bisheng + CANN) where there
// is no CANN: plans, and one error naming what is missing. Each run compiles the fused plan and the unfused reference
// (one simulated launch per op), runs both in the simulator from identical
// initial data and compares every buffer bit for bit (exit 1 on a
// difference). Fixtures: tests/tools/data/ascend_seed.json (a seed-like add
// chain, plus ops with other scalars and a view), ascend_two_stream.json
// (cube matmuls on stream 0, vector adds on stream 1, an event join) and the
// decode layer example.
#include "ToolTestUtil.h"

#include "superkernel/driver/Process.h"

namespace sk::tooltest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The simulated builds go through ccache when there is one (a second run of
// the suite recompiles nothing); otherwise they compile cold.
std::map<std::string, std::optional<std::string>> ascendEnv() {
  std::map<std::string, std::optional<std::string>> env;
  const fs::path ccache = findExecutableUnresolved("ccache");
  if (!ccache.empty()) env["SK_COMPILER_LAUNCHER"] = ccache.string();
  return env;
}

std::string decodeLayer() { return (sourceRoot() / "examples/decode_layer/decode_layer.json").string(); }

// One cache per test: its runs share the unfused reference's entries.
void expectIdentical(const TempDir& cache, const std::string& list, const std::string& options) {
  SCOPED_TRACE(list + " --options " + options);
  Spawn s;
  s.argv = {kCompile, list, "--target", "ascend-sim", "--run", "--repeat", "0", "--cache-dir", cache.path().string()};
  if (!options.empty()) s.argv.insert(s.argv.end(), {"--options", options});
  s.env = ascendEnv();
  Result r = run(s);
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("target ascend"));
  EXPECT_THAT(r.out, HasSubstr("results  identical"));
  EXPECT_THAT(r.out, HasSubstr("SuperKernel"));
}

TEST(AscendCli, SeedChainFusedEqualsUnfused) {
  TempDir cache;
  expectIdentical(cache, dataFile("ascend_seed.json"), "");
  expectIdentical(cache, dataFile("ascend_seed.json"), "early-start=0:split-mode=1:preload-code=none");
  expectIdentical(cache, dataFile("ascend_seed.json"), "debug-core-num=2");  // 2 AI Cores: 2 cube, 4 vector
  // sk-cache verify replays the stored ascend op lists on a device of the recorded AI Cores: same keys.
  Spawn v;
  v.argv = {kCache, "verify", "--cache-dir", cache.path().string()};
  v.env = ascendEnv();
  Result r = run(v);
  EXPECT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.all(), HasSubstr("0 mismatch, 0 replay failed"));
}

// The device target without CANN: planning needs nothing (and plans the part's cores, not the simulator's),
// compiling is one error (exit 3) naming bisheng, where it was looked for and the simulator target.
TEST(AscendCli, TheDeviceTargetWithoutCannPlansAndSaysWhatIsMissing) {
  if (!findExecutable("bisheng").empty()) GTEST_SKIP() << "bisheng is on PATH here";
  const std::map<std::string, std::optional<std::string>> noCann = {
      {"SK_BISHENG", std::nullopt}, {"ASCEND_HOME_PATH", std::nullopt}, {"SK_ASCENDCL", std::nullopt}};
  const std::string list = (sourceRoot() / "examples/ascend_add/ascend_add.json").string();
  Spawn plan;
  plan.argv = {kCompile, list, "--target", "ascend", "--plan-only"};
  plan.env = noCann;
  Result p = run(plan);
  ASSERT_EQ(p.code, 0) << p.all();
  EXPECT_THAT(p.out, HasSubstr("target ascend (arch native)"));
  EXPECT_THAT(p.out, Not(HasSubstr("ascend-sim")));
  TempDir cache;
  Spawn compile;
  compile.argv = {kCompile, list, "--target", "ascend", "--cache-dir", cache.path().string()};
  compile.env = noCann;
  Result c = run(compile);
  EXPECT_EQ(c.code, 3) << c.all();
  EXPECT_THAT(c.err, HasSubstr("target ascend: compiler 'bisheng' not found on PATH"));
  EXPECT_THAT(c.err, HasSubstr("(ASCEND_HOME_PATH is not set; tried: bisheng on PATH)"));
  EXPECT_THAT(c.err, HasSubstr("set SK_BISHENG to its path, or ASCEND_HOME_PATH to the CANN toolkit"));
  EXPECT_THAT(c.err, HasSubstr("--target ascend-sim"));
  EXPECT_THAT(c.err, Not(HasSubstr("install clang")));  // the host compiler's hint is not bisheng's
  // One line, as docs/CLI.md promises for every error (issue 38): no "tried:" / "set ..." lines after it.
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  EXPECT_EQ(c.err.rfind("sk-compile: error: ", 0), 0u) << c.err;
}

TEST(AscendCli, DebugCoreNumPastTheAiCoresIsBadInput) {
  TempDir cache;
  Result r = run({kCompile, dataFile("ascend_seed.json"), "--cache-dir", cache.path().string(), "--options",
                  "debug-core-num=9"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("debug-core-num=9 exceeds the ascend device's 8 cores of its first pool (cube)"));
}

TEST(AscendCli, TwoStreamsFusedEqualsUnfused) {
  TempDir cache;
  expectIdentical(cache, dataFile("ascend_two_stream.json"), "");  // stream-fusion=1: AIC and AIV programs
  expectIdentical(cache, dataFile("ascend_two_stream.json"), "stream-fusion=0:early-start=2:debug-sync-all=1:split-mode=2");
}

TEST(AscendCli, DecodeLayerFusedEqualsUnfused) {
  TempDir cache;
  expectIdentical(cache, decodeLayer(), "");
  expectIdentical(cache, decodeLayer(), "early-start=0:preload-code=max:profiling=1");
}

TEST(AscendCli, AnOpListNamingAscendCompiles) {
  // "target": "ascend-sim" in the list itself, no --target: no longer "not supported yet".
  TempDir cache;
  Spawn s;
  s.argv = {kCompile, dataFile("ascend_seed.json"), "--cache-dir", cache.path().string(), "--emit-source",
            cache / "src"};
  s.env = ascendEnv();
  Result r = run(s);
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.all(), Not(HasSubstr("not supported yet")));
  EXPECT_THAT(r.out, HasSubstr("target ascend"));
  // The emitted SuperKernel is Ascend C; its launch descriptor travels in the artifact, not in the source.
  std::string text;
  for (const auto& e : fs::directory_iterator(cache / "src")) text += readFile(e.path());
  EXPECT_THAT(text, HasSubstr("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0)"));
  EXPECT_THAT(text, Not(HasSubstr("entry=sk_ascend_sk1 type=MIX_AIV_1_0")));
}

// A kernel_sync kernel (tests/ascend/data/kernels/sync_sum.cpp: SyncAll twice per launch) on 3 blocks of a
// SuperKernel on 8 vector cores: its SyncAll is a barrier over all of them.
std::string kernelSyncList(bool declareCalls) {
  const std::string src = (sourceRoot() / "tests/ascend/data/kernels/sync_sum.cpp").string();
  return std::string(R"({"format": "superkernel.oplist", "version": 1, "target": "ascend-sim", "arch": "native",
  "kernels": {"add": {"builtin": "add_f32"},
    "ss": {"source": ")") + src + R"(", "entry": "fx_sync_sum", "core_type": "vector", "kernel_sync": true, )" +
         (declareCalls ? R"("sync_all_calls": 2, )" : "") + R"("params": [
      {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "all"},
      {"name": "partial", "kind": "buffer", "dtype": "f32", "access": "readwrite", "partition": "all"},
      {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
      {"name": "n", "kind": "scalar", "dtype": "i64"}]}},
  "buffers": {"a": {"dtype": "f32", "shape": [256], "init": "random"}, "b": {"dtype": "f32", "shape": [256], "init": "ones"},
    "s": {"dtype": "f32", "shape": [256]}, "partial": {"dtype": "f32", "shape": [8]},
    "t": {"dtype": "f32", "shape": [256]}, "u": {"dtype": "f32", "shape": [256]}},
  "ops": [{"name": "add_0", "kernel": "add", "block_dim": 8, "scope": "sk", "args": {"x": "a", "y": "b", "z": "s", "n": 256}},
    {"name": "reduce", "kernel": "ss", "block_dim": 3, "scope": "sk", "args": {"x": "s", "partial": "partial", "y": "t", "n": 256}},
    {"name": "add_1", "kernel": "add", "block_dim": 8, "scope": "sk", "args": {"x": "t", "y": "b", "z": "u", "n": 256}}]})";
}

TEST(AscendCli, KernelSyncWithFeedSyncAllFusedEqualsUnfused) {
  // feed-sync-all=1: the 5 vector cores outside the op's blocks call SyncAll twice at the op.
  TempDir dir, cache;
  std::ofstream(dir / "list.json") << kernelSyncList(true);
  expectIdentical(cache, dir / "list.json", "feed-sync-all=1");
  expectIdentical(cache, dir / "list.json", "feed-sync-all=1:stream-fusion=1:early-start=0:split-mode=1");
}

TEST(AscendCli, KernelSyncWithoutFeedSyncAllIsAClearError) {
  // feed-sync-all=0 (the default): the fused op would hang, so it is bad input (exit 2) that names the option.
  TempDir dir;
  std::ofstream(dir / "list.json") << kernelSyncList(true);
  Spawn s;
  s.argv = {kCompile, dir / "list.json", "--cache-dir", dir / "cache"};
  s.env = ascendEnv();
  Result r = run(s);
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("op reduce syncs its own blocks (kernel_sync)"));
  EXPECT_THAT(r.err, HasSubstr("set feed-sync-all=1"));

  // A kernel_sync kernel that does not say how often it calls SyncAll cannot be fed: exit 2 naming the key.
  std::ofstream(dir / "list.json") << kernelSyncList(false);
  s.argv = {kCompile, dir / "list.json", "--cache-dir", dir / "cache", "--options", "feed-sync-all=1"};
  r = run(s);
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("kernel ss syncs its own blocks (kernel_sync) but does not declare"));
  EXPECT_THAT(r.err, HasSubstr("\"sync_all_calls\": N"));
}

// A kernel with a plain "source" (written for the op list's target, cpu) compiled with --target ascend or
// cuda: one clear bad-input error naming the kernel and "sources" (exit 2), before any compiler runs, not a
// failure inside the other target's compiler (exit 3).
TEST(AscendCli, ACpuSourceForAnotherTargetIsBadInput) {
  TempDir cache;
  for (const char* target : {"ascend", "ascend-sim", "cuda"}) {
    SCOPED_TRACE(target);
    Result r = run({kCompile, dataFile("mismatch.json"), "--target", target, "--cache-dir", cache.path().string()});
    EXPECT_EQ(r.code, 2) << r.all();
    // --plan-only applies the same rule (it plans like Session::compile, without a compiler).
    Result p = run({kCompile, dataFile("mismatch.json"), "--target", target, "--plan-only"});
    EXPECT_EQ(p.code, 2) << p.all();
    EXPECT_THAT(p.err, HasSubstr(std::string("has no source for target ") + target + " (it has: cpu)"));
    EXPECT_THAT(r.err, HasSubstr(std::string("has no source for target ") + target + " (it has: cpu)"));
    EXPECT_THAT(r.err, HasSubstr("\"sources\""));
    EXPECT_THAT(r.all(), Not(HasSubstr("command:")));
  }
}

TEST(AscendCli, AKernelThatTrapsIsARuntimeFailure) {
  // A failing simulated launch (trap() on a core) is exit 4 with the simulator's message, never a pass.
  TempDir dir;
  {
    std::ofstream(dir / "list.json")
        << R"({"format": "superkernel.oplist", "version": 1, "target": "ascend-sim", "arch": "native",
  "kernels": {"bad": {"source": "bad.cpp", "entry": "bad", "core_type": "vector", "params": [
    {"name": "x", "kind": "buffer", "dtype": "f32", "access": "readwrite", "partition": "block"}]}},
  "buffers": {"x": {"dtype": "f32", "shape": [64]}},
  "ops": [{"name": "bad_0", "kernel": "bad", "block_dim": 2, "scope": "sk", "args": {"x": "x"}},
          {"name": "bad_1", "kernel": "bad", "block_dim": 2, "scope": "sk", "args": {"x": "x"}}]})";
    std::ofstream(dir / "bad.cpp") << "#include \"kernel_operator.h\"\n"
                                      "extern \"C\" __global__ __aicore__ void bad(GM_ADDR x) { (void)x; trap(); }\n";
  }
  Spawn s;
  s.argv = {kCompile, dir / "list.json", "--run", "--repeat", "0", "--cache-dir", dir / "cache"};
  s.env = ascendEnv();
  Result r = run(s);
  EXPECT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("trap()"));
}

}  // namespace
}  // namespace sk::tooltest
