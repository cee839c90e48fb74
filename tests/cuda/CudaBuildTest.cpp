// The cuda back end through sk-compile: the examples compile and device-link
// with nvcc for sm_90 into shared objects that export `run`; a kernel that
// does not compile shows nvcc's command line and diagnostics; --run without a
// GPU fails with the one clear "no CUDA device" error. Needs nvcc (skips with
// the reason without it), never a GPU.
#include <gtest/gtest.h>

#include <cstring>

#include "TestCache.h"
#include "cuda/CudaTestUtil.h"
#include "superkernel/driver/Process.h"
#include "backends/cuda/CudaRuntime.h"
#include "tools/ToolTestUtil.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using tooltest::kCompile;
using tooltest::Result;
using tooltest::Spawn;

// Scratch directories and example paths: CudaTestUtil.h.
struct TempDir : cudatest::TempDir {
  TempDir() : cudatest::TempDir("build") {}
};
using cudatest::example;

// One fresh cache per test process (never a cache a previous run filled: every test really runs nvcc), or CI's
// $SK_TEST_CACHE_DIR (tests/TestCache.h: emptied at the start of the run, so the first test that needs an object
// runs nvcc for it). When the program runs all its tests in one process the examples share their 19 sub-kernel
// objects either way; under ctest each test is its own process, and only the shared one spares the recompiles.
// The cuda entries get a cache root of their own there, so the checks that scan it see only them.
TempDir& scratch() {
  static TempDir* dir = new TempDir();  // removed by the environment's TearDown below
  return *dir;
}
const fs::path& sharedCache() {
  static const fs::path cache =
      sktest::sharedTestCache() ? *sktest::sharedTestCache() / "cuda" : scratch().path / "cache";
  return cache;
}

class RemoveSharedCache : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(scratch().path, ec);  // never CI's shared cache
  }
};
const auto* const kRemoveSharedCache = ::testing::AddGlobalTestEnvironment(new RemoveSharedCache);

Result compileCuda(const std::string& list, const TempDir& dir, std::vector<std::string> extra = {}) {
  Spawn s;
  s.argv = {kCompile, list, "--target", "cuda", "--cache-dir", sharedCache().string(), "--emit-source",
            (dir.path / "src").string(), "--jobs", "2"};
  for (auto& e : extra) s.argv.push_back(e);
  s.timeoutSec = 900;
  return tooltest::run(s);
}

// Every published superkernel.so in the cache, with its dynamic symbols checked by nm. Only entries/ is read:
// tests run in parallel on the shared cache, and a link another test has under way in tmp/ is an empty or
// half-written superkernel.so (nm fails on it with no message), not something the cache has published.
void expectSharedObjectsExportRun(const fs::path& cache, size_t atLeast) {
  size_t found = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(cache / "entries", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    if (e.path().filename() != "superkernel.so") continue;
    ++found;
    auto r = runProcess({"nm", "-D", "--defined-only", e.path().string()});
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->exitCode, 0) << e.path() << ": " << r->err;
    EXPECT_NE(r->out.find(" T run\n"), std::string::npos) << e.path() << " does not export run:\n" << r->out;
    // Only `run` and the profiling reader (and the linker's own version node) are exported from the module.
    std::istringstream lines(r->out);
    std::string line;
    while (std::getline(lines, line))
      if (line.find(" T ") != std::string::npos) {
        const std::string name = line.substr(line.find(" T ") + 3);
        EXPECT_TRUE(name == "run" || name == "sk_profile_shape" || name == "sk_read_profile") << line;
      }
  }
  EXPECT_GE(found, atLeast) << "shared objects in " << cache;
}

size_t countFiles(const fs::path& dir, const std::string& ext) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) ++n;
  return n;
}

TEST(CudaBuild, DecodeLayerCompilesAndExportsRun) {
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  Result r = compileCuda(example("decode_layer/decode_layer.json"), dir);
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_GE(countFiles(dir.path / "src", ".cu"), 1u);
  expectSharedObjectsExportRun(sharedCache(), 1);
}

TEST(CudaBuild, DecodeStackCompilesAndExportsRun) {
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  Result r = compileCuda(example("decode_stack/decode_stack.json"), dir);
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_GE(countFiles(dir.path / "src", ".cu"), 1u);
  expectSharedObjectsExportRun(sharedCache(), 1);
}

// The planner's option mixes (all-barrier plans, sync_all, a smaller grid, two queues) emit code that nvcc
// compiles and device-links. The objects are shared, so each mix costs one SuperKernel build.
TEST(CudaBuild, DecodeLayerOptionMixesCompile) {
  SK_REQUIRE_NVCC(nvcc);
  for (const char* o : {"early-start=0", "early-start=2", "debug-sync-all=1", "debug-core-num=8",
                        "stream-fusion=1:debug-core-num=16"}) {
    TempDir dir;
    Result r = compileCuda(example("decode_layer/decode_layer.json"), dir, {"--options", o});
    ASSERT_EQ(r.code, 0) << o << ":\n" << r.all();
    EXPECT_GE(countFiles(dir.path / "src", ".cu"), 1u) << o;
  }
  expectSharedObjectsExportRun(sharedCache(), 5);
}

