// The cuda plan is the back end's static machine description (Backend::machineModel): `--plan-only`
// prints the same plan whether or not a GPU is present, and whatever its SM count, so a plan (and a
// key) made on a CI machine is the one a GPU machine makes. The GPU is a stand-in libcudart
// (data/fake_cudart.c: FAKE_CUDART_SMS SMs, or none) loaded through SK_CUDART. Needs neither nvcc nor
// a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <optional>
#include <string>

#include "tools/ToolTestUtil.h"

namespace sk {
namespace cuda_plan_test {
namespace {
namespace fs = std::filesystem;

tooltest::Result planOnly(const std::string& list, std::optional<std::string> sms,
                          std::vector<std::string> extra = {}) {
  tooltest::Spawn s;
  s.argv = {tooltest::kCompile, list, "--plan-only"};
  for (auto& e : extra) s.argv.push_back(std::move(e));
  s.env["SK_CUDART"] = SK_FAKE_CUDART;
  s.env["FAKE_CUDART_SMS"] = std::move(sms);
  return tooltest::run(s);
}

std::string example(const std::string& rel) { return (fs::path(SK_SOURCE_ROOT) / "examples" / rel).string(); }

// The stand-in really is a present GPU when FAKE_CUDART_SMS is set (else this test proves nothing).
TEST(CudaPlan, TheStandInRuntimeReportsItsGpu) {
  void* h = dlopen(SK_FAKE_CUDART, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  using Count = int (*)(int*);
  using Attr = int (*)(int*, int, int);
  auto count = reinterpret_cast<Count>(dlsym(h, "cudaGetDeviceCount"));
  auto attr = reinterpret_cast<Attr>(dlsym(h, "cudaDeviceGetAttribute"));
  ASSERT_TRUE(count && attr);
  int n = -1, sms = -1;
  ::setenv("FAKE_CUDART_SMS", "66", 1);
  EXPECT_EQ(count(&n), 0);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(attr(&sms, 16, 0), 0);  // cudaDevAttrMultiProcessorCount
  EXPECT_EQ(sms, 66);
  ::unsetenv("FAKE_CUDART_SMS");
  EXPECT_NE(count(&n), 0);
  EXPECT_EQ(n, 0);
  dlclose(h);
}

TEST(CudaPlan, PlanOnlyIsTheSameWithAndWithoutAGpu) {
  for (const std::string& list : {example("decode_layer/decode_layer.json"), example("decode_loop/decode_loop.json")}) {
    SCOPED_TRACE(list);
    const tooltest::Result absent = planOnly(list, std::nullopt, {"--target", "cuda"});
    ASSERT_EQ(absent.code, 0) << absent.all();
    // The plan is made for one CTA per SM of an H100 (arch native: the documented default), not the GPU found.
    EXPECT_NE(absent.out.find("132 resident CTAs"), std::string::npos) << absent.out;
    for (const char* sms : {"66", "200"}) {
      const tooltest::Result present = planOnly(list, sms, {"--target", "cuda"});
      ASSERT_EQ(present.code, 0) << present.all();
      EXPECT_EQ(present.out, absent.out) << "with a GPU of " << sms << " SMs";
    }
  }
}

TEST(CudaPlan, TheArchNamesTheMachine) {
  // An arch one datacenter GPU defines plans for its SMs (sm_80: an A100's 108); any other for the default.
  std::ifstream in(fs::path(SK_SOURCE_ROOT) / "tests/cuda/data/tiny.json");
  std::stringstream text;
  text << in.rdbuf();
  const std::string tiny = text.str();
  const fs::path dir = fs::temp_directory_path() / ("sk-cuda-plan-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const auto& [arch, ctas] : {std::pair<std::string, std::string>{"sm_80", "108 resident CTAs"},
                                   {"sm_90", "132 resident CTAs"}, {"sm_100", "148 resident CTAs"},
                                   {"compute_80", "108 resident CTAs"}, {"sm_86", "132 resident CTAs"}}) {
    std::string withArch = tiny;
    withArch.replace(withArch.find("\"target\": \"cuda\","), 17, "\"target\": \"cuda\", \"arch\": \"" + arch + "\",");
    const fs::path list = dir / (arch + ".json");
    std::ofstream(list) << withArch;
    tooltest::Result r = planOnly(list.string(), "66");
    ASSERT_EQ(r.code, 0) << arch << ": " << r.all();
    EXPECT_NE(r.out.find("(arch " + arch + "), " + ctas), std::string::npos) << arch << ": " << r.out;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace cuda_plan_test
}  // namespace sk
