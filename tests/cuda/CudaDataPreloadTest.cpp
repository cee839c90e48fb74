// preload-data on cuda (plan/DataPreload.cpp's rule, printed by the cuda emitter): each CTA's L2 prefetches of
// its slice of the step's constant inputs come before the waits (and the barrier) of the op they are issued at,
// lookahead issues later ops' slices at an earlier op, none are printed without the option (cuda's default),
// and nvcc turns sk_prefetch_l2 into cp.async.bulk.prefetch.L2 on sm_90 and prefetch.global.L2 on sm_80.
#include <gtest/gtest.h>

#include "codegen/TestPlans.h"
#include "cuda/CudaTestUtil.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Process.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using namespace sk::testplans;

std::string emitText(PreloadData mode) {
  auto t = makeEmitter("cuda");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message());
  if (!t.ok()) return {};
  FusionPlan plan = syncKindsPlan();
  plan.steps[0].options.preloadData = mode;
  auto src = (*t)->emit(plan, 0);
  EXPECT_TRUE(src.ok()) << (src.ok() ? "" : src.error().message());
  return src.ok() ? src->text : std::string();
}

// syncKindsPlan: x (0), y (1) and idx (4) are read and never written; add_a (op 0) does not wait, gather_c
// (op 2) waits on a counter and reads idx, norm_d (op 3) has a barrier before it, add_e (op 4) waits on a
// counter and reads y.
constexpr const char* kIdx = "  if (c < 4u) sk_preload_data(4u, 0ull + c * 1024ull, 1024u);  // for op 2: gather_c\n";
constexpr const char* kY = "  if (c < 8u) sk_preload_data(1u, 0ull + c * 512ull, 512u);  // for op 4: add_e\n";

TEST(CudaDataPreload, OffByDefault) {
  for (PreloadData mode : {PreloadData::Auto, PreloadData::None}) {
    const std::string t = emitText(mode);
    EXPECT_EQ(t.find("sk_preload_data"), std::string::npos);
    EXPECT_EQ(t.find("sk_prefetch_l2"), std::string::npos);
  }
}

TEST(CudaDataPreload, FirstBlockPrefetchesBeforeTheOpsWait) {
  const std::string t = emitText(PreloadData::FirstBlock);
  const size_t idx = t.find(kIdx), y = t.find(kY);
  ASSERT_NE(idx, std::string::npos) << t;
  ASSERT_NE(y, std::string::npos) << t;
  // Each right before its own op's line (whose sk_block_begin waits), after the previous op's.
  EXPECT_LT(t.find("sk_run_op(env, &sk_ops[1]"), idx);
  EXPECT_LT(idx, t.find("sk_run_op(env, &sk_ops[2]"));
  EXPECT_LT(t.find("sk_run_op(env, &sk_ops[3]"), y);
  EXPECT_LT(y, t.find("sk_run_op(env, &sk_ops[4]"));
  // Only those two: add_a does not wait, and the written buffers (t1, t2, t3, big) are never prefetched.
  size_t count = 0;
  for (size_t p = t.find("  if (c < "); p != std::string::npos; p = t.find("  if (c < ", p + 1)) ++count;
  EXPECT_EQ(count, 2u) << t;
  // The helper: the simulator's bounds check, then the L2 prefetch.
  EXPECT_NE(t.find("static const unsigned long long sk_buf_bytes[7] = { 4096ull, 4096ull, 4096ull, 4096ull, 4096ull, "
                   "4096ull, 8192ull };"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("sk_prefetch_l2(static_cast<const char*>(sk_buf[b]) + offset, bytes);"), std::string::npos);
}

TEST(CudaDataPreload, LookaheadPrefetchesLaterOpsWhileAnEarlierOneRuns) {
  const std::string t = emitText(PreloadData::Lookahead);
  // add_a does not wait and prefetches nothing of its own, but the later ops' slices fit cuda's budget: all
  // go at add_a, before its line, once.
  const size_t idx = t.find(kIdx), y = t.find(kY), a = t.find("sk_run_op(env, &sk_ops[0]");
  ASSERT_NE(idx, std::string::npos) << t;
  ASSERT_NE(y, std::string::npos) << t;
  EXPECT_LT(idx, a);
  EXPECT_LT(y, a);
  EXPECT_EQ(t.find(kIdx, idx + 1), std::string::npos);
  EXPECT_EQ(t.find(kY, y + 1), std::string::npos);
}

// The generated source with the option compiles for sm_90 and sm_80, and the PTX holds the prefetch each arch
// gets (sync.cuh's sk_prefetch_l2).
TEST(CudaDataPreload, PtxHasTheL2Prefetch) {
  SK_REQUIRE_NVCC(nvcc);
  cudatest::TempDir dir("preload");
  const fs::path src = dir.path / "lookahead.cu";
  {
    std::ofstream(src) << emitText(PreloadData::Lookahead);
  }
  for (const auto& [arch, want, not_want] :
       {std::tuple{"sm_90", "cp.async.bulk.prefetch.L2.global", "prefetch.global.L2 "},
        std::tuple{"sm_80", "prefetch.global.L2", "cp.async.bulk.prefetch"}}) {
    const fs::path ptx = dir.path / (std::string(arch) + ".ptx");
    std::vector<std::string> argv = {nvcc, "-ptx", "-rdc=true", "-O3", "-std=c++17", std::string("-arch=") + arch,
                                     "-I" + (dataRuntimeDir() / "cuda" / "include").string(), "-o", ptx.string(),
                                     "-x", "cu", src.string()};
    ProcessOptions po;
    po.timeout = std::chrono::minutes(3);
    auto r = runProcess(argv, po);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->exitCode, 0) << arch << ":\n" << r->err;
    EXPECT_EQ(r->err.find("warning"), std::string::npos) << arch << ":\n" << r->err;
    const std::string text = cudatest::readFile(ptx);
    EXPECT_NE(text.find(want), std::string::npos) << arch;
    EXPECT_EQ(text.find(not_want), std::string::npos) << arch;
  }
}

}  // namespace
}  // namespace sk
