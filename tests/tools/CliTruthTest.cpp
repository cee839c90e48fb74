// What sk-compile and sk-cache promise, checked (issue 10, "the CLI and docs
// tell the truth"): --run's timing method is reported, --plan-only never
// needs a compiler, the plan report survives a compile failure, misspelt
// flags and subcommands get a suggestion, write errors carry the system's
// reason, and output paths are not created behind the caller's back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/ToolTestUtil.h"

namespace sk::tooltest {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

TEST(CliTruth, RunJsonHasSamplesBatchesAndMinMax) {
  TempDir cache;
  Result r = run({kCompile, seedList(), "--json", "--run", "--repeat", "3", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const json& run = j["run"];
  EXPECT_EQ(run["repeat"], 3);
  EXPECT_EQ(run["warmups"], 2);
  EXPECT_EQ(run["fused_samples"].size(), 3u);
  EXPECT_EQ(run["unfused_samples"].size(), 3u);
  EXPECT_GE(run["fused_batch"].get<long>(), 1);
  EXPECT_GE(run["unfused_batch"].get<long>(), 1);
  EXPECT_LE(run["fused_min_seconds"].get<double>(), run["fused_seconds"].get<double>());
  EXPECT_GE(run["fused_max_seconds"].get<double>(), run["fused_seconds"].get<double>());
  EXPECT_LE(run["speedup_min"].get<double>(), run["speedup"].get<double>());
  EXPECT_GE(run["speedup_max"].get<double>(), run["speedup"].get<double>());
}

TEST(CliTruth, PlanOnlyRunsNoCompiler) {
  TempDir d;
  // No compiler anywhere: SK_CXX names none and PATH is empty.
  Result r = run({kCompile, seedList(), "--plan-only", "--workers", "2", "--cache-dir", d / "cache"},
                 {{"SK_CXX", std::string("/nonexistent/c++")}, {"PATH", std::string("/nonexistent")}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Fusion: 4 ops -> 1 launch"));
  EXPECT_THAT(r.out, HasSubstr("Plan only: nothing was compiled or run"));
  EXPECT_THAT(r.out, HasSubstr("no compiler used"));
  EXPECT_FALSE(fs::exists(d.path() / "cache")) << "plan-only must not open the cache";
  r = run({kCompile, seedList(), "--plan-only", "--run"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--plan-only"));
}

TEST(CliTruth, PlanReportIsPrintedWhenCompilingFails) {
  TempDir cache;
  Result r = run({kCompile, dataFile("syntax_error.json"), "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 3) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Fusion:"));
  EXPECT_THAT(r.out, HasSubstr("split / reason"));
  r = run({kCompile, dataFile("syntax_error.json"), "--json", "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 3) << r.all();
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["ok"], false);
  EXPECT_TRUE(j.contains("plan")) << r.out;
  EXPECT_EQ(j["error"]["kind"], "compile error");
}

TEST(CliTruth, MisspeltFlagsAndSubcommandsGetASuggestion) {
  Result r = run({kCompile, seedList(), "--rnu"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("did you mean '--run'?"));
  r = run({kCompile, seedList(), "--emit-sorce", "x"});
  EXPECT_THAT(r.err, HasSubstr("did you mean '--emit-source'?"));
  r = run({kCompile, seedList(), "--zzzzzzzz"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, Not(HasSubstr("did you mean")));  // nothing close: no guess
  r = run({kCache, "stast"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("did you mean 'stats'?"));
  r = run({kCache, "--cache-dir", "/tmp", "veryfy"});
  EXPECT_THAT(r.err, HasSubstr("did you mean 'verify'?"));
  r = run({kCache, "gc", "--max-szie", "1G"});
  EXPECT_THAT(r.err, HasSubstr("did you mean '--max-size'?"));
}

TEST(CliTruth, WriteErrorsCarryTheSystemsReason) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--emit-dot", "/dev/full"});
  EXPECT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("No space left on device"));
  writeFile(d.path() / "afile", "x");
  r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--dump", (d.path() / "afile" / "sub").string()});
  EXPECT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("Not a directory"));
}

TEST(CliTruth, OutputPathsAreNotCreatedSilently) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  const fs::path missing = d.path() / "no" / "such";
  for (const char* flag : {"--emit-dot", "--trace"}) {
    Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", flag, (missing / "f").string()});
    EXPECT_EQ(r.code, 4) << flag << ": " << r.all();
    EXPECT_THAT(r.err, HasSubstr("No such file or directory")) << flag;
  }
  for (const char* flag : {"--emit-source", "--dump"}) {
    Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", flag, (missing / "dir").string()});
    EXPECT_EQ(r.code, 4) << flag << ": " << r.all();
    EXPECT_THAT(r.err, HasSubstr("parent directory does not exist")) << flag;
  }
  EXPECT_FALSE(fs::exists(d.path() / "no"));
  // The named directory itself is made when its parent exists.
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--dump", d / "dumps"});
  EXPECT_EQ(r.code, 0) << r.all();
  EXPECT_TRUE(fs::exists(d.path() / "dumps" / "out.bin"));
}

}  // namespace
}  // namespace sk::tooltest
