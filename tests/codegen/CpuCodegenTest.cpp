// cpu emitter: golden files for hand-made plans (and for planned op lists),
// properties of the generated text, error cases, and a syntax check of every
// golden with the real compiler.
//
// Goldens live in tests/codegen/golden/ and are only ever rewritten by
// scripts/regen-goldens.sh (which sets SK_REGEN_GOLDENS=1); a normal run that
// finds a difference fails and prints the first differing line.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codegen/TestPlans.h"
#include "GoldenFile.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Process.h"
#include "superkernel/support/Paths.h"
#include "superkernel/target/Targets.h"
#include "superkernel/target/cpu/Cpu.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using namespace sk::testplans;

fs::path goldenDir() { return fs::path(SK_SOURCE_ROOT) / "tests" / "codegen" / "golden"; }

std::shared_ptr<const Emitter> cpu() {
  auto t = makeEmitter("cpu");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message());
  return t.ok() ? *t : nullptr;
}

GeneratedSource emitOk(const FusionPlan& plan, size_t step = 0) {
  auto t = cpu();
  if (!t) return {};
  auto src = t->emit(plan, step);
  EXPECT_TRUE(src.ok()) << (src.ok() ? "" : src.error().message());
  return src.ok() ? *src : GeneratedSource{};
}

// Compare `text` with golden/<name> (tests/GoldenFile.h).
void checkGolden(const std::string& name, const std::string& text) {
  sktest::checkGoldenFile(goldenDir(), name, text, "scripts/regen-goldens.sh");
}

TEST(CpuCodegen, GoldenSeedExample) {
  auto src = emitOk(seedPlan());
  checkGolden("seed_sk1.cpp", src.text);
  EXPECT_EQ(src.fileName, "sk1.cpp");
  EXPECT_EQ(src.language, "c++");
  EXPECT_EQ(src.variants, std::vector<uint32_t>{0});
}

TEST(CpuCodegen, GoldenSyncKinds) { checkGolden("sync_kinds.cpp", emitOk(syncKindsPlan()).text); }
TEST(CpuCodegen, GoldenTwoStreams) { checkGolden("two_streams.cpp", emitOk(twoStreamsPlan()).text); }
TEST(CpuCodegen, GoldenUnfusedOp) { checkGolden("unfused_op.cpp", emitOk(unfusedPlan()).text); }
TEST(CpuCodegen, GoldenRuntimeScalar) { checkGolden("runtime_scalar.cpp", emitOk(runtimeScalarPlan()).text); }

// A runtime scalar is read from the step's buffer array at the call, never printed as its value: the text
// (the cache key) is the same whatever the buffer holds.
TEST(CpuCodegen, RuntimeScalarIsReadAtTheCall) {
  const std::string t = emitOk(runtimeScalarPlan()).text;
  // The queue passes the element's address; the helper reads it at the call (after the op's waits).
  EXPECT_NE(t.find("static_cast<float*>(env->buf[2]), static_cast<const int64_t*>(env->buf[4]) + 1);  // add_0"),
            std::string::npos);
  EXPECT_NE(t.find("void sk_plain_add_kernel__v3f1c2a9b0d4e_r3(sk_env* env, uint32_t c, uint32_t blocks, "
                   "uint32_t cores, uint32_t op, const float* a0, const float* a1, float* a2, const int64_t* a3)"),
            std::string::npos);
  EXPECT_NE(t.find("add_kernel__v3f1c2a9b0d4e(&ctx, a0, a1, a2, *a3);"), std::string::npos);
  EXPECT_NE(t.find("static_cast<float*>(env->buf[3]), INT64_C(4096))"), std::string::npos);
  EXPECT_EQ(t.find("INT64_C(0)"), std::string::npos) << "the bound literal of a runtime scalar must not be printed";
}

