// The cuda sync calibration (src/backends/cuda/CudaCalibrate.cpp, runtime/cuda/calibration/sync_calibration.cu),
// run by the simulator (cuda-sim compiles and runs the same kernel text as host C++): it measures positive
// costs, is cached under calibration/cuda-sim-<CTAs>.json where the next plan reads it, refuses what it cannot
// measure with one clear error, and its arithmetic refuses times too noisy to trust. cuda itself keeps no
// default costs: its plans change only with a calibration or $SK_SYNC_COSTS (checked here on plans only; the
// GPU run is scripts/gpu-check.sh's). Needs the host compiler only.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/cuda/CudaCalibrate.h"
#include "cache/TestUtil.h"
#include "superkernel/session/PlanOnly.h"
#include "superkernel/superkernel.h"
#include "tools/ToolTestUtil.h"

namespace sk {
namespace cuda_calibrate_test {
namespace {
namespace fs = std::filesystem;

OpList decodeLayer() {
  auto list = loadOpList(fs::path(SK_SOURCE_ROOT) / "examples" / "decode_layer" / "decode_layer.json");
  EXPECT_TRUE(list.ok()) << (list ? "" : list.error().message());
  return list ? std::move(*list) : OpList{};
}

Expected<PlanOnlyResult> planFor(const std::string& target, const fs::path& cacheDir) {
  PlanOnlyConfig pc;
  pc.cacheDir = cacheDir;
  CompileRequest req;
  req.target = target;
  return planOnly(decodeLayer(), req, pc);
}

uint32_t edges(const FusionPlan& p, SyncKind k) {
  auto it = p.report.syncs.edges.find(k);
  return it == p.report.syncs.edges.end() ? 0u : it->second;
}

bool positiveFinite(double ns) { return std::isfinite(ns) && ns > 0 && ns <= 1e7; }

// What a busy host makes of a calibration (cudaSyncCostsFromTimes' refusal, checked below): the sync-free chain
// varied too much, three times over. The only error a run may end with and still not be a failure of this code:
// a boundary that comes out too cheap is one (the simulator's hand-offs cost microseconds, so only a chain
// whose syncs wait for nothing gets there).
bool hostWasBusy(const Error& e) {
  return e.kind() == ErrorKind::Runtime && e.message().find("the chain without syncs varied by") != std::string::npos;
}

TEST(CudaCalibrate, TheSimulatorMeasuresCachesAndTheNextPlanReadsIt) {
  test::ScopedEnv noCosts("SK_SYNC_COSTS", nullptr);
  test::ScopedEnv sms("SK_CUDA_SIM_SMS", "2");
  test::TempDir dir("cuda-calib");
  // The kernel is built in the session's cache, not in the one at the default root.
  test::TempDir elsewhere("cuda-calib-default-root");
  test::ScopedEnv cacheRoot("SK_CACHE_DIR", elsewhere.path().c_str());
  SessionOptions o;
  o.cacheDir = dir.path();
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto costs = (*s)->calibrateSync("cuda-sim");
  if (!costs && hostWasBusy(costs.error())) GTEST_SKIP() << costs.error().message();
  ASSERT_TRUE(costs.ok()) << costs.error().message();
  EXPECT_TRUE(positiveFinite(costs->barrierNs)) << costs->barrierNs;
  EXPECT_TRUE(positiveFinite(costs->counterNs)) << costs->counterNs;
  EXPECT_TRUE(positiveFinite(costs->flagNs)) << costs->flagNs;

  // Cached per target and CTA count, saying the numbers are the simulator's.
  const fs::path file = dir.path() / "calibration" / "cuda-sim-2.json";
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(costs->source, "calibrated, " + file.string());
  const nlohmann::json j = nlohmann::json::parse(test::readFile(file));
  EXPECT_EQ(j.value("target", ""), "cuda-sim");
  EXPECT_EQ(j.value("cores", 0), 2);
  EXPECT_NE(j.value("measured", "").find("cuda simulator on 2 CTAs"), std::string::npos) << j.dump();
  EXPECT_NE(j.value("measured", "").find("not a GPU"), std::string::npos) << j.dump();
  // The kernel was built through the cache (one superkernel entry; the calibration saved nothing else there).
  size_t entries = 0;
  for (auto it = fs::recursive_directory_iterator(dir.path() / "entries"); it != fs::recursive_directory_iterator();
       ++it)
    entries += it->path().filename() == "superkernel_sim.so";
  EXPECT_EQ(entries, 1u);
  EXPECT_FALSE(fs::exists(elsewhere.path() / "entries")) << "the calibration built in the default cache";

  // The next plan for 2 simulated SMs reads it, and the report says where the costs came from; a plan for
  // 4 SMs has no calibration and, without defaults, no costs.
  auto planned = planFor("cuda-sim", dir.path());
  ASSERT_TRUE(planned.ok()) << planned.error().message();
  EXPECT_EQ(planned->plan.plan.machine.syncCosts, *costs);
  EXPECT_NE(planned->plan.plan.report.syncModel.costs.find("calibrated, " + file.string()), std::string::npos)
      << planned->plan.plan.report.syncModel.costs;
  test::ScopedEnv wider("SK_CUDA_SIM_SMS", "4");
  auto other = planFor("cuda-sim", dir.path());
  ASSERT_TRUE(other.ok()) << other.error().message();
  EXPECT_FALSE(other->plan.plan.machine.syncCosts.known());
}

TEST(CudaCalibrate, OneCtaHasNothingToMeasure) {
  test::ScopedEnv sms("SK_CUDA_SIM_SMS", "1");
  test::TempDir dir("cuda-calib-one");
  SessionOptions o;
  o.cacheDir = dir.path();
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto c = (*s)->calibrateSync("cuda-sim");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(c.error().message().find("needs at least 2 CTAs (cuda-sim has 1)"), std::string::npos)
      << c.error().message();
  EXPECT_NE(c.error().message().find("SK_CUDA_SIM_SMS"), std::string::npos) << c.error().message();
  EXPECT_FALSE(fs::exists(dir.path() / "calibration" / "cuda-sim-1.json"));
}

// A kernel that does not build is one error: what was being built, and the compiler's words; nothing is saved.
TEST(CudaCalibrate, AKernelThatDoesNotBuildIsOneClearError) {
  test::TempDir dir("cuda-calib-cc");
  const fs::path cc = dir.path() / "broken-cxx";
  // Identifies itself as a compiler (the toolchain's --version), fails every compile with a message.
  test::writeFile(cc,
                  "#!/bin/sh\n"
                  "if [ \"$1\" = --version ]; then echo 'broken-cxx version 1.0'; exit 0; fi\n"
                  "echo 'broken-cxx: cannot compile anything' >&2\nexit 1\n",
                  0755);
  tooltest::Spawn sp;
  sp.argv = {tooltest::kCompile, "--calibrate", "--target", "cuda-sim", "--cache-dir", dir.path().string()};
  sp.env["SK_CUDA_SIM_CXX"] = cc.string();
  sp.env["SK_CUDA_SIM_SMS"] = std::string("2");
  const tooltest::Result r = tooltest::run(sp);
  EXPECT_EQ(r.code, 3) << r.all();  // a compile failure
  EXPECT_NE(r.err.find("sync calibration: building its kernel"), std::string::npos) << r.all();
  EXPECT_NE(r.err.find("broken-cxx: cannot compile anything"), std::string::npos) << r.all();
  EXPECT_EQ(r.err.find("sk-compile: error:"), 0u) << r.all();
  EXPECT_EQ(r.err.find("error:", std::string("sk-compile: error:").size()), std::string::npos)
      << "one error, not several: " << r.all();
  EXPECT_FALSE(fs::exists(dir.path() / "calibration" / "cuda-sim-2.json"));
}

// The arithmetic (GPU and simulator alike): per kind, the median excess over the ideal chain per boundary; times
// too noisy to trust are refused, saying why and what to do.
TEST(CudaCalibrate, TimesGiveCostsOrSayWhyNot) {
  CudaSyncTimes t;
  t.boundaries = 100;
  t.ctas = 132;
  for (int r = 0; r < 9; ++r) {
    const double ideal = 200000 + 1000 * (r % 3);
    t.ideal.push_back(ideal);
    t.barrier.push_back(ideal + 100 * 800);
    t.counter.push_back(ideal + 100 * 1100);
    t.flag.push_back(ideal + 100 * 1000);
  }
  auto c = cudaSyncCostsFromTimes(t);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->barrierNs, 800);
  EXPECT_EQ(c->counterNs, 1100);
  EXPECT_EQ(c->flagNs, 1000);
  EXPECT_EQ(c->source, "measured on 132 CTAs of the GPU");
  t.simulator = true;
  c = cudaSyncCostsFromTimes(t);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->source.find("cuda simulator"), std::string::npos) << c->source;

