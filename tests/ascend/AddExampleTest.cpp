// examples/ascend_add: the seed's four add launches (add_100 .. add_400, 40 blocks each) of a KernelAdd
// written as Ascend C users write it (TPipe, double-buffered TQue, DataCopy, Add; the last two also mark
// their own early-start points), through the Session on the ascend simulator. The unfused reference
// must compute x + 4 exactly (y is ones), and every option mix of the other ascend tests (the builtin
// list's Latin square of early-start x preload-code x AI Cores, and the planned decode layer's mixes)
// must give the reference's buffers bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "superkernel/frontend/OpList.h"
#include "SessionRun.h"

namespace {

sk::OpList addExampleList() {
  auto l = sk::loadOpList(std::filesystem::path(SK_SOURCE_ROOT) / "examples" / "ascend_add" / "ascend_add.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  return l.ok() ? std::move(*l) : sk::OpList{};
}

TEST(AscendAddExample, FusedEqualsUnfusedUnderEveryOptionMix) {
  const sk::OpList list = addExampleList();
  ASSERT_EQ(list.ops.size(), 4u);
  sktest::ascend::SessionsByCores session;
  sk::Session* first = session(2);
  ASSERT_NE(first, nullptr);
  const std::unique_ptr<sk::BufferSet> reference = sktest::ascend::referenceRun(*first, list);
  ASSERT_TRUE(reference);

  // The reference itself is right: out = (((x + 1) + 1) + 1) + 1 in f32, every element.
  auto initial = sk::BufferSet::create(list);
  ASSERT_TRUE(initial.ok());
  const int xi = initial->find("x"), oi = reference->find("out");
  ASSERT_GE(xi, 0);
  ASSERT_GE(oi, 0);
  const uint64_t n = reference->elements(oi);
  const float* x = static_cast<const float*>(initial->data(xi));
  const float* out = static_cast<const float*>(reference->data(oi));
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const float want = (((x[i] + 1.0f) + 1.0f) + 1.0f) + 1.0f;
    if (std::memcmp(&out[i], &want, 4) != 0 && ++wrong < 5) ADD_FAILURE() << "out[" << i << "] = " << out[i] << ", want " << want;
  }
  EXPECT_EQ(wrong, 0u);

  // The builtin list's Latin square (BuiltinsListTest.cpp), then the decode layer's mixes (PlannedRunTest.cpp).
  // Inside a SuperKernel each of an op's blocks needs a vector core of its own: on 1 to 4 AI Cores the plain
  // adds (block_dim_invariant) run one block per core, while the early-start adds (which mark their own start
  // points: never coarsened) need all 40 and run alone, in waves.
  sktest::ascend::expectFusedEqualsReferenceOverSquare(session, list, *reference, "", [](const auto& rc, uint32_t) {
    EXPECT_EQ(rc.fusedSteps, 1u) << "add_100 and add_200 are one SuperKernel";
    EXPECT_EQ(rc.unfusedSteps, 2u) << "add_300 and add_400 (early start, 40 blocks) run alone";
  });
  // On 20 AI Cores (40 vector cores, the size the seed's launches were written for) all four are one
  // SuperKernel, the early-start adds honouring their own start points inside it.
  for (const char* options : {"", "early-start=0:split-mode=1", "early-start=2:preload-code=max",
                              "debug-sync-all=1:split-mode=2:profiling=1", "stream-fusion=1:split-mode=1"}) {
    SCOPED_TRACE(std::string("options: ") + options);
    sk::Session* s = session(20);
    ASSERT_NE(s, nullptr);
    auto rc = sktest::ascend::expectFusedEqualsReference(*s, list, options, *reference);
    EXPECT_EQ(rc.fusedSteps, 1u);
    EXPECT_EQ(rc.unfusedSteps, 0u);
  }
}

// A shape the kernel does not tile (n not a multiple of blocks x 8 tiles x 2 buffers x 8 floats) fails the
// launch with the kernel's own message instead of leaving elements unwritten.
TEST(AscendAddExample, AShapeTheKernelCannotTileIsAnError) {
  sk::OpList list = addExampleList();
  ASSERT_EQ(list.ops.size(), 4u);
  list.ops.resize(1);
  list.ops[0].blockDim = 3;  // 81920 is not a multiple of 3 * 128
  auto session = sktest::ascend::ascendSession(2);
  ASSERT_TRUE(session);
  auto bufs = sk::BufferSet::create(list);
  ASSERT_TRUE(bufs.ok());
  sk::Status st = sktest::ascend::compileAndRun(*session, list, "", false, *bufs);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("add_custom: n must be a multiple of blocks * TILE_NUM * BUFFER_NUM * 8"),
            std::string::npos)
      << st.error().message();
}

}  // namespace
