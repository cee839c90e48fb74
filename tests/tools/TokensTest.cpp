// sk-compile --tokens T: decode loops (common/Tokens.h, docs/CLI.md). A tiny
// loop of builtins (data/decode_loop_tiny.json: rope, KV-cache append and
// decode attention at the runtime position step[0], the output fed back, the
// position advanced; KV caches of 4 rows) and the 61-layer example
// (examples/decode_loop): every token compared fused vs unfused, tokens per
// second, the same compiles for any T, a position past the capacity is exit 4
// naming the op.
#include "ToolTestUtil.h"

namespace sk::tooltest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

json jsonOf(const Result& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.all();
  return j;
}

TEST(SkCompileTokens, EveryTokenIsComparedAndTimed) {
  TempDir cache;
  Result r = run({kCompile, dataFile("decode_loop_tiny.json"), "--tokens", "4", "--repeat", "2", "--workers", "2",
                  "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Tokens: 4 decode steps fused vs unfused from identical buffers, 2 workers"));
  EXPECT_THAT(r.out, HasSubstr("2 samples per side, each 4 consecutive runs from the initial buffers"));
  EXPECT_THAT(r.out, HasSubstr("tokens/s"));
  EXPECT_THAT(r.out, HasSubstr("identical after every token: 8 buffers"));
  EXPECT_THAT(r.out, HasSubstr("compiles"));

  Result j = run({kCompile, dataFile("decode_loop_tiny.json"), "--tokens", "4", "--repeat", "2", "--workers", "2",
                  "--json", "--cache-dir", cache.path().string()});
  ASSERT_EQ(j.code, 0) << j.all();
  const json rep = jsonOf(j);
  const json& run = rep["run"];
  EXPECT_EQ(run["tokens"], 4);
  EXPECT_EQ(run["identical"], true);
  EXPECT_EQ(run["fused_samples"].size(), 2u);
  EXPECT_GT(run["fused_tokens_per_second"].get<double>(), 0);
  EXPECT_GT(run["unfused_tokens_per_second"].get<double>(), 0);
  EXPECT_LE(run["fused_tokens_per_second_min"].get<double>(), run["fused_tokens_per_second"].get<double>());
  EXPECT_EQ(run["compiles"], 0) << "the second process finds everything in the cache";
  // One SuperKernel for the whole token: the runtime values did not split the plan.
  EXPECT_EQ(rep["plan"]["launches_after"], 1);

  // --repeat 0: every token still compared, nothing timed.
  Result z = tooltest::run({kCompile, dataFile("decode_loop_tiny.json"), "--tokens", "4", "--repeat", "0",
                            "--workers", "2", "--cache-dir", cache.path().string()});
  ASSERT_EQ(z.code, 0) << z.all();
  EXPECT_THAT(z.out, HasSubstr("from identical buffers (compared, not timed: --repeat 0)"));
  EXPECT_THAT(z.out, HasSubstr("identical after every token: 8 buffers"));
  EXPECT_THAT(z.out, Not(HasSubstr("tokens/s")));
}

// --run of a list with runtime values is one token from the initial buffers (timing thousands of runs of one
// state would walk the position past the caches' 4 rows).
TEST(SkCompileTokens, RunOfALoopIsOneToken) {
  TempDir cache;
  Result r = run({kCompile, dataFile("decode_loop_tiny.json"), "--run", "--repeat", "2", "--workers", "2",
                  "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("Tokens: 1 decode step fused"));
  EXPECT_THAT(r.out, HasSubstr("note: the op list has runtime values"));
}

// Position 4 of caches of capacity 4: the kernels refuse it (no block writes), and the run fails with exit 4
// naming the op and the token, the --json report included.
TEST(SkCompileTokens, APositionPastTheCapacityIsARuntimeErrorNamingTheOp) {
  TempDir cache;
  Result r = run({kCompile, dataFile("decode_loop_tiny.json"), "--tokens", "5", "--repeat", "1", "--workers", "2",
                  "--json", "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("token 4"));
  EXPECT_THAT(r.err, HasSubstr("out of range"));
  EXPECT_TRUE(r.err.find("append") != std::string::npos || r.err.find("attention") != std::string::npos) << r.err;
  const json rep = jsonOf(r);
  EXPECT_EQ(rep["ok"], false);
  EXPECT_EQ(rep["exit_code"], 4);
}

// The acceptance check: a 64-token run of the 61-layer decode loop compiles exactly what a 1-token run
// compiles (each from an empty cache), and every one of the 64 tokens is bit-identical fused vs unfused.
TEST(SkCompileTokens, SixteenTokensCompileWhatOneTokenCompiles) {
  // One cache: 16 tokens after 1 token compiles nothing more (a position baked into the code would be a miss
  // at every token). 16, not more: each token is also run unfused and compared, which under ASan is slow.
  const std::string list = (sourceRoot() / "examples/decode_loop/decode_loop.json").string();
  TempDir cache;
  for (const char* tokens : {"1", "16"}) {
    Result r = run({kCompile, list, "--tokens", tokens, "--repeat", "0", "--workers", "2", "--json", "--cache-dir",
                    cache.path().string()});
    ASSERT_EQ(r.code, 0) << r.all();
    const json rep = jsonOf(r);
    EXPECT_EQ(rep["run"]["identical"], true) << tokens;
    EXPECT_EQ(rep["run"]["tokens"], std::stoi(tokens));
    EXPECT_EQ(rep["plan"]["launches_after"], 1) << "one SuperKernel per token";
    const uint64_t compiles = rep["run"]["compiles"].get<uint64_t>();
    if (std::string(tokens) == "1")
      EXPECT_GT(compiles, 0u) << "an empty cache compiles";
    else
      EXPECT_EQ(compiles, 0u) << "16 tokens needed code that 1 token did not";
  }
}

// data/loop_mismatch.json: the mismatch fixture (a kernel reading outside its declared partition) in a loop:
// exit 1 naming the token, nothing timed, the --json report says which token.
TEST(SkCompileTokens, AMismatchNamesTheToken) {
  TempDir cache;
  Result r = run({kCompile, dataFile("loop_mismatch.json"), "--tokens", "3", "--workers", "2", "--json",
                  "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("fused and unfused results differ after token 0 of 3"));
  EXPECT_THAT(r.err, HasSubstr("buffer out: element 0"));
  const json rep = jsonOf(r);
  EXPECT_EQ(rep["run"]["mismatch"]["token"], 0);
  EXPECT_EQ(rep["run"]["mismatch"]["buffer"], "out");
  EXPECT_FALSE(rep["run"].contains("fused_tokens_per_second"));
}

TEST(SkCompileTokens, TokensIsRefusedWithPlanOnlyAndOutOfRange) {
  Result r = run({kCompile, dataFile("decode_loop_tiny.json"), "--tokens", "3", "--plan-only"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--tokens"));
  r = run({kCompile, dataFile("decode_loop_tiny.json"), "--tokens", "0"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--tokens"));
}

}  // namespace
}  // namespace sk::tooltest
