// Where the sync cost model's costs come from (src/session/SyncCalibration.cpp): the calibration runs and
// is cached under the cache directory, later plans (compile and --plan-only alike) read it, a broken file is
// a warning and the defaults, $SK_SYNC_COSTS overrides it and a malformed one is an error naming it.
#include <gtest/gtest.h>

#include <fstream>

#include "cache/TestUtil.h"
#include "superkernel/session/PlanOnly.h"
#include "superkernel/superkernel.h"
#include "superkernel/target/Backend.h"

namespace sk {
namespace sync_calibration_test {
namespace fs = std::filesystem;

OpList seed() {
  auto list = loadOpList(fs::path(SK_SOURCE_ROOT) / "examples" / "seed" / "seed.json");
  EXPECT_TRUE(list.ok()) << (list ? "" : list.error().message());
  return list ? std::move(*list) : OpList{};
}

Expected<PlanOnlyResult> planIn(const fs::path& cacheDir, uint32_t workers) {
  PlanOnlyConfig pc;
  pc.workers = workers;
  pc.cacheDir = cacheDir;
  return planOnly(seed(), {}, pc);
}

SyncCosts defaults(uint32_t workers) {
  auto b = findBackend("cpu");
  EXPECT_TRUE(b.ok());
  auto m = (*b)->machineModel(MachineQuery{"native", workers});
  EXPECT_TRUE(m.ok());
  return m->syncCosts;
}

TEST(SyncCalibration, RunsAndIsCachedWhereLaterPlansReadIt) {
  test::ScopedEnv noEnv("SK_SYNC_COSTS", nullptr);
  test::TempDir dir("calib");
  SessionOptions o;
  o.workers = 2;
  o.cacheDir = dir.path();
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto costs = (*s)->calibrateSync("cpu");
  // A machine too busy to measure is refused (its arithmetic and limits: CpuBackend.SyncCalibrationTimes...).
  if (!costs && costs.error().kind() == ErrorKind::Runtime) GTEST_SKIP() << costs.error().message();
  ASSERT_TRUE(costs.ok()) << costs.error().message();
  EXPECT_TRUE(costs->known());
  const fs::path file = dir.path() / "calibration" / "cpu-2.json";
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(costs->source, "calibrated, " + file.string());

  // Plans for 2 workers, planned only or compiled, read it; 3 workers have no calibration.
  auto planned = planIn(dir.path(), 2);
  ASSERT_TRUE(planned.ok()) << planned.error().message();
  EXPECT_EQ(planned->plan.plan.machine.syncCosts, *costs);
  auto compiled = (*s)->compile(seed());
  ASSERT_TRUE(compiled.ok()) << compiled.error().message();
  EXPECT_EQ(compiled->plan.machine.syncCosts, *costs);
  auto other = planIn(dir.path(), 3);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->plan.plan.machine.syncCosts, defaults(3));
  EXPECT_NE(defaults(3).source.find("defaults"), std::string::npos);

  // A memory-only session measures and keeps nothing.
  test::TempDir empty("calib-mem");
  o.cacheDir = empty.path();
  o.diskCache = false;
  auto mem = Session::create(o);
  ASSERT_TRUE(mem.ok());
  auto measured = (*mem)->calibrateSync("cpu");
  ASSERT_TRUE(measured.ok() || measured.error().kind() == ErrorKind::Runtime) << measured.error().message();
  EXPECT_FALSE(fs::exists(empty.path() / "calibration"));
}

// A calibration that cannot be saved is an I/O error naming the path, and leaves no temporary file behind.
TEST(SyncCalibration, ACalibrationThatCannotBeSavedIsAnIoError) {
  test::ScopedEnv noEnv("SK_SYNC_COSTS", nullptr);
  test::TempDir dir("calib-io");
  test::writeFile(dir.path() / "calibration", "a file where the directory goes");
  SessionOptions o;
  o.workers = 2;
  o.cacheDir = dir.path();
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto c = (*s)->calibrateSync("cpu");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::Io);
  EXPECT_NE(c.error().message().find("sync calibration: cannot create " + (dir.path() / "calibration").string()),
            std::string::npos)
      << c.error().message();
  EXPECT_EQ(test::readFile(dir.path() / "calibration"), "a file where the directory goes");
}