TEST(CpuCodegen, SeedIsStraightLineWithLocalEdgesOnly) {
  std::string t = emitOk(seedPlan()).text;
  // Local edges need no synchronization at all: no counters, flags, barriers, waits.
  EXPECT_EQ(t.find("sk_wait_ge"), std::string::npos);
  EXPECT_EQ(t.find("sk_counter sk_"), std::string::npos);
  EXPECT_EQ(t.find("sk_barrier("), std::string::npos);
  // The queue: one call per op of the kernel's plain helper over this core's blocks of 40 (4 cores), with
  // literal counts and the op's arguments: an op with nothing to wait for or signal has no descriptor and no
  // call thunk, and the generic sk_op is not emitted at all. One helper for the four ops of one variant.
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = t.find(what); p != std::string::npos; p = t.find(what, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("void sk_plain_add_kernel__v3f1c2a9b0d4e(sk_env* env"), 1u);
  EXPECT_EQ(count("  sk_plain_add_kernel__v3f1c2a9b0d4e(env, c, 40u, 4u, "), 4u);
  EXPECT_EQ(count("add_kernel__v3f1c2a9b0d4e(&ctx, a0, a1, a2, a3);"), 1u);
  EXPECT_NE(t.find("for (uint32_t b = c; b < blocks; b += cores)"), std::string::npos);
  EXPECT_EQ(t.find("sk_call_op"), std::string::npos);
  EXPECT_EQ(t.find("const sk_op_desc sk_op"), std::string::npos);
  EXPECT_EQ(t.find("int sk_op("), std::string::npos);
  EXPECT_NE(t.find("env.plain_rt = sk_block_rt{env.s, nullptr, nullptr, nullptr, &env, core, 1, 1, 1, 0, 0};"),
            std::string::npos);
  // Only what is used: no wait/signal/kernel_sync/barrier/preload helpers.
  EXPECT_EQ(t.find("sk_op_wait"), std::string::npos);
  EXPECT_EQ(t.find("sk_op_signal"), std::string::npos);
  EXPECT_EQ(t.find("sk_op_ksync"), std::string::npos);
  EXPECT_EQ(t.find("rt.ignore_kernel_points = 0;"), std::string::npos) << "no early-start op: points always ignored";
  EXPECT_EQ(t.find("sk_barrier_wait"), std::string::npos);
  EXPECT_EQ(t.find("sk_preload("), std::string::npos);
  EXPECT_NE(t.find("  sk_plain_add_kernel__v3f1c2a9b0d4e(env, c, 40u, 4u, 1, static_cast<const float*>(env->buf[2]), "
                   "static_cast<const float*>(env->buf[1]), static_cast<float*>(env->buf[3]), INT64_C(4096));  // add_1\n"),
            std::string::npos);
  EXPECT_NE(t.find("__attribute__((aligned(512)))"), std::string::npos);
  EXPECT_NE(t.find("extern \"C\" __attribute__((visibility(\"default\")))"), std::string::npos);
}

