// The cpu back end through the seam: its machine model and the options it
// reports as not applicable.
#include <gtest/gtest.h>

#include <filesystem>

#include "superkernel/superkernel.h"
#include "backends/cpu/CpuBackend.h"

namespace sk {
namespace {

// Uncalibrated costs: a barrier and a counter on the line through the 2-core VM's and the 16-core Xeon's
// measured costs (340 / 2105 ns and 400 / 2258 ns), a flag the same at any width.
TEST(CpuBackend, DefaultSyncCostsGrowWithTheWorkers) {
  const SyncCosts two = cpuMachineModel(2).syncCosts, sixteen = cpuMachineModel(16).syncCosts;
  EXPECT_EQ(two.barrierNs, 340);
  EXPECT_EQ(two.counterNs, 400);
  EXPECT_EQ(two.flagNs, 380);
  EXPECT_EQ(sixteen.barrierNs, 340 + 14 * 126);  // 2104 (the Xeon: 2105)
  EXPECT_EQ(sixteen.counterNs, 400 + 14 * 133);  // 2262 (the Xeon: 2258)
  const SyncCosts eight = cpuMachineModel(8).syncCosts;  // the Xeon at 8: 1000 and 1139
  EXPECT_EQ(eight.barrierNs, 340 + 6 * 126);
  EXPECT_EQ(eight.counterNs, 400 + 6 * 133);
  EXPECT_EQ(sixteen.flagNs, 380);
  EXPECT_EQ(cpuMachineModel(1).syncCosts.barrierNs, 340);  // one worker: every edge local, costs unused
}

// What the defaults are for: an uncalibrated machine plans the decode stack (examples/decode_stack, 61 layers)
// as the calibrated one it stands for. At 16 workers the Xeon's measured costs keep every flag and counter
// edge (tests/plan/SyncCostTest.cpp), and so must the defaults: the proportional defaults made 61 barriers
// there that ran 1-5% slower (docs/PERFORMANCE.md section 9b). At 2 workers the model's 609 barriers stay.
TEST(CpuBackend, DefaultSyncCostsPlanTheDecodeStackAsMeasured) {
  auto l = loadOpList(std::filesystem::path(SK_SOURCE_ROOT) / "examples/decode_stack/decode_stack.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  auto o = parseOptions("early-start=1");
  ASSERT_TRUE(o.ok());
  auto barriers = [&](uint32_t workers) {
    auto p = planOpList(*l, *o, PlanConfig{cpuMachineModel(workers), true});
    EXPECT_TRUE(p.ok()) << (p ? "" : p.error().message());
    return p ? p->report.syncModel.boundaries : size_t{999};
  };
  EXPECT_EQ(barriers(16), 0u);
  EXPECT_EQ(barriers(8), 244u);  // as with the Xeon's 8-worker costs (1000, 1139, 449 ns)
  EXPECT_EQ(barriers(2), 609u);
}

// The sync calibration's arithmetic and its trust limits, on timings written here: per kind, the median of the
// per-repetition excess over the ideal, per boundary; timings a busy machine makes are an error, not costs.
TEST(CpuBackend, SyncCalibrationTimesGiveCostsOrSayTheMachineWasBusy) {
  SyncCalibrationTimes t;
  t.boundaries = 1000;
  t.workers = 2;
  for (int r = 0; r < 9; ++r) {
    const double ideal = 1e6 + 1000 * r;  // 0.8% spread
    t.ideal.push_back(ideal);
    t.barrier.push_back(ideal + 300e3 + (r == 4 ? 1e6 : 0));  // one disturbed repetition: the median ignores it
    t.counter.push_back(ideal + 400e3);
    t.flag.push_back(ideal + 380e3);
  }
  auto c = syncCostsFromTimes(t);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->barrierNs, 300);
  EXPECT_EQ(c->counterNs, 400);
  EXPECT_EQ(c->flagNs, 380);
  EXPECT_EQ(c->source, "measured on 2 workers");

  SyncCalibrationTimes noisy = t;  // the same work took twice as long in half the repetitions
  for (int r = 0; r < 9; r += 2) noisy.ideal[r] *= 2;
  auto n = syncCostsFromTimes(noisy);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind(), ErrorKind::Runtime);
  EXPECT_NE(n.error().message().find("the chain without syncs varied by"), std::string::npos) << n.error().message();
  EXPECT_NE(n.error().message().find("nothing was saved: run sk-compile --calibrate again when it is idle"),
            std::string::npos);

