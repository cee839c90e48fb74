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
#include <map>

#include <nlohmann/json.hpp>

#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/target/Backend.h"
#include "SessionRun.h"

namespace fs = std::filesystem;

namespace {

TEST(AscendSideLaunches, FusedWithSideLaunchesEqualsUnfused) {
  ::setenv("SK_ASCEND_SIM_SIDE_DELAY_MS", "20", 1);  // read when the session's device is made
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "side_launches.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  auto session = sktest::ascend::ascendSession(8);  // room for the side launches (SidePlan)
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

TEST(AscendSideLaunches, ProfiledRunRecordsTheGmWaits) {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "side_launches.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  auto session = sktest::ascend::ascendSession(8);
  ASSERT_TRUE(session);
  sk::CompileRequest req;
  req.target = "ascend-sim";
  req.options = "profiling=1";
  auto plan = session->compile(*l, req);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->plan.steps[0].sides.size(), 2u);
  EXPECT_EQ(plan->plan.steps[1].besideStep, 0);
  auto bufs = sk::BufferSet::create(plan->list);
  ASSERT_TRUE(bufs.ok());
  // The SuperKernel alone, or with the wrong side launches, is refused (it would wait for launches that
  // never come), never run.
  sk::CompiledStep& first = plan->steps[0];
  std::vector<void*> ptrs(first.listBuffers.size());
  for (size_t k = 0; k < ptrs.size(); ++k) ptrs[k] = bufs->pointers()[first.listBuffers[k]];
  const auto n = static_cast<uint32_t>(ptrs.size());
  sk::Status alone = plan->device->run(*first.kernel, first.numCores, nullptr, ptrs.data(), n);
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_NE(alone.error().message().find("has launches of other streams beside it"), std::string::npos)
      << alone.error().message();
  sk::Status short1 = plan->device->runBeside(*first.kernel, first.numCores, nullptr, ptrs.data(), n, {});
  ASSERT_FALSE(short1.ok());
  EXPECT_NE(short1.error().message().find("has 2 side launch(es), 0 given"), std::string::npos)
      << short1.error().message();
  auto trace = session->runProfiled(*plan, *bufs);
  ASSERT_TRUE(trace.ok()) << trace.error().message();
  // The SuperKernel's cores record their GM waits for the side launches. The launch has 4 AI Cores (its
  // widest ops: 8 vector blocks, 4 cube blocks), so 4 cube and 8 vector cores. Every vector core waits
  // before use_tiling (op 2, for tiling), the only wait there (mix feeds it block for block); before use_l2
  // (op 4, for prefetch) they wait for it as well as at the cube -> vector sync point every core takes part
  // in (12 more).
  const auto j = nlohmann::json::parse(*trace);
  std::map<int, int> waitsBefore;  // op -> wait slices
  for (const auto& e : j["traceEvents"])
    if (e.value("cat", "") == "wait" && e["args"].value("launch", -1) == 0) ++waitsBefore[e["args"].value("op", -1)];
  EXPECT_EQ(waitsBefore[2], 8) << *trace;
  EXPECT_EQ(waitsBefore[4], 8 + 12) << *trace;
}

}  // namespace