TEST(CpuCodegen, SyncKindsMapToPrimitives) {
  FusionPlan plan = syncKindsPlan();
  std::string t = emitOk(plan).text;
  // Flag table for 8 -> 4 blocks, and one wait for the duplicated edge pair.
  EXPECT_NE(t.find("{0, 1}, {2, 3}, {4, 5}, {6, 7}"), std::string::npos);
  EXPECT_EQ(t.find("sk_fr1"), std::string::npos) << "the WAR duplicate must not add a second table";
  // Counter target = producer blocks x epoch.
  EXPECT_NE(t.find("{SK_COUNTER, &sk_done[0], 4, nullptr, \"gather_c <- scale_b (counter, RAW on t2)\"},"),
            std::string::npos);
  EXPECT_NE(t.find("rc = sk_wait_ge(s, w.c, uint64_t{w.blocks} * e, w.what);"), std::string::npos);
  EXPECT_NE(t.find("{SK_FLAG_RANGE, &sk_flags[0], 0, sk_fr0, \"scale_b <- add_a (flag, RAW on t1)\"},"),
            std::string::npos);
  // Data preload before an op that waits, of the inputs no op of the step writes, from this core's first block:
  // gather_c's idx (buffer 4, 256 i32 per block), add_e's y (buffer 1, 128 f32 per block); never t1, t2 or t3,
  // which ops of the step write.
  EXPECT_NE(t.find("  if (c < 4u) sk_preload_data(env->buf[4], 0u + uint64_t{c} * 1024u, 1024u);\n"
                   "  if (sk_op_gather_kernel__v1234567890ab(env, c, &sk_op2, "),
            std::string::npos);
  EXPECT_NE(t.find("  if (c < 8u) sk_preload_data(env->buf[1], 0u + uint64_t{c} * 512u, 512u);\n"
                   "  if (sk_op_add_kernel__v3f1c2a9b0d4e(env, c, &sk_op4, "),
            std::string::npos);
  for (const char* written : {"env->buf[2]", "env->buf[3]", "env->buf[5]"})
    EXPECT_EQ(t.find(std::string("sk_preload_data(") + written), std::string::npos) << written;
  // An input declared "all" gets the same per-core slice: core c prefetches block c's slice by the "block"
  // rule (what a row-split kernel such as a gemv reads of its weights), not the view's start on every core.
  {
    FusionPlan all = syncKindsPlan();
    all.steps[0].ops[4].args[1].partition = Partition::All;
    const std::string u = emitOk(all).text;
    EXPECT_NE(u.find("  if (c < 8u) sk_preload_data(env->buf[1], 0u + uint64_t{c} * 512u, 512u);\n"), std::string::npos);
    EXPECT_EQ(u.find("sk_preload_data(env->buf[1], 0u, "), std::string::npos);
  }
  // preload-data=none: no data preload anywhere (and no helper for it); the rest unchanged.
  {
    FusionPlan none = syncKindsPlan();
    for (SuperKernelPlan& step : none.steps) step.options.preloadData = PreloadData::None;
    const std::string u = emitOk(none).text;
    EXPECT_EQ(u.find("sk_preload_data"), std::string::npos);
    EXPECT_NE(u.find("rc = sk_wait_ge(s, w.c, uint64_t{w.blocks} * e, w.what);"), std::string::npos);
  }
  // Barrier: participants = queue cores; k-th of 1 per launch. Split: the core arrives, then issues its
  // preloads, then waits, so the prefetches overlap the wait instead of delaying the arrival.
  const size_t arrive = t.find("  sk_counter_arrive(env->s, &sk_bar[0]);\n");
  const size_t wait = t.find("  if (sk_barrier_wait(env, &sk_bar[0], 4, (e - 1) * 1 + 1, 3, \"barrier before norm_d\")) return;\n"
                             "  if (sk_op_norm_kernel__vffeeddccbbaa(env, c, &sk_op3, static_cast<float*>(env->buf[5]))) return;  // norm_d");
  ASSERT_NE(arrive, std::string::npos) << t;
  ASSERT_NE(wait, std::string::npos) << t;
  EXPECT_LT(arrive, wait);
  EXPECT_EQ(t.find("sk_counter_arrive(env->s, &sk_bar[0]);", arrive + 3), std::string::npos) << "one barrier";
  // Each op is one descriptor: blocks, queue cores, start mode, waits, what it signals; the early-start op
  // waits after the call (sk_op: unless the kernel waited itself).
  EXPECT_NE(t.find("const sk_op_desc sk_op0 = {0, 8, 4, SK_PLAIN, 0, nullptr,\n"
                   "                           /*flags*/ &sk_flags[0], /*done*/ nullptr, /*kernel_sync*/ nullptr"),
            std::string::npos);
  EXPECT_NE(t.find("const sk_op_desc sk_op1 = {1, 4, 4, SK_PLAIN, 1, sk_waits_op1,\n"
                   "                           /*flags*/ nullptr, /*done*/ &sk_done[0],"),
            std::string::npos);
  EXPECT_NE(t.find("const sk_op_desc sk_op2 = {2, 4, 4, SK_EARLY, 1, sk_waits_op2,"), std::string::npos);
  EXPECT_NE(t.find("if (waits && early && !rt.waited) {"), std::string::npos);
  EXPECT_NE(t.find("rt.ignore_kernel_points = 0;"), std::string::npos);
  // kernel_sync through sk_op_sync with the launch base.
  EXPECT_NE(t.find("/*kernel_sync*/ &sk_ksync[0], &sk_ksync_base[0], \"norm_d: sk_kernel_sync\"}"), std::string::npos);
  EXPECT_NE(t.find("sk_op_sync(env->s, d->ksync, d->blocks, *d->ksync_base, &rt->sync_count, d->ksync_what)"),
            std::string::npos);
  // Scalars: float/double exact hexfloat, int32 min, u64, bool, i8.
  EXPECT_NE(t.find("0x1.99999ap-4f, -0x1.5555555555555p-2, (-2147483647 - 1), UINT64_C(123456789012345), true, "
                   "static_cast<int8_t>(-5)"),
            std::string::npos);
  // View offset and profiling.
  EXPECT_NE(t.find("static_cast<float*>(env->buf[6]) + 1024"), std::string::npos);
  EXPECT_NE(t.find("SK_PROF_OP_BEGIN"), std::string::npos);
  EXPECT_NE(t.find("SK_PROF_WAIT_BEGIN"), std::string::npos);
  // Preload bytes: 5000 -> 6144 (2 KiB granules), 40000 -> 16 KiB cap, 300 -> 2048.
  EXPECT_NE(t.find("&scale_kernel__v00aa11bb22cc), 6144"), std::string::npos);
  EXPECT_NE(t.find("&norm_kernel__vffeeddccbbaa), 16384"), std::string::npos);
  EXPECT_NE(t.find("&add_kernel__v3f1c2a9b0d4e), 2048"), std::string::npos);
  // func-align=0: no alignment attributes.
  EXPECT_EQ(t.find("aligned("), std::string::npos);

  plan.steps[0].options.preloadCode = PreloadCode::Max;
  std::string tmax = emitOk(plan).text;
  EXPECT_NE(tmax.find("&scale_kernel__v00aa11bb22cc), 16384"), std::string::npos);
  plan.steps[0].options.preloadCode = PreloadCode::None;
  EXPECT_EQ(emitOk(plan).text.find("sk_preload("), std::string::npos);
}

