// Every planner scenario of the cpu end-to-end tests compiles for cuda
// (issue 11's "done when"): the scenarios op list with its kernels ported to
// cuda (CudaScenarios.h) through sk-compile --target cuda under the option
// mixes that change the generated code most (sync kinds with and without
// early start, stream fusion, debug-sync-all), each step's shared object
// exporting only `run`. Needs nvcc, never a GPU; fused vs unfused on a GPU
// is gpu/CudaGpuTest.cpp.
#include <gtest/gtest.h>

#include "cuda/CudaScenarios.h"
#include "cuda/CudaTestUtil.h"
#include "superkernel/driver/Process.h"
#include "tools/ToolTestUtil.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using tooltest::kCompile;
using tooltest::Result;
using tooltest::Spawn;

TEST(CudaScenarios, EveryPlannerScenarioCompiles) {
  SK_REQUIRE_NVCC(nvcc);
  cudatest::TempDir dir("scenarios");
  const std::string list = cudatest::writeCudaScenarios(dir.path);
  ASSERT_FALSE(list.empty());
  // One cache for all mixes: the sub-kernel objects are shared, each mix links its own steps.
  for (const char* options : {"", "early-start=0:stream-fusion=1", "early-start=2:debug-sync-all=1"}) {
    SCOPED_TRACE(options);
    Spawn s;
    s.argv = {kCompile, list, "--cache-dir", (dir.path / "cache").string(), "--jobs", "2", "--json"};
    if (*options) s.argv.insert(s.argv.end(), {"--options", options});
    s.timeoutSec = 900;
    Result r = tooltest::run(s);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"target\": \"cuda\""));
    EXPECT_THAT(r.out, HasSubstr("\"ok\": true"));
  }
  // Every SuperKernel module exports `run` and nothing else.
  size_t modules = 0;
  for (auto& e : fs::recursive_directory_iterator(dir.path / "cache")) {
    if (e.path().filename() != "superkernel.so") continue;
    ++modules;
    auto nm = runProcess({"nm", "-D", "--defined-only", e.path().string()});
    ASSERT_TRUE(nm.ok()) << nm.error().message();
    EXPECT_NE(nm->out.find(" T run\n"), std::string::npos) << e.path();
  }
  EXPECT_GT(modules, 3u);
}

}  // namespace
}  // namespace sk