  SyncCalibrationTimes cheap = t;  // a flag "cheaper" than the ideal: time taken from the ideal by another job
  for (double& f : cheap.flag) f -= 380e3 + 2e3;
  auto k = syncCostsFromTimes(cheap);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message().find("a flag came out at -2 ns per boundary"), std::string::npos)
      << k.error().message();

  SyncCalibrationTimes none;
  EXPECT_EQ(syncCostsFromTimes(none).error().kind(), ErrorKind::Internal);
}

TEST(CpuBackend, DeviceDescribesItsMachine) {
  auto b = findBackend("cpu");
  ASSERT_TRUE(b.ok()) << b.error().message();
  DeviceOptions o;
  o.cores = 3;
  auto dev = (*b)->makeDevice(o);
  ASSERT_TRUE(dev.ok()) << dev.error().message();
  const MachineModel& m = (*dev)->machine();
  EXPECT_EQ(m.target, "cpu");
  ASSERT_EQ(m.pools.size(), 1u);
  EXPECT_EQ(m.totalCores(), 3u);
  EXPECT_EQ(m.describeCores(3), "the executor's 3 workers");
  ASSERT_NE(cpuExecutor(**dev), nullptr);
  EXPECT_EQ(cpuExecutor(**dev)->numWorkers(), 3u);
  EXPECT_TRUE((*dev)->hostMemory());
  auto recipe = (*b)->makeRecipe();
  EXPECT_EQ(recipe->defaultCompiler(), "clang++");
  EXPECT_EQ(recipe->compilerEnvVar(), "SK_CXX");
  EXPECT_EQ(recipe->artifactName(), "superkernel.so");
  // No side launches on cpu: its machine model never plans them, and the device refuses them.
  EXPECT_FALSE(m.sideLaunches);
  struct NotLoaded : LoadedKernel {} k;
  Status st = (*dev)->runBeside(k, 1, nullptr, nullptr, 0, {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(st.error().message().find("target cpu runs no launches beside a SuperKernel"), std::string::npos);
}

TEST(CpuBackend, SplitModeAndFeedSyncAllAreReportedAsNotApplicable) {
  SessionOptions so;
  so.diskCache = false;
  so.workers = 2;
  auto s = Session::create(so);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto list = loadOpList(std::filesystem::path(SK_SOURCE_ROOT) / "examples/seed/seed.json");
  ASSERT_TRUE(list.ok()) << list.error().message();
  CompileRequest req;
  req.options = "split-mode=2:feed-sync-all=1";
  auto cp = (*s)->compile(*list, req);
  ASSERT_TRUE(cp.ok()) << cp.error().message();
  std::string all;
  for (const auto& w : cp->plan.report.warnings) all += w + "\n";
  EXPECT_NE(all.find("option split-mode=2 does not apply to target cpu"), std::string::npos) << all;
  EXPECT_NE(all.find("option feed-sync-all=1 does not apply to target cpu"), std::string::npos) << all;
  // Without them: no such warning.
  auto plain = (*s)->compile(*list);
  ASSERT_TRUE(plain.ok());
  for (const auto& w : plain->plan.report.warnings) EXPECT_EQ(w.find("does not apply"), std::string::npos) << w;
}

TEST(CpuBackend, UnknownTargetNamesTheSupportedOnes) {
  auto u = findBackend("fpga");
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(u.error().message().find("unknown target 'fpga' (supported: ascend, ascend-sim, cpu, cuda"), std::string::npos)
      << u.error().message();
}

}  // namespace
}  // namespace sk