TEST(CpuCodegen, TwoStreamsDispatchCoresToQueues) {
  std::string t = emitOk(twoStreamsPlan()).text;
  EXPECT_NE(t.find("if (core < 2) return sk_queue0(&env, core - 0);"), std::string::npos);
  EXPECT_NE(t.find("if (core >= 2 && core < 4) return sk_queue1(&env, core - 2);"), std::string::npos);
  // Identity flag ranges need no table.
  EXPECT_EQ(t.find("sk_fr0"), std::string::npos);
  EXPECT_NE(t.find("{SK_FLAG, &sk_flags[0], 0, nullptr, "), std::string::npos);
  EXPECT_NE(t.find("rc = sk_wait_ge(s, &w.c[b], e, w.what);"), std::string::npos);
  // Event edge: a counter wait.
  EXPECT_NE(t.find("{SK_COUNTER, &sk_done[0], 4, nullptr, "), std::string::npos);
  // Ops of queue 1 carry its 2 cores.
  EXPECT_NE(t.find("const sk_op_desc sk_op2 = {2, 4, 2, SK_PLAIN,"), std::string::npos);
  EXPECT_EQ(t.find("sk_preload("), std::string::npos);
  // Each queue calls its own ops only.
  EXPECT_NE(t.find("void sk_queue1(sk_env* env, uint32_t c) {"), std::string::npos);
}