  CudaSyncTimes noisy = t;  // the sync-free chain varies by half between repetitions
  for (size_t r = 0; r < noisy.ideal.size(); r += 2) noisy.ideal[r] *= 1.5;
  c = cudaSyncCostsFromTimes(noisy);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::Runtime);
  EXPECT_NE(c.error().message().find("the chain without syncs varied by"), std::string::npos) << c.error().message();
  EXPECT_NE(c.error().message().find("run sk-compile --calibrate --target cuda-sim again"), std::string::npos);

  CudaSyncTimes free = t;  // a flag that costs nothing: another job took the ideal's time
  t.simulator = false;
  free.simulator = false;
  free.flag = free.ideal;
  c = cudaSyncCostsFromTimes(free);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("a flag came out at 0 ns per boundary"), std::string::npos) << c.error().message();
  EXPECT_NE(c.error().message().find("--target cuda again"), std::string::npos) << c.error().message();

  CudaSyncTimes slow = t;  // 20 ms per barrier: more than any plan accepts
  for (size_t r = 0; r < slow.barrier.size(); ++r) slow.barrier[r] = slow.ideal[r] + 100 * 2e7;
  c = cudaSyncCostsFromTimes(slow);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("more than the 10000000 ns the planner accepts"), std::string::npos)
      << c.error().message();

  CudaSyncTimes none;
  EXPECT_EQ(cudaSyncCostsFromTimes(none).error().kind(), ErrorKind::Internal);
}