// The GPU benchmark (bench/cuda, run by scripts/gpu-check.sh) keeps compiling, warning-free.
// Its cluster variants (issue 40) sync through the cluster's own hardware: the PTX of cluster_kernel has the cluster
// barrier, and its flag edge maps the consumer's shared memory (mapa), stores there with a cluster-scope release and
// polls with a cluster-scope acquire; ptxas accepts them for sm_90 (the build above).
TEST(CudaBuild, BoundaryBenchCompiles) {
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  const std::string src = (fs::path(SK_SOURCE_ROOT) / "bench/cuda/boundary_bench.cu").string();
  const std::string inc = "-I" + (fs::path(SK_SOURCE_ROOT) / "runtime/cuda/include").string();
  auto r = runProcess({nvcc, "-O3", "-std=c++17", "-arch=sm_90", inc, "-Xcompiler=-Wall,-Wextra", "-Werror",
                       "all-warnings", src, "-o", (dir.path / "boundary_bench").string()});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exitCode, 0) << r->err;
  const fs::path ptx = dir.path / "boundary_bench.ptx";
  r = runProcess({nvcc, "-O3", "-std=c++17", "-arch=sm_90", inc, "-ptx", src, "-o", ptx.string()});
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->exitCode, 0) << r->err;
  const std::string text = cudatest::readFile(ptx);
  const size_t at = text.find(".entry _Z14cluster_kernel");
  ASSERT_NE(at, std::string::npos) << "cluster_kernel is not in the PTX";
  const std::string body = text.substr(at, text.find("\n}\n", at) - at);
  for (const char* insn : {"barrier.cluster.arrive.release", "barrier.cluster.wait.acquire", "mapa.shared::cluster",
                           "st.release.cluster.shared::cluster", "ld.acquire.cluster.shared::cta"})
    EXPECT_NE(body.find(insn), std::string::npos) << "cluster_kernel has no " << insn;
}

// bench/cuda/kernel_bw.cu (issue 40 item 3; scripts/gpu-check.sh step 6) builds warning-free, and each of its
// launches reads through 16-byte global loads (the PTX of every wrapper around a builtin kernel, the gemvs, the
// matmuls (f32, bf16, q8_0, q4_0), the norms, attn_decode, kv_append, rope, add, mul, swiglu and the four casts,
// has ld.global.v4, and the MoE gate, which has no vector loads, reduces across lanes by shfl.sync.bfly (its
// warp per row): fails when a kernel's vector or warp path is gone or the bench stops calling the builtin source).
TEST(CudaBuild, KernelBandwidthBenchCompilesAndItsGemvsLoad16Bytes) {
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  const std::string src = (fs::path(SK_SOURCE_ROOT) / "bench/cuda/kernel_bw.cu").string();
  const std::string inc = "-I" + (fs::path(SK_SOURCE_ROOT) / "runtime/cuda/include").string();
  auto r = runProcess({nvcc, "-O3", "-std=c++17", "-arch=sm_90", inc, "-Xcompiler=-Wall,-Wextra", "-Werror",
                       "all-warnings", src, "-o", (dir.path / "kernel_bw").string()});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exitCode, 0) << r->err;
  const fs::path ptx = dir.path / "kernel_bw.ptx";
  r = runProcess({nvcc, "-O3", "-std=c++17", "-arch=sm_90", inc, "-ptx", src, "-o", ptx.string()});
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->exitCode, 0) << r->err;
  const std::string text = cudatest::readFile(ptx);
  // The gemvs, the matmuls and the other vectorised builtins (norm.cu, attention.cu's attn_decode, kv_append and
  // rope, elementwise.cu, cast.cu).
  for (const char* entry : {"launch_f32", "launch_bf16", "launch_f16", "launch_q8_0", "launch_q4_0",
                            "launch_matmul_f32", "launch_matmul_bf16", "launch_matmul_q8_0", "launch_matmul_q4_0",
                            "launch_rms_norm", "launch_add_rms_norm", "launch_attn_decode", "launch_kv_append",
                            "launch_rope", "launch_add", "launch_mul", "launch_swiglu", "launch_cast_f32_bf16",
                            "launch_cast_bf16_f32", "launch_cast_f32_f16", "launch_cast_f16_f32"}) {
    const size_t at = text.find(std::string(".entry _Z") + std::to_string(std::strlen(entry)) + entry);
    ASSERT_NE(at, std::string::npos) << entry << " is not in the PTX";
    const size_t end = text.find("\n}\n", at);
    EXPECT_NE(text.substr(at, end - at).find("ld.global.v4."), std::string::npos)
        << entry << ": no 16-byte global load in its body";
  }
  const size_t gate = text.find(".entry _Z15launch_moe_gate");
  ASSERT_NE(gate, std::string::npos) << "launch_moe_gate is not in the PTX";
  EXPECT_NE(text.substr(gate, text.find("\n}\n", gate) - gate).find("shfl.sync.bfly"), std::string::npos)
      << "launch_moe_gate: no warp shuffle in its body (the gate is a warp per row)";
}

