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

#include "superkernel/ascend/Simulator.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/session/BufferSet.h"
#include "target/ascend/AscendEmitter.h"
#include "target/ascend/AscendStep.h"
#include "target/ascend/SimBuild.h"
#include "WorkDir.h"

namespace fs = std::filesystem;

namespace {

sk::Status runPlan(const sk::FusionPlan& plan, sk::BufferSet& bufs, const fs::path& work) {
  std::vector<sk::ascend::AscendStep> steps;
  std::vector<std::optional<sk::ascend::AscendSource>> sources;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    auto step = sk::ascend::makeAscendStep(plan, i, SK_ASCEND_KERNELS_DIR);
    if (!step) return step.error();
    std::optional<sk::ascend::AscendSource> src;
    if (step->fused) {
      auto s = sk::ascend::emitAscend(*step);
      if (!s) return s.error();
      src = std::move(*s);
    }
    steps.push_back(std::move(*step));
    sources.push_back(std::move(src));
  }
  std::vector<sk::ascend::SimBuildItem> items;
  for (size_t i = 0; i < steps.size(); ++i) items.push_back({&steps[i], sources[i] ? &*sources[i] : nullptr});
  auto cfg = sk::ascend::defaultSimBuildConfig(work);
  if (!cfg) return cfg.error();
  auto lib = sk::ascend::buildForSimulator(items, *cfg, "plan");
  if (!lib) return lib.error();
  auto mod = sk::ascend_sim::Module::load(lib->sharedObject.string());
  if (!mod) return mod.error();
  for (size_t i = 0; i < steps.size(); ++i) {
    const sk::ascend::AscendStep& step = steps[i];
    auto entry = mod->entry(lib->entries[i]);
    if (!entry) return entry.error();
    sk::ascend_sim::LaunchSpec spec;
    spec.type = static_cast<sk::ascend_sim::TaskType>(static_cast<uint32_t>(step.type));
    spec.blockDim = step.blockDim;
    spec.entry = *entry;
    spec.enter = mod->enter();
    spec.name = step.name;
    auto ptr = [&](int b) { return static_cast<uint8_t*>(bufs.data(step.buffers[b].listIndex)); };
    if (sources[i]) {
      for (size_t b = 0; b < step.buffers.size(); ++b) spec.args.push_back(ptr(static_cast<int>(b)));
    } else {
      for (const sk::ascend::AscendArg& a : step.ops[0].args) spec.args.push_back(ptr(a.buffer) + a.byteOffset);
    }
    sk::Status st = sk::ascend_sim::launch(spec);
    if (!st) return st.error().context("step " + step.name);
  }
  return sk::Status::success();
}

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
  const fs::path d = sktest::ascend::workDir();
  auto refPlan = sk::planOpList(list, {}, {.machine = sk::MachineModel::singlePool("cpu", 4), .fuse = false});
  ASSERT_TRUE(refPlan.ok()) << refPlan.error().message();
  auto reference = sk::BufferSet::create(list);
  ASSERT_TRUE(reference.ok());
  sk::Status st = runPlan(*refPlan, *reference, d / "ref");
  ASSERT_TRUE(st.ok()) << st.error().message();

  // The cpu suite's early-start x preload pairs (its Latin square's diagonal) and worker counts.
  struct Config {
    const char* options;
    uint32_t workers;
  };
  int n = 0;
  for (Config c : {Config{"early-start=0:preload-code=none", 1}, Config{"early-start=1:preload-code=per-func", 2},
                   Config{"early-start=2:preload-code=max:split-mode=1", 4}}) {
    SCOPED_TRACE(c.options);
    auto opts = sk::parseOptions(c.options);
    ASSERT_TRUE(opts.ok());
    auto plan = sk::planOpList(list, *opts, {.machine = sk::MachineModel::singlePool("cpu", c.workers), .fuse = true});
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    size_t fused = 0;
    for (const sk::SuperKernelPlan& s : plan->steps) fused += s.fused ? 1 : 0;
    EXPECT_GE(fused, 8u) << "one SuperKernel per scope at least";
    auto bufs = sk::BufferSet::create(list);
    ASSERT_TRUE(bufs.ok());
    st = runPlan(*plan, *bufs, d / std::to_string(n++));
    ASSERT_TRUE(st.ok()) << st.error().message();
    auto diff = bufs->compare(*reference);
    ASSERT_TRUE(diff.ok());
    EXPECT_FALSE(diff->has_value()) << (*diff)->message();
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