TEST(SyncCalibration, ABrokenFileIsAWarningAndTheDefaults) {
  test::ScopedEnv noEnv("SK_SYNC_COSTS", nullptr);
  test::TempDir dir("calib-bad");
  fs::create_directories(dir.path() / "calibration");
  const fs::path file = dir.path() / "calibration" / "cpu-2.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "is not JSON"},
      {R"({"version": 9, "barrier_ns": 1, "counter_ns": 2, "flag_ns": 3})", "another format version"},
      {R"({"version": 1, "barrier_ns": -1, "counter_ns": 2, "flag_ns": 3})", "must be numbers of ns"},
      {R"({"version": 1, "barrier_ns": 1, "counter_ns": "2", "flag_ns": 3})", "must be numbers of ns"},
      {R"({"version": 1, "barrier_ns": 1, "counter_ns": 2, "flag_ns": 3, "host": "elsewhere-xyz"})",
       "was measured on host elsewhere-xyz"},
  };
  for (const auto& [text, says] : cases) {
    SCOPED_TRACE(text);
    test::writeFile(file, text);
    auto p = planIn(dir.path(), 2);
    ASSERT_TRUE(p.ok()) << p.error().message();
    EXPECT_EQ(p->plan.plan.machine.syncCosts, defaults(2));
    const auto& w = p->plan.plan.report.warnings;
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find(file.string()), std::string::npos) << w[0];
    EXPECT_NE(w[0].find(says), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("sk-compile --calibrate"), std::string::npos) << w[0];
  }
  // A good one (written by hand: the file is also the override) is taken as is.
  test::writeFile(file, R"({"version": 1, "barrier_ns": 11, "counter_ns": 22, "flag_ns": 33})");
  auto p = planIn(dir.path(), 2);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->plan.plan.machine.syncCosts.barrierNs, 11);
  EXPECT_EQ(p->plan.plan.machine.syncCosts.flagNs, 33);
  EXPECT_TRUE(p->plan.plan.report.warnings.empty());
}

TEST(SyncCalibration, TheEnvironmentOverridesAndAMalformedValueIsBadInput) {
  test::TempDir dir("calib-env");
  {
    test::ScopedEnv env("SK_SYNC_COSTS", "barrier=100,counter=200.5,flag=300");
    auto p = planIn(dir.path(), 2);
    ASSERT_TRUE(p.ok()) << p.error().message();
    const SyncCosts& c = p->plan.plan.machine.syncCosts;
    EXPECT_EQ(c.barrierNs, 100);
    EXPECT_EQ(c.counterNs, 200.5);
    EXPECT_EQ(c.flagNs, 300);
    EXPECT_EQ(c.source, "$SK_SYNC_COSTS");
    EXPECT_NE(p->plan.plan.report.syncModel.costs.find("barrier 100 ns"), std::string::npos);
  }
  for (const char* bad : {"barrier=1,counter=2", "barrier=1,counter=2,flag=x", "barrier=1,counter=2,flag=3,wait=4",
                          "barrier=1,barrier=2,counter=2,flag=3", "barrier=0,counter=2,flag=3", "barrier",
                          "barrier=1e9,counter=2,flag=3"}) {
    SCOPED_TRACE(bad);
    test::ScopedEnv env("SK_SYNC_COSTS", bad);
    auto p = planIn(dir.path(), 2);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind(), ErrorKind::BadInput);
    EXPECT_NE(p.error().message().find("SK_SYNC_COSTS=\"" + std::string(bad) + "\""), std::string::npos)
        << p.error().message();
    EXPECT_NE(p.error().message().find("barrier=<ns>,counter=<ns>,flag=<ns>"), std::string::npos);
  }
}

TEST(SyncCalibration, ATargetWithoutOneSaysSo) {
  test::TempDir dir("calib-none");
  SessionOptions o;
  o.workers = 2;
  o.cacheDir = dir.path();
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok());
  // ascend-sim: its emitter picks its own pool-wide syncs (cuda and cuda-sim have one: tests/cuda/CudaCalibrateTest.cpp).
  auto c = (*s)->calibrateSync("ascend-sim");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(c.error().message().find("target ascend-sim has no sync calibration"), std::string::npos);
  auto unknown = (*s)->calibrateSync("tpu");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind(), ErrorKind::BadInput);
}

}  // namespace sync_calibration_test
}  // namespace sk
