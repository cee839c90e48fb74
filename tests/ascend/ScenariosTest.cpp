// The cpu end-to-end scenarios (tests/session/data/scenarios.json: chain,
// mixed block dims, read-all consumer, in-place, views, diamond, two streams
// with stream-fusion 0 and 1, an unfusible op mid-scope, nested scopes, an
// early-start kernel) planned by the real planner, generated for ascend and
// run in the simulator, against the same list planned unfused. The list's
// kernels are swapped for their Ascend C ports in tests/ascend/data/kernels
// (`scale` runs on cube cores, so the scenarios cross core types). The
// kernel_sync scope's ks_sum calls AscendC::SyncAll once per launch on one
// block of a wider SuperKernel, so every fused run sets feed-sync-all=1 (the
// other vector cores feed its SyncAll); without it the step is bad input.
// Configurations: the cpu suite's 9 (early-start x preload-code x workers
// as a Latin square), its worker counts as AI Cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"
#include "backends/ascend/AscendMachine.h"
#include "backends/ascend/AscendStep.h"
#include "SessionRun.h"

namespace fs = std::filesystem;

namespace {

sk::OpList ascendScenarios() {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "session" / "data" / "scenarios.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  if (!l.ok()) return {};
  sk::OpList list = std::move(*l);
  list.target = "ascend-sim";  // the kernels' plain sources below are the ascend ports
  const fs::path ports = fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "kernels";
  for (sk::KernelDecl& k : list.kernels) {
    k.sourcePath = ports / fs::path(k.source).filename();
    k.coreType = k.name == "scale" ? sk::CoreType::Cube : sk::CoreType::Vector;
    if (k.name == "ks_sum") k.attributes["sync_all_calls"] = 1;  // the ascend port's declaration: one SyncAll per launch
  }
  return list;
}

TEST(AscendScenarios, EveryPlannerScenarioFusedEqualsUnfused) {
  const sk::OpList list = ascendScenarios();
  ASSERT_FALSE(list.ops.empty());
  // The cpu suite's 9 configurations (tests/session/EndToEndTest.cpp: early-start {0,1,2} x preload-code
  // {none, per-func, max} x workers {1,2,4} as a Latin square); its worker counts become the device's AI
  // Cores (cube pool N, vector pool 2N). One session per AI Core count, one reference run. The square is
  // tests/OptionSquare.h (CI's ASan stage runs its diagonal).
  sktest::ascend::SessionsByCores sessions;
  sk::Session* first = sessions(1);
  ASSERT_NE(first, nullptr);
  const std::unique_ptr<sk::BufferSet> reference = sktest::ascend::referenceRun(*first, list);
  ASSERT_TRUE(reference);
  // Inside a SuperKernel each block has a core of its own (MachineModel::oneBlockPerCore): from 4 AI Cores (8
  // vector cores) every scenario op fits its pool; on fewer, the wider ops run alone and split their scopes.
  sktest::ascend::expectFusedEqualsReferenceOverSquare(
      sessions, list, *reference, ":feed-sync-all=1", [](const auto& rc, uint32_t aiCores) {
        if (aiCores >= 4) {
          EXPECT_GE(rc.fusedSteps, 8u) << "one SuperKernel per scope at least";
        } else {
          EXPECT_GE(rc.fusedSteps, 4u) << "the scopes whose ops fit still fuse";
          EXPECT_GE(rc.unfusedSteps, 8u) << "the ops wider than a pool run alone";
        }
      });
}

TEST(AscendScenarios, KernelSyncNeedsFeedSyncAllAndSaysSo) {
  // feed-sync-all=0 (the default, as in the reference): ks_sum on 1 block of a wider SuperKernel would hang,
  // so compiling the list is bad input that names the option.
  const sk::OpList list = ascendScenarios();
  auto session = sktest::ascend::ascendSession(2);
  ASSERT_TRUE(session);
  sk::CompileRequest req;
  req.target = "ascend-sim";
  auto plan = session->compile(list, req);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_NE(plan.error().message().find("op ksync_2 syncs its own blocks (kernel_sync)"), std::string::npos)
      << plan.error().message();
  EXPECT_NE(plan.error().message().find("set feed-sync-all=1"), std::string::npos) << plan.error().message();
}

TEST(AscendScenarios, KernelSyncMustDeclareItsSyncAllCalls) {
  // The scenarios' own (cpu) declaration of ks_sum says kernel_sync but not how often it calls SyncAll.
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "session" / "data" / "scenarios.json");
  ASSERT_TRUE(l.ok());
  auto plan = sk::planOpList(*l, {}, {.machine = sk::ascend::ascendMachineModel(4), .fuse = true});
  ASSERT_TRUE(plan.ok());
  bool seen = false;
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    auto step = sk::ascend::makeAscendStep(*plan, i);
    if (step.ok()) continue;
    seen = true;
    EXPECT_EQ(step.error().kind(), sk::ErrorKind::BadInput);
    EXPECT_NE(step.error().message().find("kernel ks_sum syncs its own blocks (kernel_sync) but does not declare how "
                                          "many times one launch calls AscendC::SyncAll; add \"sync_all_calls\": N"),
              std::string::npos)
        << step.error().message();
  }
  EXPECT_TRUE(seen);

  // ... only when other cores feed it: ks_sum on every vector core of its SuperKernel (4, as wide as ksync_3)
  // calls SyncAll among its own blocks, and needs no count.
  for (sk::Op& op : l->ops)
    if (op.kind == sk::Op::Kind::Launch && op.name == "ksync_2") op.blockDim = 4;
  auto wide = sk::planOpList(*l, {}, {.machine = sk::ascend::ascendMachineModel(4), .fuse = true});
  ASSERT_TRUE(wide.ok());
  for (size_t i = 0; i < wide->steps.size(); ++i) {
    auto step = sk::ascend::makeAscendStep(*wide, i);
    EXPECT_TRUE(step.ok()) << step.error().message();
  }

  // A cube sub-kernel cannot sync its own blocks: alone (AIC_ONLY) it has no SyncAll.
  for (sk::KernelDecl& k : l->kernels)
    if (k.name == "ks_sum") k.coreType = sk::CoreType::Cube;
  auto cube = sk::planOpList(*l, {}, {.machine = sk::ascend::ascendMachineModel(4), .fuse = true});
  ASSERT_TRUE(cube.ok());
  bool refused = false;
  for (size_t i = 0; i < cube->steps.size(); ++i) {
    auto step = sk::ascend::makeAscendStep(*cube, i);
    if (step.ok()) continue;
    refused = true;
    EXPECT_NE(step.error().message().find("kernel ks_sum is a cube sub-kernel that syncs its own blocks"),
              std::string::npos)
        << step.error().message();
  }
  EXPECT_TRUE(refused);
}

}  // namespace
