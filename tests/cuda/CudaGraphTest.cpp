// The cuda device's launch graphs (the Graph and Graph + PDL baselines of `sk-compile --run --baselines`), host
// side, on a stand-in libcudart that records every graph call (data/fake_cudart.c): the capture is one stream
// capture instantiated once, each replay one cudaGraphLaunch, the PDL attribute is set on every launch but the
// first, everything is destroyed in order, a failure inside the capture still ends it, and a runtime or GPU that
// cannot run a baseline says why (the skip line). Needs neither nvcc nor a GPU; what runs on a GPU is
// tests/cuda/gpu (and scripts/gpu-check.sh).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/CudaGraph.h"
#include "backends/cuda/CudaRuntime.h"
#include "cuda/CudaTestUtil.h"
#include "superkernel/driver/Process.h"
#include "tools/ToolTestUtil.h"

namespace sk {
namespace cuda_graph_test {
namespace {

// The stand-in's recorder (the same instance loadCudaRuntimeFrom bound: dlopen of one path is one library).
struct Recorder {
  using LogFn = const char* (*)();
  using ResetFn = void (*)();
  using FailFn = void (*)(const char*);
  LogFn log = nullptr;
  ResetFn reset = nullptr;
  FailFn fail = nullptr;

  explicit Recorder(const char* path) {
    void* h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(h, nullptr) << ::dlerror();
    log = reinterpret_cast<LogFn>(::dlsym(h, "fake_cudart_log"));
    reset = reinterpret_cast<ResetFn>(::dlsym(h, "fake_cudart_reset"));
    fail = reinterpret_cast<FailFn>(::dlsym(h, "fake_cudart_fail"));
    EXPECT_TRUE(log && reset && fail);
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::istringstream in(log());
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
};

// One GPU of 132 SMs and compute capability `cc` (FAKE_CUDART_*), and the runtime at `path` bound apart.
CudaRuntimeApi fakeRuntime(const char* path, const char* cc = "90") {
  ::setenv("FAKE_CUDART_SMS", "132", 1);
  ::setenv("FAKE_CUDART_CC", cc, 1);
  auto api = loadCudaRuntimeFrom(path);
  EXPECT_TRUE(api.ok()) << api.error().message();
  return api.ok() ? std::move(*api) : CudaRuntimeApi{};
}

const CudaKernelLaunch kLaunches[3] = {
    {reinterpret_cast<const void*>(0x1000), 40, 256, 0, 0, 7},
    {reinterpret_cast<const void*>(0x2000), 8, 128, 4096, 0, 7},
    {reinterpret_cast<const void*>(0x3000), 132, 256, 0, 0, 7},
};

Status launchAll(const CudaRuntimeApi& api, void* stream, bool pdl) {
  for (size_t i = 0; i < std::size(kLaunches); ++i)
    SK_RETURN_IF_ERROR(launchKernelEx(api, kLaunches[i], stream, pdl && i > 0));
  return Status::success();
}

TEST(CudaGraph, GraphPlusPdlIsCapturedOnceReplayedPerLaunchAndDestroyedInOrder) {
  const CudaRuntimeApi api = fakeRuntime(SK_FAKE_CUDART);
  Recorder rec(SK_FAKE_CUDART);
  rec.reset();
  EXPECT_EQ(cudaGraphUnavailable(api, /*pdl=*/true), "");
  {
    auto g = CudaGraph::create(api);
    ASSERT_TRUE(g.ok()) << g.error().message();
    Status st = (*g)->capture([&](void* stream) { return launchAll(api, stream, /*pdl=*/true); });
    ASSERT_TRUE(st.ok()) << st.error().message();
    for (int r = 0; r < 3; ++r) ASSERT_TRUE((*g)->launch().ok());
  }
  // Handles: stream 1, graph 2, executable graph 3. The programmatic-stream-serialization attribute (id 6) is
  // set to 1 on the second and third launch, never on the first (it has no kernel before it in the graph).
  const std::vector<std::string> expected = {
      "cudaStreamCreateWithFlags flags=1 -> 1",
      "cudaStreamBeginCapture 1 mode=1",
      "cudaLaunchKernelExC func=0x1000 grid=40,1,1 block=256,1,1 smem=0 stream=1 arg0=7 attrs=none",
      "cudaLaunchKernelExC func=0x2000 grid=8,1,1 block=128,1,1 smem=4096 stream=1 arg0=7 attrs=6:1",
      "cudaLaunchKernelExC func=0x3000 grid=132,1,1 block=256,1,1 smem=0 stream=1 arg0=7 attrs=6:1",
      "cudaStreamEndCapture 1 -> 2",
      "cudaGraphInstantiateWithFlags 2 flags=0 -> 3",
      "cudaGraphLaunch 3 on 1",
      "cudaGraphLaunch 3 on 1",
      "cudaGraphLaunch 3 on 1",
      "cudaGraphExecDestroy 3",
      "cudaGraphDestroy 2",
      "cudaStreamDestroy 1",
  };
  EXPECT_EQ(rec.lines(), expected);
}

TEST(CudaGraph, WithoutPdlNoLaunchCarriesTheAttribute) {
  const CudaRuntimeApi api = fakeRuntime(SK_FAKE_CUDART);
  Recorder rec(SK_FAKE_CUDART);
  rec.reset();
  auto g = CudaGraph::create(api);
  ASSERT_TRUE(g.ok()) << g.error().message();
  ASSERT_TRUE((*g)->capture([&](void* stream) { return launchAll(api, stream, /*pdl=*/false); }).ok());
  size_t launches = 0;
  for (const std::string& l : rec.lines())
    if (l.rfind("cudaLaunchKernelExC", 0) == 0) {
      ++launches;
      EXPECT_NE(l.find("attrs=none"), std::string::npos) << l;
    }
  EXPECT_EQ(launches, 3u);
}

// A launch that fails inside the capture: the capture still ends (a stream left capturing would fail every
// later call on it), the error says where it happened, nothing is instantiated, and the partial graph and the
// stream are freed.
TEST(CudaGraph, AFailureInsideTheCaptureEndsItAndFreesThePartialGraph) {
  const CudaRuntimeApi api = fakeRuntime(SK_FAKE_CUDART);
  Recorder rec(SK_FAKE_CUDART);
  rec.reset();
  {
    auto g = CudaGraph::create(api);
    ASSERT_TRUE(g.ok()) << g.error().message();
    Status st = (*g)->capture([&](void* stream) -> Status {
      SK_RETURN_IF_ERROR(launchKernelEx(api, kLaunches[0], stream, false));
      return runtimeError("the second step's launch failed");
    });
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message().find("while capturing a launch graph: the second step's launch failed"),
              std::string::npos)
        << st.error().message();
    EXPECT_FALSE((*g)->launch().ok());  // never instantiated
  }
  const std::vector<std::string> lines = rec.lines();
  ASSERT_EQ(lines.size(), 6u) << rec.log();
  EXPECT_EQ(lines[3], "cudaStreamEndCapture 1 -> 2");
  EXPECT_EQ(lines[4], "cudaGraphDestroy 2");
  EXPECT_EQ(lines[5], "cudaStreamDestroy 1");
}

TEST(CudaGraph, AnInstantiationFailureIsNamed) {
  const CudaRuntimeApi api = fakeRuntime(SK_FAKE_CUDART);
  Recorder rec(SK_FAKE_CUDART);
  rec.reset();
  rec.fail("cudaGraphInstantiateWithFlags");
  auto g = CudaGraph::create(api);
  ASSERT_TRUE(g.ok()) << g.error().message();
  Status st = (*g)->capture([&](void* stream) { return launchAll(api, stream, true); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("cudaGraphInstantiateWithFlags: invalid argument (cudaErrorInvalidValue, 1)"),
            std::string::npos)
      << st.error().message();
}

// What sk-compile turns into its one skip line per baseline.
TEST(CudaGraph, ARuntimeOrGpuThatCannotRunABaselineSaysWhy) {
  {
    const CudaRuntimeApi old = fakeRuntime(SK_FAKE_CUDART_OLD);
    EXPECT_EQ(cudaGraphUnavailable(old, /*pdl=*/false), "");  // graphs: there
    EXPECT_EQ(cudaGraphUnavailable(old, /*pdl=*/true), std::string(SK_FAKE_CUDART_OLD) + " lacks cudaLaunchKernelExC");
    const Status st = launchKernelEx(old, kLaunches[0], nullptr, true);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message().find("lacks cudaLaunchKernelExC"), std::string::npos) << st.error().message();
  }
  {
    const CudaRuntimeApi ampere = fakeRuntime(SK_FAKE_CUDART, "80");
    EXPECT_EQ(cudaGraphUnavailable(ampere, false), "");
    EXPECT_EQ(cudaGraphUnavailable(ampere, true),
              "programmatic dependent launch needs sm_90 or newer: this GPU is sm_80");
  }
  {
    CudaRuntimeApi none = fakeRuntime(SK_FAKE_CUDART);
    ::unsetenv("FAKE_CUDART_SMS");  // no device: the run reports that, not the baseline
    EXPECT_EQ(cudaGraphUnavailable(none, true), "");
  }
  {
    CudaRuntimeApi bare = fakeRuntime(SK_FAKE_CUDART);
    bare.graphMissing = "cudaStreamBeginCapture, cudaGraphLaunch";  // as an old runtime would bind
    EXPECT_EQ(cudaGraphUnavailable(bare, false),
              std::string(SK_FAKE_CUDART) + " lacks cudaStreamBeginCapture, cudaGraphLaunch");
    auto g = CudaGraph::create(bare);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().message().find("no CUDA graphs"), std::string::npos) << g.error().message();
  }
}

// Through sk-compile: the baseline the runtime cannot run is skipped with one note, decided before anything
// compiles (here nothing can: SK_NVCC is a stand-in that answers --version and fails every compile, so the run
// ends at the compile with exit 3).
TEST(CudaGraph, SkCompileSkipsTheBaselineWithOneLine) {
  cudatest::TempDir dir("skip");
  const std::filesystem::path nvcc = dir.path / "nvcc";
  {
    std::ofstream out(nvcc);
    out << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0 (stand-in)'; "
           "exit 0; fi\necho 'stand-in nvcc: no compiles here' >&2\nexit 1\n";
  }
  std::filesystem::permissions(nvcc, std::filesystem::perms::owner_all);
  tooltest::Spawn s;
  s.argv = {tooltest::kCompile, (std::filesystem::path(SK_SOURCE_ROOT) / "tests/cuda/data/tiny.json").string(),
            "--target", "cuda", "--run", "--baselines", "all"};
  s.env["SK_CUDART"] = SK_FAKE_CUDART_OLD;
  s.env["FAKE_CUDART_SMS"] = "132";
  s.env["SK_NVCC"] = nvcc.string();
  s.env["SK_CACHE_DIR"] = (dir.path / "cache").string();
  const tooltest::Result r = tooltest::run(s);
  EXPECT_EQ(r.code, 3) << r.all();
  const std::string line = std::string("note: the graph+pdl baseline is skipped: ") + SK_FAKE_CUDART_OLD +
                           " lacks cudaLaunchKernelExC\n";
  EXPECT_NE(r.out.find(line), std::string::npos) << r.all();
  EXPECT_EQ(r.out.find("the graph baseline is skipped"), std::string::npos) << r.all();  // graphs are there
}

// The library writes libcudart's launch structures and reads the module's recorded launch without their headers
// (CudaLaunchAbi.h): every size, offset and constant against cuda_runtime.h and superkernel_rt.cuh, by nvcc.
TEST(CudaGraph, TheLaunchStructuresMatchCudaRuntimeAndTheModule) {
  SK_REQUIRE_NVCC(nvcc);
  cudatest::TempDir dir("abi");
  const std::filesystem::path src = dir.path / "abi.cu";
  {
    std::ofstream out(src);
    out << R"(#include <cstddef>
#include <cuda_runtime.h>
#define SK_CUDA_PDL 1
#include "superkernel/cuda/superkernel_rt.cuh"
#include "backends/cuda/CudaLaunchAbi.h"
#define SAME(ours, theirs, field) static_assert(offsetof(ours, field) == offsetof(theirs, field), #field)
static_assert(sizeof(sk::CudaLaunchConfig) == sizeof(cudaLaunchConfig_t), "config");
SAME(sk::CudaLaunchConfig, cudaLaunchConfig_t, gridDim);
SAME(sk::CudaLaunchConfig, cudaLaunchConfig_t, blockDim);
SAME(sk::CudaLaunchConfig, cudaLaunchConfig_t, dynamicSmemBytes);
SAME(sk::CudaLaunchConfig, cudaLaunchConfig_t, stream);
SAME(sk::CudaLaunchConfig, cudaLaunchConfig_t, attrs);
SAME(sk::CudaLaunchConfig, cudaLaunchConfig_t, numAttrs);
static_assert(sizeof(sk::CudaDim3) == sizeof(dim3), "dim3");
static_assert(sizeof(sk::CudaLaunchAttribute) == sizeof(cudaLaunchAttribute), "attribute");
static_assert(alignof(sk::CudaLaunchAttribute) == alignof(cudaLaunchAttribute), "attribute alignment");
SAME(sk::CudaLaunchAttribute, cudaLaunchAttribute, id);
SAME(sk::CudaLaunchAttribute, cudaLaunchAttribute, val);
static_assert(offsetof(sk::CudaLaunchAttribute, val.programmaticStreamSerializationAllowed) ==
              offsetof(cudaLaunchAttribute, val.programmaticStreamSerializationAllowed), "value");
static_assert(sk::kCudaLaunchAttributeProgrammaticStreamSerialization ==
              (int)cudaLaunchAttributeProgrammaticStreamSerialization, "attribute id");
static_assert(sk::kCudaStreamCaptureModeThreadLocal == (int)cudaStreamCaptureModeThreadLocal, "capture mode");
static_assert(sk::kCudaStreamNonBlocking == cudaStreamNonBlocking, "stream flag");
static_assert(sizeof(sk::CudaKernelLaunch) == sizeof(sk_kernel_launch), "recorded launch");
SAME(sk::CudaKernelLaunch, sk_kernel_launch, func);
SAME(sk::CudaKernelLaunch, sk_kernel_launch, grid);
SAME(sk::CudaKernelLaunch, sk_kernel_launch, threads);
SAME(sk::CudaKernelLaunch, sk_kernel_launch, smem);
SAME(sk::CudaKernelLaunch, sk_kernel_launch, epoch);
)";
  }
  auto r = runProcess({nvcc, "-c", "-std=c++17", "-arch=sm_90", "-I" + std::string(SK_SOURCE_ROOT) + "/src",
                       "-I" + std::string(SK_SOURCE_ROOT) + "/runtime/cuda/include", src.string(), "-o",
                       (dir.path / "abi.o").string()});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exitCode, 0) << r->err;
}

}  // namespace
}  // namespace cuda_graph_test
}  // namespace sk
