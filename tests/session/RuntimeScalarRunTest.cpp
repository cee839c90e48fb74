// Runtime scalars end to end on cpu: one compile serves every value.
//
// The list: y = x + step[0] (fx_shift, pos read at the call), then step[0] += 1
// (fx_bump), then z = y + step[0] — so inside one launch the second read must
// see the first op's write (a RAW edge on the element), and across launches
// each run advances the position with nothing from the host. A host that
// writes the position between runs works too; a second compile of the same
// list with another initial position is all cache hits.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "session/SessionFixture.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace runtime_scalar_run_test {
using testing::msg;
using testing::sessionDataDir;
using testing::sessionFor;

constexpr int64_t kN = 300;

std::string listJson(const std::string& stepInit) {
  return fmt::format(R"({{"format": "superkernel.oplist", "version": 1,
    "kernels": {{
      "shift": {{"source": "kernels/shift.cpp", "entry": "fx_shift", "params": [
        {{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"}},
        {{"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}},
        {{"name": "n", "kind": "scalar", "dtype": "i64"}},
        {{"name": "pos", "kind": "scalar", "dtype": "i64", "runtime": true}}]}},
      "bump": {{"source": "kernels/bump.cpp", "entry": "fx_bump", "params": [
        {{"name": "s", "kind": "buffer", "dtype": "i64", "access": "readwrite", "partition": "all"}}]}}}},
    "buffers": {{"x": {{"dtype": "f32", "shape": [{0}], "init": "iota"}}, "y": {{"dtype": "f32", "shape": [{0}]}},
                "z": {{"dtype": "f32", "shape": [{0}]}}, "step": {{"dtype": "i64", "shape": [1], "init": "{1}"}}}},
    "ops": [
      {{"name": "first", "kernel": "shift", "block_dim": 5, "scope": "t",
        "args": {{"x": "x", "y": "y", "n": {0}, "pos": {{"from": "step"}}}}}},
      {{"name": "advance", "kernel": "bump", "block_dim": 1, "scope": "t", "args": {{"s": "step"}}}},
      {{"name": "second", "kernel": "shift", "block_dim": 3, "scope": "t",
        "args": {{"x": "y", "y": "z", "n": {0}, "pos": {{"from": "step"}}}}}}]}})",
                     kN, stepInit);
}

OpList parse(const std::string& json) {
  auto l = parseOpList(json, "runtime.json", sessionDataDir());
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : msg(l.error()));
  return l.ok() ? std::move(*l) : OpList{};
}

// After a run that started at position p: y = x + p, z = y + p + 1, step = p + 1.
void expectToken(BufferSet& b, int64_t p, const std::string& what) {
  const float* x = static_cast<const float*>(b.data(static_cast<size_t>(b.find("x"))));
  const float* y = static_cast<const float*>(b.data(static_cast<size_t>(b.find("y"))));
  const float* z = static_cast<const float*>(b.data(static_cast<size_t>(b.find("z"))));
  const int64_t step = *static_cast<const int64_t*>(b.data(static_cast<size_t>(b.find("step"))));
  EXPECT_EQ(step, p + 1) << what;
  for (int64_t i = 0; i < kN; i += 37) {
    EXPECT_EQ(y[i], x[i] + static_cast<float>(p)) << what << " i=" << i;
    EXPECT_EQ(z[i], y[i] + static_cast<float>(p + 1)) << what << " i=" << i;
  }
}

