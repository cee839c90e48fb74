// The cpu end-to-end scenarios (tests/session/data/scenarios.json: chain,
// mixed block dims, read-all consumer, in-place, views, diamond, two streams
// with stream-fusion 0 and 1, an unfusible op mid-scope, nested scopes, an
// early-start kernel) planned by the real planner, generated for ascend and
// run in the simulator, against the same list planned unfused. The list's
// kernels are swapped for their Ascend C ports in tests/ascend/data/kernels
// (`scale` runs on cube cores, so the scenarios cross core types); the
// kernel_sync scope is left out: ascend rejects kernel_sync without
// feed-sync-all (see AscendStep.h), which has its own test.
#include <gtest/gtest.h>

#include <algorithm>

#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"
#include "target/ascend/AscendStep.h"
#include "SessionRun.h"

namespace fs = std::filesystem;

namespace {

sk::OpList ascendScenarios() {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "session" / "data" / "scenarios.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  if (!l.ok()) return {};
  sk::OpList list = std::move(*l);
  std::erase_if(list.ops, [](const sk::Op& op) { return op.name == "ksync_2" || op.name == "ksync_3"; });
  std::erase_if(list.kernels, [](const sk::KernelDecl& k) { return k.name == "ks_sum"; });
  const fs::path ports = fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "kernels";
  for (sk::KernelDecl& k : list.kernels) {
    k.sourcePath = ports / fs::path(k.source).filename();
    k.coreType = k.name == "scale" ? sk::CoreType::Cube : sk::CoreType::Vector;
  }
  return list;
}

TEST(AscendScenarios, EveryPlannerScenarioFusedEqualsUnfused) {
  const sk::OpList list = ascendScenarios();
  ASSERT_FALSE(list.ops.empty());
  // The cpu suite's early-start x preload pairs (its Latin square's diagonal); its worker counts become the
  // device's AI Cores (cube pool N, vector pool 2N).
  struct Config {
    const char* options;
    uint32_t aiCores;
  };
  std::unique_ptr<sk::BufferSet> reference;
  for (Config c : {Config{"early-start=0:preload-code=none", 1}, Config{"early-start=1:preload-code=per-func", 2},
                   Config{"early-start=2:preload-code=max:split-mode=1", 4}}) {
    SCOPED_TRACE(c.options);
    auto session = sktest::ascend::ascendSession(c.aiCores);
    ASSERT_TRUE(session);
    if (!reference) reference = sktest::ascend::referenceRun(*session, list);
    ASSERT_TRUE(reference);
    auto rc = sktest::ascend::expectFusedEqualsReference(*session, list, c.options, *reference);
    EXPECT_GE(rc.fusedSteps, 8u) << "one SuperKernel per scope at least";
  }
}

TEST(AscendScenarios, KernelSyncNeedsFeedSyncAllAndSaysSo) {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "session" / "data" / "scenarios.json");
  ASSERT_TRUE(l.ok());
  auto plan = sk::planOpList(*l, {}, {.machine = sk::MachineModel::singlePool("cpu", 4), .fuse = true});
  ASSERT_TRUE(plan.ok());
  bool seen = false;
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    auto step = sk::ascend::makeAscendStep(*plan, i, SK_ASCEND_KERNELS_DIR);
    if (step.ok()) continue;
    seen = true;
    EXPECT_NE(step.error().message().find("kernel ks_sum syncs its own blocks (kernel_sync)"), std::string::npos)
        << step.error().message();
  }
  EXPECT_TRUE(seen);
}

}  // namespace
