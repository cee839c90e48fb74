// Session API: compile, run, buffers, errors, trace, Graph.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "session/SessionFixture.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using testing::msg;
using testing::sessionFor;

OpList loadSeed() {
  auto list = loadOpList(fs::path(SK_SOURCE_ROOT) / "examples" / "seed" / "seed.json");
  EXPECT_TRUE(list.ok()) << (list.ok() ? "" : msg(list.error()));
  return list.ok() ? std::move(*list) : OpList{};
}

TEST(Session, SeedFusedEqualsUnfusedAndIsCorrect) {
  Session& s = sessionFor(2);
  OpList list = loadSeed();
  auto fused = s.compile(list);
  ASSERT_TRUE(fused.ok()) << msg(fused.error());
  auto ref = s.compile(list, {.options = "", .fuse = false, .target = ""});
  ASSERT_TRUE(ref.ok()) << msg(ref.error());
  EXPECT_EQ(fused->steps.size(), 1u);
  EXPECT_EQ(ref->steps.size(), 4u);
  EXPECT_GT(fused->plan.variants[0].codeBytes, 0u) << "symbol sizes must reach the plan before codegen";

  auto a = BufferSet::create(list);
  auto b = BufferSet::create(list);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(s.run(*fused, *a).ok());
  Status rs = s.run(*ref, *b);
  ASSERT_TRUE(rs.ok()) << msg(rs.error());
  auto diff = a->compare(*b);
  ASSERT_TRUE(diff.ok());
  EXPECT_FALSE(diff->has_value()) << (*diff)->message();

  // out = x + 4 (y is ones), computed independently here.
  auto init = BufferSet::create(list);
  const float* x = static_cast<const float*>(init->data(static_cast<size_t>(init->find("x"))));
  const float* out = static_cast<const float*>(a->data(static_cast<size_t>(a->find("out"))));
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(out[i], (((x[i] + 1.0f) + 1.0f) + 1.0f) + 1.0f) << i;

  // Running again (epoch 2, no reset pass) gives the same result.
  ASSERT_TRUE(s.run(*fused, *a).ok());
  EXPECT_FALSE((*a->compare(*b)).has_value());
}

TEST(Session, SecondCompileIsACacheHit) {
  Session& s = sessionFor(2);
  OpList list = loadSeed();
  auto first = s.compile(list);
  ASSERT_TRUE(first.ok()) << msg(first.error());
  auto second = s.compile(list);
  ASSERT_TRUE(second.ok()) << msg(second.error());
  EXPECT_EQ(second->stats.superKernelMisses, 0u);
  EXPECT_EQ(second->stats.superKernelHits, 1u);
  EXPECT_EQ(second->stats.objectMisses, 0u);
  EXPECT_EQ(first->steps[0].source.text, second->steps[0].source.text);
}

