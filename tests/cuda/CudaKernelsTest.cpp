// The cuda builtin kernels (kernels/cuda): each declaration equals the cpu
// builtin's of the same name except for the source, the macros that select
// the kernel in its .cu file and "threads", and each compiles warning-free
// with nvcc for sm_90 as the recipe compiles it (-rdc). Running them needs a
// GPU (tests/cuda/gpu).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cuda/CudaTestUtil.h"
#include "superkernel/driver/Process.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

fs::path kernelsDir(const char* target) { return fs::path(SK_SOURCE_ROOT) / "kernels" / target; }

std::vector<std::string> cudaBuiltins() {
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(kernelsDir("cuda")))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CudaKernels, TheDecodeLayerSetExists) {
  for (const char* n : {"add_f32", "copy_f32", "rms_norm_f32", "add_rms_norm_f32", "gemv_bf16w", "gemv_f32",
                        "rope_f32", "attn_scores_f32", "softmax_f32", "attn_weighted_sum_f32", "swiglu_f32",
                        "moe_gate_topk_f32", "moe_expert_gemv_bf16w", "moe_expert_gemv_f32", "moe_combine_f32"}) {
    auto k = findBuiltinKernel(n, "cuda");
    EXPECT_TRUE(k.ok()) << n << ": " << (k.ok() ? "" : k.error().message());
  }
}

// A decode loop's kernels: the KV-cache append and attention over rows 0..pos
// (pos a runtime scalar), rope at a runtime position, the position counter.
TEST(CudaKernels, TheDecodeLoopSetExists) {
  for (const char* n : {"kv_append_f32", "attn_decode_f32", "increment_i64", "rope_f32"}) {
    auto k = findBuiltinKernel(n, "cuda");
    EXPECT_TRUE(k.ok()) << n << ": " << (k.ok() ? "" : k.error().message());
  }
}

TEST(CudaKernels, DeclarationsMatchCpu) {
  for (const std::string& n : cudaBuiltins()) {
    auto c = findBuiltinKernel(n, "cuda");
    auto p = findBuiltinKernel(n, "cpu");
    ASSERT_TRUE(c.ok()) << n << ": " << c.error().message();
    ASSERT_TRUE(p.ok()) << n << " has no cpu version: " << p.error().message();
    EXPECT_EQ(c->entry, p->entry) << n;
    EXPECT_EQ(c->params, p->params) << n;
    EXPECT_EQ(c->earlyStart, p->earlyStart) << n;
    EXPECT_EQ(c->kernelSync, p->kernelSync) << n;
    EXPECT_EQ(c->blockDimInvariant, p->blockDimInvariant) << n;
    EXPECT_EQ(c->attribute("threads"), 256) << n << ": the builtins share one CTA shape (fused == unfused bit for bit)";
    for (const auto& [k, v] : p->macros) EXPECT_EQ(c->macros.count(k), 1u) << n << " lacks the cpu macro " << k;
  }
}

TEST(CudaKernels, CompileWarningFreeWithNvcc) {
  SK_REQUIRE_NVCC(nvcc);
  fs::path dir = fs::temp_directory_path() / ("sk-cuda-kernels-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::string& n : cudaBuiltins()) {
    auto k = findBuiltinKernel(n, "cuda");
    ASSERT_TRUE(k.ok()) << n;
    std::vector<std::string> argv = {nvcc, "-c", "-rdc=true", "-O3", "-std=c++17", "-arch=sm_90",
                                     "-Xcompiler=-fPIC,-Wall,-Wextra", "-Werror", "all-warnings",
                                     "-I" + (dataRuntimeDir() / "cuda" / "include").string()};
    for (const auto& [m, v] : k->macros) argv.push_back("-D" + m + "=" + v);
    argv.insert(argv.end(), {"-o", (dir / (n + ".o")).string(), "-x", "cu", k->sourcePath.string()});
    ProcessOptions po;
    po.timeout = std::chrono::minutes(3);
    auto r = runProcess(argv, po);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r->exitCode, 0) << n << ":\n" << r->err;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace sk
