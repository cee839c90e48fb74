// Side launches through the Session (what sk-compile --target ascend --run
// does with tests/ascend/data/side_launches.json): a tiling op on stream 1
// that reads the SuperKernel's first op and feeds a later one, and a
// prefetch op on stream 2 that a later op reads, run beside one SuperKernel
// in the simulator, against the unfused reference, under every option that
// changes the generated sync (early start, stream fusion, split copies,
// debug-sync-all, profiling). Each side launch is held back after its signal
// (SK_ASCEND_SIM_SIDE_DELAY_MS), so a SuperKernel op that did not wait for
// it would read stale data and the comparison would fail.
#include <gtest/gtest.h>

#include <cstdlib>

#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"
#include "SessionRun.h"

namespace fs = std::filesystem;

namespace {

TEST(AscendSideLaunches, FusedWithSideLaunchesEqualsUnfused) {
  ::setenv("SK_ASCEND_SIM_SIDE_DELAY_MS", "20", 1);  // read when the session's device is made
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "side_launches.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  auto session = sktest::ascend::ascendSession(4);
  ::unsetenv("SK_ASCEND_SIM_SIDE_DELAY_MS");
  ASSERT_TRUE(session);
  auto reference = sktest::ascend::referenceRun(*session, *l);
  ASSERT_TRUE(reference);
  for (const char* options : {"", "early-start=0", "early-start=2:preload-code=max:split-mode=1",
                              "stream-fusion=1", "stream-fusion=1:early-start=0:split-mode=2",
                              "debug-sync-all=1:profiling=1"}) {
    auto rc = sktest::ascend::expectFusedEqualsReference(*session, *l, options, *reference);
    EXPECT_EQ(rc.fusedSteps, 1u) << options << ": one SuperKernel, not split by the other streams' ops";
    EXPECT_EQ(rc.unfusedSteps, 2u) << options << ": the tiling and prefetch launches beside it";
  }
}

TEST(AscendSideLaunches, ProfiledRunNamesEveryLaunch) {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "side_launches.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  auto session = sktest::ascend::ascendSession(2);
  ASSERT_TRUE(session);
  sk::CompileRequest req;
  req.target = "ascend";
  req.options = "profiling=1";
  auto plan = session->compile(*l, req);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].sides, (std::vector<size_t>{1, 2}));
  EXPECT_TRUE(plan->steps[1].beside);
  auto bufs = sk::BufferSet::create(plan->list);
  ASSERT_TRUE(bufs.ok());
  auto trace = session->runProfiled(*plan, *bufs);
  ASSERT_TRUE(trace.ok()) << trace.error().message();
  // The SuperKernel's records name its ops (launch 0); the waits for the side launches are records too.
  for (const char* op : {"proj", "use_tiling", "use_l2"}) EXPECT_NE(trace->find(op), std::string::npos) << op;
}

}  // namespace
