// The cpu end-to-end builtin list (tests/session/data/builtins.json: every
// builtin kernel, chained like a decode layer) on the ascend back end: the
// list names only builtins, so compiling it with target "ascend" picks the
// Ascend C ports in kernels/ascend as is. Fused under the cpu suite's Latin
// square of options (tests/session/EndToEndTest.cpp: early-start {0,1,2} x
// preload-code {none,per-func,max}, each pair once, with the worker count
// {1,2,4} becoming the device's AI Cores: cube pool N, vector pool 2N) against
// one unfused reference run, bit for bit.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "superkernel/frontend/OpList.h"
#include "SessionRun.h"

namespace fs = std::filesystem;

namespace {

TEST(AscendBuiltinsList, EveryBuiltinFusedEqualsUnfusedUnderTheLatinSquare) {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "session" / "data" / "builtins.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  const sk::OpList& list = *l;
  ASSERT_FALSE(list.ops.empty());

  // One session per AI Core count (the sessions keep their compiled objects in memory).
  sktest::ascend::SessionsByCores session;

  sk::Session* first = session(2);
  ASSERT_NE(first, nullptr);
  const std::unique_ptr<sk::BufferSet> reference = sktest::ascend::referenceRun(*first, list);
  ASSERT_TRUE(reference);
  // The reference must have computed something, or equality proves nothing.
  auto initial = sk::BufferSet::create(list);
  ASSERT_TRUE(initial.ok());
  auto changed = initial->compare(*reference);
  ASSERT_TRUE(changed.ok());
  ASSERT_TRUE(changed->has_value());
  EXPECT_GE((*changed)->differingBuffers, list.buffers.size() / 2) << "most outputs should be written";

  sktest::ascend::expectFusedEqualsReferenceOverSquare(session, list, *reference, "", [&](const auto& rc, uint32_t) {
    EXPECT_GE(rc.fusedSteps, 1u) << "fusion must make SuperKernels";
    EXPECT_LT(rc.fusedSteps + rc.unfusedSteps, list.ops.size()) << "fusion must reduce the launch count";
  });
}

}  // namespace