TEST(RuntimeScalarRun, OneCompileServesEveryToken) {
  Session& s = sessionFor(2);
  for (bool fuse : {true, false}) {
    const std::string mode = fuse ? "fused" : "unfused";
    OpList l = parse(listJson("zeros"));
    auto cp = s.compile(l, {.options = "", .fuse = fuse, .target = ""});
    ASSERT_TRUE(cp.ok()) << msg(cp.error());
    if (fuse) {
      EXPECT_EQ(cp->steps.size(), 1u);
    }
    auto bufs = BufferSet::create(l);
    ASSERT_TRUE(bufs.ok());
    // The position advances inside the plan: T runs, nothing from the host.
    for (int64_t t = 0; t < 5; ++t) {
      ASSERT_TRUE(s.run(*cp, *bufs).ok());
      expectToken(*bufs, t, mode + " token " + std::to_string(t));
    }
    // A host that writes the position between runs.
    for (int64_t p : {int64_t{40}, int64_t{7}}) {
      std::memcpy(bufs->data(static_cast<size_t>(bufs->find("step"))), &p, sizeof p);
      ASSERT_TRUE(s.run(*cp, *bufs).ok());
      expectToken(*bufs, p, mode + " host position " + std::to_string(p));
    }
  }
  // Another initial position is another op list with the same code: nothing new is built. The counts are
  // this compile's own (the cache's on-disk counters are shared with the other test processes of the run).
  OpList other = parse(listJson("ones"));
  auto cp = s.compile(other, {.options = "", .fuse = true, .target = ""});
  ASSERT_TRUE(cp.ok()) << msg(cp.error());
  EXPECT_EQ(cp->stats.superKernelHits, 1u);
  auto bufs = BufferSet::create(other);
  ASSERT_TRUE(bufs.ok());
  ASSERT_TRUE(s.run(*cp, *bufs).ok());
  expectToken(*bufs, 1, "initial position 1");
  EXPECT_EQ(cp->stats.superKernelMisses, 0u);
  EXPECT_EQ(cp->stats.objectMisses, 0u);
}

// Removing the RAW edge on the element (the planner's rule under test) would let "second" read the position
// before "advance" wrote it; with 8 runs of skewed block counts the values would differ. The plan must order it.
TEST(RuntimeScalarRun, TheWriterOfTheElementOrdersBeforeTheReader) {
  Session& s = sessionFor(4);
  OpList l = parse(listJson("zeros"));
  auto cp = s.compile(l, {.options = "early-start=2", .fuse = true, .target = ""});
  ASSERT_TRUE(cp.ok()) << msg(cp.error());
  const SuperKernelPlan& sk = cp->plan.steps.at(0);
  bool raw = false;
  for (const Edge& e : sk.edges)
    raw = raw || (sk.ops[e.producer].name == "advance" && sk.ops[e.consumer].name == "second" &&
                  e.buffer == "step" && e.dep == DepKind::RAW);
  EXPECT_TRUE(raw);
  auto bufs = BufferSet::create(l);
  ASSERT_TRUE(bufs.ok());
  for (int64_t t = 0; t < 8; ++t) {
    ASSERT_TRUE(s.run(*cp, *bufs).ok());
    expectToken(*bufs, t, "token " + std::to_string(t));
  }
}

// Cache rows above the position never change a result: the same tokens with the unused rows of both KV caches
// filled with NaN give the same bits as with zeros (decode attention reads rows 0..pos only), fused and unfused.
TEST(RuntimeScalarRun, RowsAboveThePositionDoNotMatter) {
  Session& s = sessionFor(2);
  auto l = loadOpList(std::filesystem::path(SK_SOURCE_ROOT) / "tests/tools/data/decode_loop_tiny.json");
  ASSERT_TRUE(l.ok()) << msg(l.error());
  for (bool fuse : {true, false}) {
    auto cp = s.compile(*l, {.options = "", .fuse = fuse, .target = ""});
    ASSERT_TRUE(cp.ok()) << msg(cp.error());
    auto clean = BufferSet::create(*l);
    ASSERT_TRUE(clean.ok());
    auto poisoned = clean->clone();
    ASSERT_TRUE(poisoned.ok());
    for (const char* cache : {"k_cache", "v_cache"}) {
      const size_t i = static_cast<size_t>(poisoned->find(cache));
      float* rows = static_cast<float*>(poisoned->data(i));
      for (uint64_t e = 0; e < poisoned->elements(i); ++e) rows[e] = std::numeric_limits<float>::quiet_NaN();
    }
    for (int t = 0; t < 4; ++t) {  // the caches hold 4 rows
      ASSERT_TRUE(s.run(*cp, *clean).ok());
      ASSERT_TRUE(s.run(*cp, *poisoned).ok());
      auto diff = clean->compare(*poisoned, {"out", "x", "q_rope", "k_rope", "step"});
      ASSERT_TRUE(diff.ok());
      EXPECT_FALSE(diff->has_value()) << (fuse ? "fused" : "unfused") << " token " << t << ": "
                                      << (*diff)->message();
    }
    const float* out = static_cast<const float*>(clean->data(static_cast<size_t>(clean->find("out"))));
    EXPECT_TRUE(std::isfinite(out[0]) && out[0] != 0.0f) << "the loop computed something";
  }
}

}  // namespace runtime_scalar_run_test
}  // namespace sk