TEST(Session, OptionsMergeListSessionRequest) {
  auto o = mergeOptions({"early-start=0:preload-code=max", "early-start=2", "profiling=1"});
  ASSERT_TRUE(o.ok()) << msg(o.error());
  EXPECT_EQ(o->earlyStart, 2);
  EXPECT_EQ(o->preloadCode, PreloadCode::Max);
  EXPECT_TRUE(o->profiling);
  auto bad = mergeOptions({"early-start=1", "no-such-key=1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), ErrorKind::BadInput);
  // A refused compile option from the API is refused before any compiler runs, as in a file.
  auto plugin = mergeOptions({"", "compile-options=-fplugin=./evil.so"});
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(plugin.error().message().find("compile-options item \"-fplugin=./evil.so\" is not allowed"),
            std::string::npos)
      << msg(plugin.error());

  Session& s = sessionFor(2);
  OpList list = loadSeed();
  auto c = s.compile(list, {.options = "early-start=banana", .fuse = true, .target = ""});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(c.error().message().find("early-start"), std::string::npos) << c.error().message();
}

// The launch-graph baselines' two refusals (Session::captureGraph, CompileRequest::graphPdl): the PDL variant of a
// fused plan, and a graph of a fused plan's SuperKernel (its sync targets grow with each launch), are BadInput
// naming what to set; a target without launch graphs says so.
TEST(Session, LaunchGraphsNeedAnUnfusedPlanAndATargetThatHasThem) {
  Session& s = sessionFor(2);
  OpList list = loadSeed();
  auto pdlFused = s.compile(list, {.options = "", .fuse = true, .target = "", .graphPdl = true});
  ASSERT_FALSE(pdlFused.ok());
  EXPECT_EQ(pdlFused.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(pdlFused.error().message().find("set fuse = false too"), std::string::npos) << msg(pdlFused.error());

  auto buffers = BufferSet::create(list);
  ASSERT_TRUE(buffers.ok()) << msg(buffers.error());
  auto fused = s.compile(list);
  ASSERT_TRUE(fused.ok()) << msg(fused.error());
  auto g = s.captureGraph(*fused, buffers->pointers(), list.buffers.size(), GraphLaunch::Plain);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(g.error().message().find("is not an unfused launch"), std::string::npos) << msg(g.error());

  auto unfused = s.compile(list, {.options = "", .fuse = false, .target = ""});
  ASSERT_TRUE(unfused.ok()) << msg(unfused.error());
  auto cpu = s.captureGraph(*unfused, buffers->pointers(), list.buffers.size(), GraphLaunch::Plain);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.error().message().find("target cpu has no launch graphs"), std::string::npos) << msg(cpu.error());
  auto wrongCount = s.captureGraph(*unfused, buffers->pointers(), 1, GraphLaunch::Plain);
  ASSERT_FALSE(wrongCount.ok());
  EXPECT_NE(wrongCount.error().message().find("buffer pointers given"), std::string::npos) << msg(wrongCount.error());
}

TEST(Session, UnknownTargetIsBadInput) {
  Session& s = sessionFor(2);
  auto c = s.compile(loadSeed(), {.options = "", .fuse = true, .target = "fpga"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(c.error().message().find("unknown target 'fpga'"), std::string::npos) << c.error().message();
}

TEST(Session, RunChecksBufferCount) {
  Session& s = sessionFor(2);
  OpList list = loadSeed();
  auto fused = s.compile(list);
  ASSERT_TRUE(fused.ok()) << msg(fused.error());
  void* ptrs[2] = {nullptr, nullptr};
  Status st = s.run(*fused, ptrs, 2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("6 buffers"), std::string::npos) << st.error().message();
}

TEST(Session, GeneratedRunRejectsBadCalls) {
  Session& s = sessionFor(2);
  OpList list = loadSeed();
  auto fused = s.compile(list);
  ASSERT_TRUE(fused.ok()) << msg(fused.error());
  CompiledStep& step = fused->steps[0];
  auto bufs = BufferSet::create(list);
  std::vector<void*> ptrs(step.listBuffers.size());
  for (size_t i = 0; i < ptrs.size(); ++i) ptrs[i] = bufs->data(step.listBuffers[i]);
  // The cpu back end's generated entry, called directly.
  auto device = s.device("cpu");
  ASSERT_TRUE(device.ok());
  void* stream = const_cast<sk_services*>(cpuExecutor(**device)->services());
  SuperKernelRunFn run = cpuRunFunction(*step.kernel);
  ASSERT_NE(run, nullptr);
  sk_run_args args{SK_ABI_VERSION, static_cast<uint32_t>(ptrs.size()), ptrs.data()};
  sk_run_args badAbi{SK_ABI_VERSION + 1, args.num_buffers, args.buffers};
  sk_run_args badCount{SK_ABI_VERSION, args.num_buffers - 1, args.buffers};
  EXPECT_EQ(run(step.numCores, stream, &badAbi), kRunBadAbi);
  EXPECT_EQ(run(step.numCores, stream, nullptr), kRunBadAbi);
  EXPECT_EQ(run(step.numCores, stream, &badCount), kRunBadBufferCount);
  EXPECT_EQ(run(step.numCores + 1, stream, &args), kRunBadBlockDim);
  EXPECT_EQ(run(step.numCores, nullptr, &args), kRunBadServices);
  EXPECT_EQ(run(step.numCores, stream, &args), 0);
  EXPECT_NE(describeRunResult(kRunBadBlockDim).find("block_dim"), std::string::npos);
}

TEST(Session, ProfiledRunProducesATrace) {
  Session& s = sessionFor(2);
  OpList list = loadSeed();
  auto plain = s.compile(list);
  ASSERT_TRUE(plain.ok()) << msg(plain.error());
  auto bufs = BufferSet::create(list);
  auto r = s.runProfiled(*plain, *bufs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::BadInput);

  auto prof = s.compile(list, {.options = "profiling=1", .fuse = true, .target = ""});
  ASSERT_TRUE(prof.ok()) << msg(prof.error());
  auto trace = s.runProfiled(*prof, *bufs);
  ASSERT_TRUE(trace.ok()) << msg(trace.error());
  auto j = nlohmann::json::parse(*trace, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << *trace;
  EXPECT_NE(trace->find("add_2"), std::string::npos) << "op names label the slices";
}

TEST(Session, ProgressIsReported) {
  SessionOptions o;
  o.workers = 2;
  o.cacheDir = testing::sharedCacheDir();
  std::vector<std::string> stages;
  o.progress = [&](std::string_view stage, size_t done, size_t total) {
    EXPECT_LE(done, total);
    stages.emplace_back(stage);
  };
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << msg(s.error());
  auto c = (*s)->compile(loadSeed());
  ASSERT_TRUE(c.ok()) << msg(c.error());
  EXPECT_NE(std::find(stages.begin(), stages.end(), "superkernels"), stages.end());
}

TEST(Session, MissingCompilerIsACompileError) {
  SessionOptions o;
  o.compiler = "/nonexistent/clang++";
  o.cacheDir = testing::sharedCacheDir();
  auto s = Session::create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::Compile);
}

// ---- BufferSet -------------------------------------------------------------

OpList bufferList() {
  OpList l;
  auto add = [&](const char* name, DType t, int64_t n, BufferInit::Kind k, std::string file = {}) {
    BufferDecl d;
    d.name = name;
    d.dtype = t;
    d.shape = {n};
    d.init.kind = k;
    d.init.file = std::move(file);
    l.buffers.push_back(d);
  };
  add("z", DType::F32, 5, BufferInit::Kind::Zeros);
  add("o16", DType::F16, 3, BufferInit::Kind::Ones);
  add("obf", DType::BF16, 3, BufferInit::Kind::Ones);
  add("i", DType::I32, 6, BufferInit::Kind::Iota);
  add("r", DType::F32, 1000, BufferInit::Kind::Random);
  add("r2", DType::F32, 1000, BufferInit::Kind::Random);
  add("b", DType::Bool, 4, BufferInit::Kind::Iota);
  add("d", DType::F64, 2, BufferInit::Kind::Ones);
  return l;
}

TEST(BufferSet, InitKinds) {
  OpList l = bufferList();
  auto s = BufferSet::create(l);
  ASSERT_TRUE(s.ok()) << msg(s.error());
  ASSERT_EQ(s->size(), 8u);
  for (size_t i = 0; i < s->size(); ++i)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data(i)) % 64, 0u) << s->name(i);
  EXPECT_EQ(static_cast<const float*>(s->data(0))[4], 0.0f);
  EXPECT_EQ(static_cast<const uint16_t*>(s->data(1))[2], 0x3c00);
  EXPECT_EQ(static_cast<const uint16_t*>(s->data(2))[2], 0x3f80);
  EXPECT_EQ(static_cast<const int32_t*>(s->data(3))[5], 5);
  EXPECT_EQ(static_cast<const uint8_t*>(s->data(6))[3], 1);
  EXPECT_EQ(static_cast<const double*>(s->data(7))[1], 1.0);
  const float* r = static_cast<const float*>(s->data(4));
  const float* r2 = static_cast<const float*>(s->data(5));
  bool allSame = true, inRange = true;
  for (int k = 0; k < 1000; ++k) {
    allSame = allSame && r[k] == r2[k];
    inRange = inRange && r[k] >= -1.0f && r[k] < 1.0f;
  }
  EXPECT_FALSE(allSame) << "seeds differ per buffer name";
  EXPECT_TRUE(inRange);
  // Same list, same contents (what makes fused and unfused comparable).
  auto t = BufferSet::create(l);
  EXPECT_FALSE((*s->compare(*t)).has_value());
}

TEST(BufferSet, CompareReportsFirstDifference) {
  OpList l = bufferList();
  auto a = BufferSet::create(l);
  auto b = a->clone();
  ASSERT_TRUE(b.ok());
  static_cast<float*>(b->data(4))[17] = 2.5f;
  static_cast<int32_t*>(b->data(3))[2] = -9;
  auto d = a->compare(*b);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->buffer, "i");
  EXPECT_EQ((*d)->index, 2u);
  EXPECT_EQ((*d)->expected, "2");
  EXPECT_EQ((*d)->actual, "-9");
  EXPECT_EQ((*d)->differingBuffers, 2u);
  auto only = a->compare(*b, {"r"});
  ASSERT_TRUE(only.ok());
  ASSERT_TRUE(only->has_value());
  EXPECT_EQ((*only)->index, 17u);
  EXPECT_NE((*only)->actual.find("2.5 (0x40200000)"), std::string::npos) << (*only)->actual;
  auto unknown = a->compare(*b, {"nope"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind(), ErrorKind::BadInput);
  EXPECT_EQ(unknown.error().message(), "compare: unknown buffer \"nope\"");
  ASSERT_TRUE(b->copyFrom(*a).ok());
  EXPECT_FALSE((*a->compare(*b)).has_value());
}

TEST(BufferSet, FileInitAndDump) {
  fs::path dir = fs::temp_directory_path() / ("sk-bufset-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "in.bin", std::ios::binary);
    int32_t v[3] = {7, -8, 9};
    f.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  OpList l;
  l.baseDir = dir;
  BufferDecl d;
  d.name = "f";
  d.dtype = DType::I32;
  d.shape = {3};
  d.init.kind = BufferInit::Kind::File;
  d.init.file = "in.bin";
  l.buffers.push_back(d);
  auto s = BufferSet::create(l);
  ASSERT_TRUE(s.ok()) << msg(s.error());
  EXPECT_EQ(static_cast<const int32_t*>(s->data(0))[1], -8);
  ASSERT_TRUE(s->dump(dir / "out").ok());
  std::ifstream back(dir / "out" / "f.bin", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(back)), {});
  ASSERT_EQ(bytes.size(), 12u);
  EXPECT_EQ(std::memcmp(bytes.data(), s->data(0), 12), 0);

  l.buffers[0].shape = {4};  // 16 bytes expected, file has 12
  auto bad = BufferSet::create(l);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(bad.error().message().find("has 12 bytes, the buffer needs 16"), std::string::npos)
      << bad.error().message();
  l.buffers[0].init.file = "missing.bin";
  auto missing = BufferSet::create(l);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::Io);
  EXPECT_NE(missing.error().message().find(".init: cannot open "), std::string::npos) << missing.error().message();
  EXPECT_NE(missing.error().message().find("missing.bin"), std::string::npos) << missing.error().message();
  fs::remove_all(dir);
}

TEST(BufferSet, HalfConversions) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001);  // smallest subnormal
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  for (uint32_t h = 0; h < 0x7c00; ++h) ASSERT_EQ(floatToHalf(halfToFloat(static_cast<uint16_t>(h))), h) << h;
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
}

}  // namespace
}  // namespace sk
