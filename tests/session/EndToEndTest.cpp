// End to end: fused output equals unfused output bit for bit.
//
// Two op lists cover the ground: data/scenarios.json (one scope per planner
// scenario: chain, mixed block dims, read-all consumer, in-place, views,
// diamond, two streams with stream-fusion 0 and 1, an unfusible op
// mid-scope, nested scopes, an early-start kernel, a kernel_sync kernel) and
// data/builtins.json (every builtin kernel, chained like a decode layer).
//
// Configurations: early-start {0,1,2} x preload-code {none,per-func,max} x
// workers {1,2,4} as a Latin square (9 runs, every pair of values appears
// together once), which keeps the compile count low while still pairing
// each early-start mode with each preload mode and worker count. The
// unfused reference is computed once per list; all sessions share one cache
// directory, so a second run of this binary compiles nothing.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>

#include "session/SessionFixture.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using testing::msg;
using testing::sessionDataDir;
using testing::sessionFor;

struct Config {
  int earlyStart;
  const char* preload;
  uint32_t workers;
};

std::string configName(const ::testing::TestParamInfo<std::tuple<std::string, Config>>& info) {
  const auto& [file, c] = info.param;
  std::string p = c.preload;
  for (char& ch : p)
    if (ch == '-') ch = '_';
  return file + "_es" + std::to_string(c.earlyStart) + "_" + p + "_w" + std::to_string(c.workers);
}

std::vector<Config> latinSquare() {
  const char* preloads[] = {"none", "per-func", "max"};
  const uint32_t workers[] = {1, 2, 4};
  std::vector<Config> out;
  for (int es = 0; es < 3; ++es)
    for (int p = 0; p < 3; ++p) out.push_back({es, preloads[p], workers[(es + p) % 3]});
  return out;
}

const OpList& list(const std::string& name) {
  static std::map<std::string, OpList> lists;
  auto it = lists.find(name);
  if (it != lists.end()) return it->second;
  auto l = loadOpList(sessionDataDir() / (name + ".json"));
  if (!l) {
    ADD_FAILURE() << msg(l.error());
    std::abort();
  }
  return lists.emplace(name, std::move(*l)).first->second;
}

// The unfused result of a list, computed once (2 workers).
const BufferSet& reference(const std::string& name) {
  static std::map<std::string, BufferSet> refs;
  auto it = refs.find(name);
  if (it != refs.end()) return it->second;
  Session& s = sessionFor(2);
  auto cp = s.compile(list(name), {.options = "", .fuse = false, .target = ""});
  if (!cp) {
    ADD_FAILURE() << msg(cp.error());
    std::abort();
  }
  auto bufs = BufferSet::create(list(name));
  Status st = s.run(*cp, *bufs);
  if (!st) {
    ADD_FAILURE() << msg(st.error());
    std::abort();
  }
  return refs.emplace(name, std::move(*bufs)).first->second;
}

class FusedEqualsUnfused : public ::testing::TestWithParam<std::tuple<std::string, Config>> {};

TEST_P(FusedEqualsUnfused, BitExact) {
  const auto& [name, c] = GetParam();
  const OpList& l = list(name);
  const BufferSet& ref = reference(name);

  // The reference must have computed something, or equality proves nothing.
  auto initial = BufferSet::create(l);
  ASSERT_TRUE(initial.ok());
  auto changed = initial->compare(ref);
  ASSERT_TRUE(changed.ok());
  ASSERT_TRUE(changed->has_value());
  EXPECT_GE((*changed)->differingBuffers, l.buffers.size() / 2) << "most outputs should be written";

  Session& s = sessionFor(c.workers);
  std::string options = fmt::format("early-start={}:preload-code={}", c.earlyStart, c.preload);
  auto cp = s.compile(l, {.options = options, .fuse = true, .target = ""});
  ASSERT_TRUE(cp.ok()) << msg(cp.error());
  EXPECT_GT(cp->plan.report.superKernels, 0u);
  EXPECT_LT(cp->steps.size(), l.ops.size()) << "fusion must reduce the launch count";

  auto bufs = BufferSet::create(l);
  ASSERT_TRUE(bufs.ok());
  Status st = s.run(*cp, *bufs);
  ASSERT_TRUE(st.ok()) << msg(st.error());
  auto diff = ref.compare(*bufs);
  ASSERT_TRUE(diff.ok());
  EXPECT_FALSE(diff->has_value()) << options << " workers=" << c.workers << ": " << (*diff)->message();

  // A second launch of the same shared objects (epoch 2, no reset pass)
  // from the same initial state gives the same bits.
  ASSERT_TRUE(bufs->copyFrom(*initial).ok());
  st = s.run(*cp, *bufs);
  ASSERT_TRUE(st.ok()) << msg(st.error());
  diff = ref.compare(*bufs);
  ASSERT_TRUE(diff.ok());
  EXPECT_FALSE(diff->has_value()) << "second launch: " << (*diff)->message();
}

