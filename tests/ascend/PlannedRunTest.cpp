// The decode layer example through the Session on the ascend back end: the
// real planner on the ascend machine model, ascend SuperKernels built for
// and run in the simulator, against the same list unfused (one simulated
// launch per op): outputs equal bit for bit, for every option mix below. The
// example uses only builtin kernels, so it runs on the ascend builtins as is.
#include <gtest/gtest.h>

#include "superkernel/frontend/OpList.h"
#include "SessionRun.h"

namespace fs = std::filesystem;

namespace {

sk::OpList decodeLayer() {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "examples" / "decode_layer" / "decode_layer.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  return l.ok() ? std::move(*l) : sk::OpList{};
}

// One test for every option mix (one process: the unfused reference is computed once).
TEST(AscendPlannedRun, DecodeLayerFusedEqualsUnfused) {
  const sk::OpList list = decodeLayer();
  auto session = sktest::ascend::ascendSession();
  ASSERT_TRUE(session);
  auto reference = sktest::ascend::referenceRun(*session, list);
  ASSERT_TRUE(reference);
  for (const char* text : {"", "early-start=0:split-mode=1", "early-start=2:preload-code=max",
                           "debug-sync-all=1:split-mode=2:profiling=1", "stream-fusion=1:split-mode=1"}) {
    auto rc = sktest::ascend::expectFusedEqualsReference(*session, list, text, *reference);
    EXPECT_GE(rc.fusedSteps, 1u) << text;
  }
}

}  // namespace
