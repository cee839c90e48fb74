// The cpu back end through the seam: its machine model and the options it
// reports as not applicable.
#include <gtest/gtest.h>

#include "superkernel/superkernel.h"

namespace sk {
namespace {

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
  EXPECT_NE(u.error().message().find("unknown target 'fpga' (supported: ascend, cpu, cuda"), std::string::npos)
      << u.error().message();
}

}  // namespace
}  // namespace sk