INSTANTIATE_TEST_SUITE_P(Lists, FusedEqualsUnfused,
                         ::testing::Combine(::testing::Values(std::string("scenarios"), std::string("builtins")),
                                            ::testing::ValuesIn(latinSquare())),
                         configName);

// ---- specific behaviours ---------------------------------------------------

const CompiledStep* stepNamed(const CompiledPlan& cp, std::string_view prefix) {
  for (const CompiledStep& s : cp.steps)
    if (s.name.rfind(prefix, 0) == 0) return &s;
  return nullptr;
}

TEST(EndToEnd, EarlyStartKernelPointsAreHonouredOnlyAtLevel1) {
  Session& s = sessionFor(2);
  for (int es : {1, 2}) {
    auto cp = s.compile(list("scenarios"), {.options = fmt::format("early-start={}", es), .fuse = true, .target = ""});
    ASSERT_TRUE(cp.ok()) << msg(cp.error());
    const CompiledStep* early = stepNamed(*cp, "early");
    ASSERT_NE(early, nullptr);
    bool honoured = early->source.text.find("rt.ignore_kernel_points = 0;") != std::string::npos;
    EXPECT_EQ(honoured, es == 1) << "early-start=" << es;
  }
}

TEST(EndToEnd, PreloadBytesComeFromSymbolSizes) {
  Session& s = sessionFor(2);
  auto cp = s.compile(list("builtins"), {.options = "preload-code=per-func", .fuse = true, .target = ""});
  ASSERT_TRUE(cp.ok()) << msg(cp.error());
  size_t preloads = 0;
  for (const KernelVariant& v : cp->plan.variants) {
    ASSERT_GT(v.codeBytes, 0u) << v.symbol;
    std::string call = fmt::format("&{}), {})", v.symbol, preloadBytes(PreloadCode::PerFunc, v.codeBytes));
    for (const CompiledStep& st : cp->steps)
      if (st.source.text.find(call) != std::string::npos) ++preloads;
  }
  EXPECT_GT(preloads, 0u);
}

OpList parseInline(const std::string& json) {
  auto l = parseOpList(json, "inline.json", sessionDataDir());
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : msg(l.error()));
  return l.ok() ? std::move(*l) : OpList{};
}