// A long SuperKernel (the 61-layer decode stack is 1,525 ops in one) must
// not become one giant function: the optimizer is superlinear in function
// size. Every op is a few short functions of its own and one line of its
// queue; the text grows linearly with a small constant.
TEST(CpuCodegen, LongChainStaysLinear) {
  constexpr uint32_t kOps = 1200;
  FusionPlan plan;
  plan.variants.push_back(addVariant());
  SuperKernelPlan sk;
  sk.name = "long";
  sk.fused = true;
  sk.numCores = 2;
  sk.options.profiling = true;
  for (uint32_t i = 0; i <= kOps; ++i)
    sk.buffers.push_back(planBuf(("t" + std::to_string(i)).c_str(), DType::F32, 64, i));
  Queue q;
  q.numCores = 2;
  for (uint32_t i = 0; i < kOps; ++i) {
    sk.ops.push_back(op(i, "op", 0, 2, 0, addArgs(plan.variants[0], static_cast<int>(i), 0, static_cast<int>(i + 1), 64)));
    sk.ops.back().preloadVariant = 0;
    sk.ops.back().earlyStart = (i % 3 == 1);
    sk.ops.back().barrierBefore = (i % 7 == 6);
    q.ops.push_back(i);
    if (i == 0) continue;
    SyncKind kind = sk.ops.back().barrierBefore ? SyncKind::Barrier : (i % 2 ? SyncKind::Counter : SyncKind::Flag);
    sk.edges.push_back(edge(i - 1, i, DepKind::RAW, kind, "t", {{0, 1}, {0, 1}}));
  }
  sk.queues.push_back(q);
  plan.steps.push_back(std::move(sk));
  std::string t = emitOk(plan).text;
  size_t lines = static_cast<size_t>(std::count(t.begin(), t.end(), '\n'));
  EXPECT_LT(lines, 300 + 15 * size_t{kOps}) << "lines per op grew";
  // The queue is one helper call per op (plus barriers, code preloads and the data preload of each waiting
  // op's one input no op writes: buffer 0), nothing else; one variant, so one helper.
  size_t begin = t.find("void sk_queue0(sk_env* env, uint32_t c) {");
  ASSERT_NE(begin, std::string::npos);
  size_t end = t.find("\n}\n", begin);
  ASSERT_NE(end, std::string::npos);
  std::string queue = t.substr(begin, end - begin);
  size_t opCalls = 0;
  const std::string call = "if (sk_op_add_kernel__v3f1c2a9b0d4e(env, c, ";
  for (size_t p = queue.find(call); p != std::string::npos; p = queue.find(call, p + 1)) ++opCalls;
  EXPECT_EQ(opCalls, size_t{kOps});
  EXPECT_EQ(t.find("int sk_op_add_kernel__v3f1c2a9b0d4e("), t.rfind("int sk_op_add_kernel__v3f1c2a9b0d4e("));
  EXPECT_LT(static_cast<size_t>(std::count(queue.begin(), queue.end(), '\n')), 4 * size_t{kOps} + 5);
  // The shared block loop exists once.
  EXPECT_EQ(t.find("for (uint32_t b = c; b < blocks; b += d->cores)"),
            t.rfind("for (uint32_t b = c; b < blocks; b += d->cores)"));
  EXPECT_NE(t.find("for (uint32_t b = c; b < blocks; b += d->cores)"), std::string::npos);
  // No per-op function at all.
  EXPECT_EQ(t.find("sk_call_op"), std::string::npos);
  EXPECT_EQ(t.find("sk_wait_op"), std::string::npos);
  EXPECT_EQ(t.find("sk_signal_op"), std::string::npos);
}

TEST(CpuCodegen, OutputIsDeterministic) {
  auto t = cpu();
  ASSERT_TRUE(t);
  for (const FusionPlan& plan : {seedPlan(), syncKindsPlan(), twoStreamsPlan()}) {
    auto a = t->emit(plan, 0);
    auto b = t->emit(plan, 0);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->text, b->text);
    EXPECT_EQ(a->manifest, b->manifest);
  }
}

TEST(CpuCodegen, ManifestDescribesBuffersOpsAndCores) {
  auto src = emitOk(syncKindsPlan());
  auto m = nlohmann::json::parse(src.manifest);
  EXPECT_EQ(m["format"], "superkernel.manifest");
  EXPECT_EQ(m["num_cores"], 4);
  ASSERT_EQ(m["buffers"].size(), 7u);
  EXPECT_EQ(m["buffers"][4]["name"], "idx");
  EXPECT_EQ(m["buffers"][4]["dtype"], "i32");
  EXPECT_EQ(m["buffers"][6]["elements"], 2048);
  ASSERT_EQ(m["ops"].size(), 5u);
  EXPECT_EQ(m["ops"][3]["symbol"], "norm_kernel__vffeeddccbbaa");
  EXPECT_EQ(m["variants"].size(), 4u);
  EXPECT_EQ(m["options"], syncKindsPlan().steps[0].options.canonical());
}

TEST(CpuCodegen, PreloadBytes) {
  EXPECT_EQ(preloadBytes(PreloadCode::None, 5000), 0u);
  EXPECT_EQ(preloadBytes(PreloadCode::Max, 1), 16384u);
  EXPECT_EQ(preloadBytes(PreloadCode::PerFunc, 0), 2048u);
  EXPECT_EQ(preloadBytes(PreloadCode::PerFunc, 1), 2048u);
  EXPECT_EQ(preloadBytes(PreloadCode::PerFunc, 2048), 2048u);
  EXPECT_EQ(preloadBytes(PreloadCode::PerFunc, 2049), 4096u);
  EXPECT_EQ(preloadBytes(PreloadCode::PerFunc, 16385), 16384u);
}