// cuda and cuda-sim have no default costs: a plan keeps the rules' syncs until $SK_SYNC_COSTS or a calibration
// gives some, and then the sync model acts on it, which the report's counts and its costs line show.
TEST(CudaCalibrate, CostsFromTheEnvironmentChangeACudaPlansSyncs) {
  test::ScopedEnv noCosts("SK_SYNC_COSTS", nullptr);
  test::ScopedEnv sms("SK_CUDA_SIM_SMS", nullptr);
  test::TempDir dir("cuda-calib-env");  // no calibration in it
  for (const std::string target : {"cuda", "cuda-sim"}) {
    SCOPED_TRACE(target);
    auto plain = planFor(target, dir.path());
    ASSERT_TRUE(plain.ok()) << plain.error().message();
    const FusionPlan& p0 = plain->plan.plan;
    EXPECT_FALSE(p0.machine.syncCosts.known());
    EXPECT_FALSE(p0.report.syncModel.on);
    EXPECT_EQ(p0.report.syncs.barriers, 0u);
    EXPECT_EQ(edges(p0, SyncKind::Barrier), 0u);

    test::ScopedEnv costs("SK_SYNC_COSTS", "barrier=500,counter=2000,flag=2000");
    auto modelled = planFor(target, dir.path());
    ASSERT_TRUE(modelled.ok()) << modelled.error().message();
    const FusionPlan& p1 = modelled->plan.plan;
    EXPECT_TRUE(p1.report.syncModel.on);
    EXPECT_EQ(p1.machine.syncCosts.source, "$SK_SYNC_COSTS");
    EXPECT_NE(p1.report.syncModel.costs.find("barrier 500 ns"), std::string::npos) << p1.report.syncModel.costs;
    EXPECT_GT(p1.report.syncModel.boundaries, 0u);
    EXPECT_GT(p1.report.syncs.barriers, 0u);
    EXPECT_GT(edges(p1, SyncKind::Barrier), 0u);
    EXPECT_LT(edges(p1, SyncKind::Counter) + edges(p1, SyncKind::Flag),
              edges(p0, SyncKind::Counter) + edges(p0, SyncKind::Flag));
    EXPECT_NE(formatPlanReport(p1).find("costs barrier 500 ns, counter 2000 ns, flag 2000 ns ($SK_SYNC_COSTS)"),
              std::string::npos)
        << formatPlanReport(p1);
  }

  // A calibration file for the GPU the arch names (native: 132 CTAs) is read by cuda plans, and named.
  fs::create_directories(dir.path() / "calibration");
  const fs::path file = dir.path() / "calibration" / "cuda-132.json";
  test::writeFile(file, R"({"version": 1, "barrier_ns": 900, "counter_ns": 1500, "flag_ns": 1200})");
  auto calibrated = planFor("cuda", dir.path());
  ASSERT_TRUE(calibrated.ok()) << calibrated.error().message();
  const FusionPlan& p2 = calibrated->plan.plan;
  EXPECT_EQ(p2.machine.syncCosts.barrierNs, 900);
  EXPECT_TRUE(p2.report.syncModel.on);
  EXPECT_GT(p2.report.syncs.barriers, 0u);
  EXPECT_NE(formatPlanReport(p2).find("flag 1200 ns (calibrated, " + file.string() + ")"), std::string::npos)
      << formatPlanReport(p2);
}

}  // namespace
}  // namespace cuda_calibrate_test
}  // namespace sk