std::string ksyncList(int blocks) {
  return fmt::format(R"({{"format": "superkernel.oplist", "version": 1,
    "kernels": {{
      "add": {{"source": "kernels/add.cpp", "entry": "fx_add", "params": [
        {{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"}},
        {{"name": "y", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"}},
        {{"name": "z", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}},
        {{"name": "n", "kind": "scalar", "dtype": "i64"}}]}},
      "ks_sum": {{"source": "kernels/ks_sum.cpp", "entry": "fx_ks_sum", "kernel_sync": true, "params": [
        {{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "all"}},
        {{"name": "partial", "kind": "buffer", "dtype": "f32", "access": "readwrite", "partition": "all"}},
        {{"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}},
        {{"name": "n", "kind": "scalar", "dtype": "i64"}}]}}}},
    "buffers": {{"x": {{"dtype": "f32", "shape": [1000], "init": "random"}},
                 "a": {{"dtype": "f32", "shape": [1000]}}, "p": {{"dtype": "f32", "shape": [{0}]}},
                 "b": {{"dtype": "f32", "shape": [1000]}}}},
    "ops": [
      {{"name": "k_add", "kernel": "add", "block_dim": 4, "scope": "k", "args": {{"x": "x", "y": "x", "z": "a", "n": 1000}}}},
      {{"name": "k_sum", "kernel": "ks_sum", "block_dim": {0}, "scope": "k", "args": {{"x": "a", "partial": "p", "y": "b", "n": 1000}}}}
    ]}})",
                     blocks);
}

TEST(EndToEnd, KernelSyncWithAllBlocksAtOnce) {
  Session& s = sessionFor(4);
  OpList l = parseInline(ksyncList(4));
  auto fused = s.compile(l);
  ASSERT_TRUE(fused.ok()) << msg(fused.error());
  auto ref = s.compile(l, {.options = "", .fuse = false, .target = ""});
  ASSERT_TRUE(ref.ok()) << msg(ref.error());
  auto a = BufferSet::create(l);
  auto b = BufferSet::create(l);
  for (int i = 0; i < 3; ++i) {  // repeated launches exercise the per-launch sync base
    ASSERT_TRUE(s.run(*fused, *a).ok());
    ASSERT_TRUE(s.run(*ref, *b).ok());
  }
  auto diff = a->compare(*b);
  ASSERT_TRUE(diff.ok());
  EXPECT_FALSE(diff->has_value()) << (*diff)->message();
  // Recompute from the input x alone (the kernels' own buffers could be wrong alike on both sides): a = x + x,
  // b = a + total, total the sum of the 4 per-block partial sums (sk_block_range's slices of 250), summed in the
  // kernels' order so that the float results are exact.
  auto named = [&](const char* name) {
    const int i = a->find(name);
    EXPECT_GE(i, 0) << name;
    return static_cast<const float*>(a->data(static_cast<size_t>(i < 0 ? 0 : i)));
  };
  const float* xv = named("x");
  const float* av = named("a");
  const float* bv = named("b");
  std::vector<float> expectA(1000);
  for (int i = 0; i < 1000; ++i) expectA[i] = xv[i] + xv[i];
  float total = 0.0f;
  for (int blk = 0; blk < 4; ++blk) {
    float partial = 0.0f;
    for (int i = blk * 250; i < (blk + 1) * 250; ++i) partial += expectA[i];
    total += partial;
  }
  ASSERT_NE(total, 0.0f) << "random x: a zero total would not tell b from a";
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(av[i], expectA[i]) << "a[" << i << "]";
    ASSERT_EQ(bv[i], expectA[i] + total) << "b[" << i << "]";
  }
}

TEST(EndToEnd, KernelSyncWiderThanTheWorkersIsAnErrorNotAHang) {
  Session& s = sessionFor(2);
  OpList l = parseInline(ksyncList(4));
  auto cp = s.compile(l);
  ASSERT_FALSE(cp.ok());
  EXPECT_EQ(cp.error().kind(), ErrorKind::BadInput) << msg(cp.error());
  EXPECT_NE(cp.error().message().find("ks_sum"), std::string::npos) << msg(cp.error());
  EXPECT_NE(cp.error().message().find("2 workers"), std::string::npos) << msg(cp.error());
}

std::string slowList(const char* kernel, const char* source, const char* entry) {
  return fmt::format(R"({{"format": "superkernel.oplist", "version": 1,
    "kernels": {{
      "{0}": {{"source": "{1}", "entry": "{2}", "params": [
        {{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"}},
        {{"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}},
        {{"name": "n", "kind": "scalar", "dtype": "i64"}}]}},
      "gather": {{"source": "kernels/gather.cpp", "entry": "fx_gather", "params": [
        {{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "all"}},
        {{"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}},
        {{"name": "n", "kind": "scalar", "dtype": "i64"}}]}}}},
    "buffers": {{"x": {{"dtype": "f32", "shape": [256], "init": "random"}},
                 "a": {{"dtype": "f32", "shape": [256]}}, "b": {{"dtype": "f32", "shape": [256]}}}},
    "ops": [
      {{"name": "producer", "kernel": "{0}", "block_dim": 2, "scope": "t", "args": {{"x": "x", "y": "a", "n": 256}}}},
      {{"name": "consumer", "kernel": "gather", "block_dim": 2, "scope": "t", "args": {{"x": "a", "y": "b", "n": 256}}}}
    ]}})",
                     kernel, source, entry);
}

TEST(EndToEnd, WaitTimeoutIsARuntimeError) {
  SessionOptions o;
  o.workers = 2;
  o.waitTimeoutMs = 200;
  o.cacheDir = testing::sharedCacheDir();
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << msg(s.error());
  OpList l = parseInline(slowList("slow", "kernels/spin.cpp", "fx_slow"));
  auto cp = (*s)->compile(l);
  ASSERT_TRUE(cp.ok()) << msg(cp.error());
  auto bufs = BufferSet::create(l);
  Status st = (*s)->run(*cp, *bufs);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), ErrorKind::Runtime);
  EXPECT_NE(st.error().message().find("while running SuperKernel t"), std::string::npos) << msg(st.error());
  EXPECT_NE(st.error().message().find("consumer"), std::string::npos) << "names what it waited for: "
                                                                       << msg(st.error());
}

TEST(EndToEnd, KernelReportedErrorIsARuntimeError) {
  Session& s = sessionFor(2);
  OpList l = parseInline(R"({"format": "superkernel.oplist", "version": 1,
    "kernels": {"fail": {"source": "kernels/fail.cpp", "entry": "fx_fail", "params": [
        {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}]}},
    "buffers": {"y": {"dtype": "f32", "shape": [2]}},
    "ops": [{"name": "failing", "kernel": "fail", "block_dim": 2, "scope": "f", "args": {"y": "y"}}]})");
  auto cp = s.compile(l);
  ASSERT_TRUE(cp.ok()) << msg(cp.error());
  auto bufs = BufferSet::create(l);
  Status st = s.run(*cp, *bufs);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), ErrorKind::Runtime);
  EXPECT_NE(st.error().message().find("block 1 refuses"), std::string::npos) << msg(st.error());
}

