// Op lists through the real planner, generated as ascend SuperKernels and run
// in the simulator, against the same list planned unfused (one simulated
// launch per op): outputs equal bit for bit. The decode layer example uses
// only builtin kernels, so it runs on the ascend builtins as is.
//
// The step runner here (plan -> AscendStep -> source -> simulator build ->
// launch) is what the ascend device does once the back-end seam lands; it
// stays a test helper until then.
#include <gtest/gtest.h>

#include <fmt/format.h>

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

struct RunStats {
  uint32_t fusedSteps = 0, unfusedSteps = 0, syncPoints = 0;
};

// Every step generated first, all built into one shared object, then launched in order.
sk::Status runPlan(const sk::FusionPlan& plan, sk::BufferSet& bufs, const fs::path& work, RunStats* stats) {
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
      stats->syncPoints += src->syncPoints;
      ++stats->fusedSteps;
    } else {
      ++stats->unfusedSteps;
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
    const auto& src = sources[i];
    auto entry = mod->entry(lib->entries[i]);
    if (!entry) return entry.error();
    sk::ascend_sim::LaunchSpec spec;
    spec.type = static_cast<sk::ascend_sim::TaskType>(static_cast<uint32_t>(step.type));
    spec.blockDim = step.blockDim;
    spec.entry = *entry;
    spec.enter = mod->enter();
    spec.name = step.name;
    std::vector<uint8_t> profile;
    auto ptr = [&](int b) { return static_cast<uint8_t*>(bufs.data(step.buffers[b].listIndex)); };
    if (src) {
      for (size_t b = 0; b < step.buffers.size(); ++b) spec.args.push_back(ptr(static_cast<int>(b)));
      if (src->profileBytes) {
        profile.resize(src->profileBytes);
        spec.args.push_back(profile.data());
      }
    } else {
      for (const sk::ascend::AscendArg& a : step.ops[0].args) spec.args.push_back(ptr(a.buffer) + a.byteOffset);
    }
    sk::Status st = sk::ascend_sim::launch(spec);
    if (!st) return st;
  }
  return sk::Status::success();
}

sk::OpList decodeLayer() {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "examples" / "decode_layer" / "decode_layer.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  return l.ok() ? std::move(*l) : sk::OpList{};
}

// One test for every option mix (one process: the unfused reference is computed once).
TEST(AscendPlannedRun, DecodeLayerFusedEqualsUnfused) {
  const sk::OpList list = decodeLayer();
  const fs::path d = sktest::ascend::workDir();
  auto refPlan = sk::planOpList(list, {}, {.machine = sk::MachineModel::singlePool("cpu", 16), .fuse = false});
  ASSERT_TRUE(refPlan.ok()) << refPlan.error().message();
  auto reference = sk::BufferSet::create(list);
  ASSERT_TRUE(reference.ok());
  RunStats rs;
  sk::Status st = runPlan(*refPlan, *reference, d / "ref", &rs);
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_EQ(rs.fusedSteps, 0u);
  EXPECT_EQ(rs.unfusedSteps, list.ops.size());

  int n = 0;
  for (const char* text : {"", "early-start=0:split-mode=1", "early-start=2:preload-code=max",
                           "debug-sync-all=1:split-mode=2:profiling=1", "stream-fusion=1:split-mode=1"}) {
    SCOPED_TRACE(text);
    auto opts = sk::parseOptions(text);
    ASSERT_TRUE(opts.ok());
    auto plan = sk::planOpList(list, *opts, {.machine = sk::MachineModel::singlePool("cpu", 16), .fuse = true});
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    auto bufs = sk::BufferSet::create(list);
    ASSERT_TRUE(bufs.ok());
    RunStats fs;
    st = runPlan(*plan, *bufs, d / std::to_string(n++), &fs);
    ASSERT_TRUE(st.ok()) << st.error().message();
    EXPECT_GE(fs.fusedSteps, 1u);
    EXPECT_GE(fs.syncPoints, 1u);
    auto diff = bufs->compare(*reference);
    ASSERT_TRUE(diff.ok());
    EXPECT_FALSE(diff->has_value()) << (*diff)->message();
  }
}

}  // namespace