// sync.cuh's two opt-in wait variants (issue 40: -DSK_CUDA_POLL_RELAXED=1, -DSK_CUDA_WAIT_TIMEOUT_NS=N) keep
// compiling warning-free on a golden with every sync kind, alone and together, and the default stays the wait
// that passed on hardware (2026-11-26): acquire polls, no fence, no trap. A device run with both variants on had
// two barrier-heavy tests stall (docs/PERFORMANCE.md 8b), so the default must not drift into either unnoticed.
TEST(CudaBuild, SyncWaitVariantsCompileAndTheDefaultIsTheAcquirePoll) {
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  struct Variant {
    std::vector<std::string> defines;
    bool relaxed, deadline;
  };
  const std::string timeout = "-DSK_CUDA_WAIT_TIMEOUT_NS=1000000000";
  for (const Variant& v : {Variant{{}, false, false}, Variant{{"-DSK_CUDA_POLL_RELAXED=1"}, true, false},
                           Variant{{timeout}, false, true}, Variant{{"-DSK_CUDA_POLL_RELAXED=1", timeout}, true, true}}) {
    const fs::path ptx = dir.path / "sync_kinds.ptx";
    std::vector<std::string> argv = {nvcc, "-std=c++17", "-arch=sm_90", "-rdc=true", "-ptx",
                                     "-I" + (fs::path(SK_SOURCE_ROOT) / "runtime/cuda/include").string(),
                                     "-Xcompiler=-Wall,-Wextra", "-Werror", "all-warnings"};
    argv.insert(argv.end(), v.defines.begin(), v.defines.end());
    argv.insert(argv.end(), {(fs::path(SK_SOURCE_ROOT) / "tests/cuda/golden/sync_kinds.cu").string(), "-o",
                             ptx.string()});
    SCOPED_TRACE(v.defines.empty() ? std::string("defaults") : v.defines.back());
    auto r = runProcess(argv);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->exitCode, 0) << r->err;
    const std::string text = cudatest::readFile(ptx);
    EXPECT_EQ(count(text, "ld.relaxed.gpu") > 0, v.relaxed);
    EXPECT_EQ(count(text, "ld.acquire.gpu") > 0, !v.relaxed);
    EXPECT_EQ(count(text, "fence.acq_rel.gpu") > 0, v.relaxed);
    EXPECT_EQ(count(text, "trap;") > 0, v.deadline);
  }
}

TEST(CudaBuild, SeedExampleCompilesForCuda) {
  // The seed example's kernel is a cpu source: the target without a source is a bad-input error (exit 2) naming
  // the kernel, the target and the fix, found before any compiler runs (so it needs no nvcc).
  TempDir dir;
  Result r = compileCuda(example("seed/seed.json"), dir);
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_NE(r.err.find("kernels.add.sources: kernel \"add\" has no source for target cuda (it has: cpu); declare "
                       "one with \"sources\": {\"cuda\": \"<file>\"}"),
            std::string::npos)
      << r.all();
}

TEST(CudaBuild, CompilerFailureShowsCommandAndDiagnostics) {
  SK_REQUIRE_NVCC(nvcc);
  TempDir dir;
  Result r = compileCuda((fs::path(SK_SOURCE_ROOT) / "tests/cuda/data/bad.json").string(), dir);
  EXPECT_EQ(r.code, 3) << r.all();
  EXPECT_NE(r.all().find("this_is_not_declared"), std::string::npos) << r.all();  // nvcc's diagnostic
  EXPECT_NE(r.all().find("-rdc=true"), std::string::npos) << r.all();             // the command line
  EXPECT_NE(r.all().find("nvcc"), std::string::npos) << r.all();
}

TEST(CudaBuild, RunWithoutDeviceIsOneClearError) {
  SK_REQUIRE_NVCC(nvcc);
  if (cudaRuntimeWithDevice().ok()) GTEST_SKIP() << "a CUDA device is present: the gpu tests run instead";
  TempDir dir;
  // A two-op list: --run builds the unfused reference (one module per distinct kernel) before it runs.
  Result r = compileCuda((fs::path(SK_SOURCE_ROOT) / "tests/cuda/data/tiny.json").string(), dir, {"--run"});
  EXPECT_NE(r.code, 0) << r.all();
  EXPECT_NE(r.code, 1) << "not a result mismatch: " << r.all();
  EXPECT_NE(r.all().find("no CUDA device: "), std::string::npos) << r.all();
}

TEST(CudaBuild, MissingNvccIsNamed) {
  TempDir dir;
  Spawn s;
  s.argv = {kCompile, example("decode_layer/decode_layer.json"), "--target", "cuda", "--cache-dir",
            (dir.path / "cache").string()};
  s.env["SK_NVCC"] = (dir.path / "no-such-nvcc").string();
  Result r = tooltest::run(s);
  EXPECT_EQ(r.code, 3) << r.all();
  EXPECT_NE(r.all().find("SK_NVCC"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace sk
