// Needs a GPU (label gpu): every test skips with the reason where
// cudaGetDeviceCount finds no device. UNVERIFIED until run on a GPU machine
// (scripts/gpu-check.sh).
//  - fused equals unfused bit for bit (sk-compile --run compares every buffer)
//    for the decode layer, the decode stack and the cpu end-to-end scenarios
//    (their kernels ported to cuda), under several option mixes;
//  - the cuda results match the cpu target's within a stated tolerance
//    (|cuda - cpu| <= 1e-3 + 1e-3 |cpu| per f32 element; integer buffers exactly):
//    reductions sum in another order on each target.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "cuda/CudaScenarios.h"
#include "cuda/CudaTestUtil.h"
#include "target/cuda/CudaRuntime.h"
#include "tools/ToolTestUtil.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using tooltest::kCompile;
using tooltest::Result;
using tooltest::Spawn;

#define SK_REQUIRE_GPU()                                                        \
  do {                                                                          \
    auto api_ = cudaRuntimeWithDevice();                                        \
    if (!api_) GTEST_SKIP() << api_.error().message();                          \
  } while (0)

// Scratch directories and example paths: CudaTestUtil.h.
struct TempDir : cudatest::TempDir {
  TempDir() : cudatest::TempDir("gpu") {}
};
using cudatest::example;

Result runList(const std::string& list, const std::string& target, const TempDir& dir, std::vector<std::string> extra) {
  Spawn s;
  s.argv = {kCompile, list, "--target", target, "--run", "--cache-dir", (dir.path / "cache").string()};
  for (auto& e : extra) s.argv.push_back(e);
  s.timeoutSec = 900;
  return tooltest::run(s);
}

class FusedEqualsUnfused : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(FusedEqualsUnfused, BitForBit) {
  SK_REQUIRE_GPU();
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  auto [list, options] = GetParam();
  std::vector<std::string> extra;
  if (std::strlen(options)) extra = {"--options", options};
  Result r = runList(example(list), "cuda", dir, extra);
  EXPECT_EQ(r.code, 0) << r.all();
  EXPECT_NE(r.all().find("identical"), std::string::npos) << r.all();
}

INSTANTIATE_TEST_SUITE_P(
    Cuda, FusedEqualsUnfused,
    ::testing::Combine(::testing::Values("decode_layer/decode_layer.json", "decode_stack/decode_stack.json"),
                       ::testing::Values("", "early-start=0", "early-start=2", "stream-fusion=1",
                                         "debug-sync-all=1", "debug-core-num=8")),
    [](const ::testing::TestParamInfo<FusedEqualsUnfused::ParamType>& info) {
      std::string name = std::string(std::get<0>(info.param)).substr(0, std::string(std::get<0>(info.param)).find('/'));
      std::string opt = std::get<1>(info.param);
      name += "_" + (opt.empty() ? std::string("defaults") : opt);
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// The cpu end-to-end scenarios with their kernels ported to cuda (CudaScenarios.h): fused equals unfused bit
// for bit under the option mixes of CudaScenarios.EveryPlannerScenarioCompiles.
TEST(CudaGpu, EveryPlannerScenarioFusedEqualsUnfused) {
  SK_REQUIRE_GPU();
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  const std::string list = cudatest::writeCudaScenarios(dir.path);
  ASSERT_FALSE(list.empty());
  for (const char* options : {"", "early-start=0:stream-fusion=1", "early-start=2:debug-sync-all=1"}) {
    SCOPED_TRACE(options);
    std::vector<std::string> extra = {"--repeat", "1"};
    if (*options) extra.insert(extra.end(), {"--options", options});
    Result r = runList(list, "cuda", dir, extra);
    EXPECT_EQ(r.code, 0) << r.all();
    EXPECT_NE(r.all().find("identical"), std::string::npos) << r.all();
  }
}

TEST(CudaGpu, DecodeLayerMatchesCpuWithinTolerance) {
  SK_REQUIRE_GPU();
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  const std::string list = example("decode_layer/decode_layer.json");
  Result cpu = runList(list, "cpu", dir, {"--dump", (dir.path / "cpu").string()});
  ASSERT_EQ(cpu.code, 0) << cpu.all();
  Result gpu = runList(list, "cuda", dir, {"--dump", (dir.path / "cuda").string()});
  ASSERT_EQ(gpu.code, 0) << gpu.all();
  auto j = nlohmann::json::parse(cudatest::readFile(list));
  size_t compared = 0;
  for (auto it = j["buffers"].begin(); it != j["buffers"].end(); ++it) {
    const std::string a = cudatest::readFile(dir.path / "cpu" / (it.key() + ".bin"));
    const std::string b = cudatest::readFile(dir.path / "cuda" / (it.key() + ".bin"));
    ASSERT_EQ(a.size(), b.size()) << it.key();
    const std::string dtype = it.value()["dtype"];
    if (dtype != "f32") {
      EXPECT_EQ(a, b) << it.key() << " (" << dtype << ") differs";
      continue;
    }
    for (size_t i = 0; i + 4 <= a.size(); i += 4) {
      float x, y;
      std::memcpy(&x, a.data() + i, 4);
      std::memcpy(&y, b.data() + i, 4);
      ASSERT_LE(std::fabs(x - y), 1e-3f + 1e-3f * std::fabs(x)) << it.key() << "[" << i / 4 << "]: cpu " << x
                                                                   << ", cuda " << y;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0u);
}

}  // namespace
}  // namespace sk