TEST(CpuCodegen, ScalarLiterals) {
  auto lit = [](ScalarValue v, DType t) {
    auto r = cScalarLiteral(v, t);
    return r.ok() ? *r : "error: " + r.error().message();
  };
  EXPECT_EQ(lit(int64_t{4096}, DType::I64), "INT64_C(4096)");
  EXPECT_EQ(lit(int64_t{INT64_MIN}, DType::I64), "(-INT64_C(9223372036854775807) - 1)");
  EXPECT_EQ(lit(int64_t{-7}, DType::I32), "-7");
  EXPECT_EQ(lit(int64_t{7}, DType::U32), "7u");
  EXPECT_EQ(lit(int64_t{0}, DType::Bool), "false");
  EXPECT_EQ(lit(int64_t{200}, DType::U8), "static_cast<uint8_t>(200)");
  EXPECT_EQ(lit(1.5, DType::F64), "0x1.8p+0");
  EXPECT_EQ(lit(int64_t{3}, DType::F32), "0x1.8p+1f");
  EXPECT_EQ(lit(0.1, DType::F64), "0x1.999999999999ap-4");
  EXPECT_EQ(lit(4.0, DType::I64), "INT64_C(4)");   // an integral JSON float is fine
  EXPECT_EQ(lit(std::numeric_limits<double>::infinity(), DType::F64), "__builtin_inf()");
  EXPECT_NE(lit(0.5, DType::I32).find("not an integer"), std::string::npos);
  EXPECT_NE(lit(int64_t{300}, DType::I8).find("out of range"), std::string::npos);
  EXPECT_NE(lit(int64_t{-1}, DType::U64).find("out of range"), std::string::npos);
  EXPECT_NE(lit(int64_t{2}, DType::Bool).find("out of range"), std::string::npos);
  EXPECT_NE(lit(1.0, DType::F16).find("not supported"), std::string::npos);
  EXPECT_NE(lit(1e300, DType::F32).find("does not fit"), std::string::npos);
}

TEST(CpuCodegen, CTypes) {
  EXPECT_STREQ(cType(DType::F16), "uint16_t");
  EXPECT_STREQ(cType(DType::BF16), "uint16_t");
  EXPECT_STREQ(cType(DType::Bool), "bool");
  EXPECT_STREQ(cType(DType::U64), "uint64_t");
  EXPECT_EQ(sanitizeIdentifier("sk1#2"), "sk1_2");
  EXPECT_EQ(sanitizeIdentifier("9lives"), "_9lives");
}

TEST(CpuCodegen, InconsistentPlansAreErrorsNotCode) {
  auto t = cpu();
  ASSERT_TRUE(t);
  {
    FusionPlan p = syncKindsPlan();
    p.steps[0].ops[3].blockDim = 8;  // kernel_sync op with more blocks than cores
    auto r = t->emit(p, 0);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind(), ErrorKind::BadInput);
    EXPECT_NE(r.error().message().find("SuperKernel mixed"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("norm_d"), std::string::npos);
  }
  {
    FusionPlan p = syncKindsPlan();
    p.steps[0].edges[0].flagRanges.pop_back();
    auto r = t->emit(p, 0);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind(), ErrorKind::Internal);
    EXPECT_NE(r.error().message().find("3 ranges for 4 consumer blocks"), std::string::npos) << r.error().message();
  }
  {
    FusionPlan p = twoStreamsPlan();
    p.steps[0].edges[0].sync = SyncKind::Local;  // across queues: program order cannot order it
    auto r = t->emit(p, 0);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("local edge"), std::string::npos) << r.error().message();
  }
  {
    FusionPlan p = seedPlan();
    p.steps[0].ops[1].args.pop_back();
    auto r = t->emit(p, 0);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("binds 3 arguments"), std::string::npos) << r.error().message();
  }
  {
    FusionPlan p = seedPlan();
    p.steps[0].queues[0].numCores = 5;  // more than the SuperKernel's 4 cores
    auto r = t->emit(p, 0);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("outside"), std::string::npos) << r.error().message();
  }
  {
    FusionPlan p = seedPlan();
    p.steps[0].ops[0].args[3].scalar = 0.5;  // fractional value for an i64 parameter
    auto r = t->emit(p, 0);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind(), ErrorKind::BadInput);
    EXPECT_NE(r.error().message().find("op add_0 argument n"), std::string::npos) << r.error().message();
  }
  auto r = t->emit(seedPlan(), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("out of range"), std::string::npos);
}