TEST(EndToEnd, GraphRunsUnscopedLaunchesNowAndScopedOnesFused) {
  Session& s = sessionFor(2);
  Graph g;
  g.setBaseDir(sessionDataDir());
  KernelDecl add;
  add.name = "add";
  add.source = "kernels/add.cpp";
  add.entry = "fx_add";
  auto P = [](const char* n, Access a) {
    ParamDecl p;
    p.name = n;
    p.kind = ParamKind::Buffer;
    p.dtype = DType::F32;
    p.access = a;
    p.partition = Partition::Block;
    return p;
  };
  ParamDecl n;
  n.name = "n";
  n.kind = ParamKind::Scalar;
  n.dtype = DType::I64;
  add.params = {P("x", Access::Read), P("y", Access::Read), P("z", Access::Write), n};
  ASSERT_TRUE(g.addKernel(add).ok());
  std::vector<float> x(512, 1.0f), y(512, 2.0f), t(512, 0.0f), u(512, 0.0f);
  ASSERT_TRUE(g.addBuffer("x", DType::F32, {512}, x.data()).ok());
  ASSERT_TRUE(g.addBuffer("y", DType::F32, {512}, y.data()).ok());
  ASSERT_TRUE(g.addBuffer("t", DType::F32, {512}, t.data()).ok());
  ASSERT_TRUE(g.addBuffer("u", DType::F32, {512}, u.data()).ok());
  s.attach(g);
  // Unscoped: runs immediately.
  Status st = g.launch({.name = "now", .kernel = "add", .blockDim = 4, .stream = 0,
                        .args = {{"x", arg("x")}, {"y", arg("y")}, {"z", arg("t")}, {"n", arg(int64_t{512})}},
                        .macros = {}, .fusible = true});
  ASSERT_TRUE(st.ok()) << msg(st.error());
  EXPECT_EQ(t[511], 3.0f);
  {
    Scope outer(g, "sk");
    ASSERT_TRUE(g.launch({.name = "f1", .kernel = "add", .blockDim = 4, .stream = 0,
                          .args = {{"x", arg("t")}, {"y", arg("y")}, {"z", arg("u")}, {"n", arg(int64_t{512})}},
                          .macros = {}, .fusible = true})
                    .ok());
    {
      Scope inner(g, "sk_inner");
      ASSERT_TRUE(g.launch({.name = "f2", .kernel = "add", .blockDim = 2, .stream = 0,
                            .args = {{"x", arg("u")}, {"y", arg("y")}, {"z", arg("t")}, {"n", arg(int64_t{512})}},
                            .macros = {}, .fusible = true})
                      .ok());
    }
  }
  EXPECT_EQ(u[0], 0.0f) << "scoped launches wait for compile + run";
  auto cp = s.compile(g);
  ASSERT_TRUE(cp.ok()) << msg(cp.error());
  EXPECT_EQ(cp->list.ops.size(), 2u) << "the immediate launch is not compiled again";
  st = s.run(*cp, g.hostPointers().data(), g.hostPointers().size());
  ASSERT_TRUE(st.ok()) << msg(st.error());
  EXPECT_EQ(u[100], 5.0f);
  EXPECT_EQ(t[100], 7.0f);
}

// A plain "source" belongs to the list's target: compiled for another target
// (CompileRequest::target) the kernel has no source there, one bad-input
// error naming it and "sources", before any compiler runs.
TEST(EndToEnd, PlainSourceForAnotherTargetIsBadInput) {
  Session& s = sessionFor(2);
  auto cp = s.compile(list("scenarios"), {.options = "", .fuse = true, .target = "ascend-sim"});
  ASSERT_FALSE(cp.ok());
  EXPECT_EQ(cp.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(cp.error().message().find("has no source for target ascend-sim (it has: cpu); declare one with "
                                      "\"sources\": {\"ascend\": \"<file>\"}"),
            std::string::npos)
      << msg(cp.error());
  // The same list for its own target still compiles.
  EXPECT_TRUE(s.compile(list("scenarios"), {.options = "", .fuse = true, .target = "cpu"}).ok());
}

}  // namespace
}  // namespace sk