TEST(CpuCodegen, TargetRegistry) {
  auto t = cpu();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->name(), "cpu");
  ASSERT_EQ(t->templateFiles().size(), 1u);
  EXPECT_TRUE(fs::exists(t->templateFiles()[0]));
  for (const char* name : {"ascend", "ascend-sim", "cuda"}) {  // registered back ends (cuda-sim shares cuda's)
    auto other = makeEmitter(name);
    ASSERT_TRUE(other.ok()) << other.error().message();
    EXPECT_EQ((*other)->name(), name);
  }
  auto r = makeEmitter("fpga");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("unknown target 'fpga'"), std::string::npos);
  EXPECT_EQ(targetNames(), (std::vector<std::string>{"ascend", "ascend-sim", "cpu", "cuda", "cuda-sim"}));
}

TEST(CpuCodegen, BrokenTemplateIsAClearError) {
  fs::path dir = fs::temp_directory_path() / ("sk-codegen-tmpl-" + std::to_string(::getpid()));
  fs::create_directories(dir / "cpu");
  {
    std::ofstream out(dir / "cpu" / "superkernel.cpp.tmpl");
    out << "ok\n{{#queues}}\nno close\n";
  }
  ::setenv("SK_TEMPLATES_DIR", dir.c_str(), 1);
  auto r = makeEmitter("cpu");
  ::unsetenv("SK_TEMPLATES_DIR");
  fs::remove_all(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("superkernel.cpp.tmpl:2: section 'queues' is never closed"), std::string::npos)
      << r.error().message();
}

// Every golden is valid C++17 against the runtime headers, warning-free.
TEST(CpuCodegen, GoldensCompile) {
  fs::path clang = findExecutable("clang++");
  if (clang.empty()) GTEST_SKIP() << "clang++ not found";
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(goldenDir())) {
    if (entry.path().extension() != ".cpp") continue;
    ++n;
    std::vector<std::string> argv = {clang.string(), "-fsyntax-only", "-std=c++17", "-Wall", "-Wextra", "-Werror",
                                      "-I", cpuRuntimeIncludeDir().string(), entry.path().string()};
    auto r = runProcess(argv);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_TRUE(r->succeeded()) << entry.path() << ": " << r->describe() << "\n" << r->err;
  }
  EXPECT_GE(n, 4u);
}

}  // namespace
}  // namespace sk

namespace sk {
namespace {

// The golden comparison can fail on every kind of difference (tests/GoldenFile.h): a changed line, a line
// missing at the end, and equal lines with different bytes (the case the cuda copy of it used to let pass).
const char* const kGoldenDir = SK_SOURCE_ROOT "/tests/codegen/golden";
void compareSeedWith(const std::string& text) { sktest::checkGoldenFile(kGoldenDir, "seed_sk1.cpp", text, "regen"); }
std::string seedGolden() { return sktest::readGolden(std::string(kGoldenDir) + "/seed_sk1.cpp"); }
std::string seedWithoutFinalNewline() {
  std::string t = seedGolden();
  t.pop_back();
  return t;
}
TEST(GoldenFile, EveryDifferenceFails) {
  ASSERT_FALSE(sktest::regeneratingGoldens()) << "never run this check while regenerating";
  EXPECT_NO_FATAL_FAILURE(compareSeedWith(seedGolden()));
  EXPECT_FATAL_FAILURE(compareSeedWith("not the seed\n"), "differs from the generated source at line 1");
  EXPECT_FATAL_FAILURE(compareSeedWith(seedGolden() + "// more\n"), "<end of file>");
  EXPECT_FATAL_FAILURE(compareSeedWith(seedWithoutFinalNewline()), "the lines are equal but the bytes are not");
}

}  // namespace
}  // namespace sk
