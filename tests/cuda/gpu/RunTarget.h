// The run target of the files in tests/cuda/gpu/, each built twice (tests/cuda/tests.cmake): in
// sk_test_cuda_gpu (target cuda, which needs a GPU and nvcc) and in sk_test_cuda_sim_run
// (SK_RUN_TARGET="cuda-sim": the same checks on the cuda simulator, which needs only the host compiler).
#pragma once

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuda/CudaTestUtil.h"
#include "backends/cuda/CudaRuntime.h"
#include "tools/ToolTestUtil.h"

#ifndef SK_RUN_TARGET
#define SK_RUN_TARGET "cuda"
#endif

namespace sk::gputest {
inline constexpr const char* kTarget = SK_RUN_TARGET;
inline const bool kSimulated = std::string(kTarget) == "cuda-sim";

// sk-compile LIST --target TARGET --run --repeat 0 with its cache in cacheDir; with dumpDir, --dump dumpDir (the
// buffers after the run, one NAME.bin each).
inline tooltest::Result runList(const std::filesystem::path& list, const std::string& target,
                                const std::filesystem::path& cacheDir, const std::filesystem::path& dumpDir = {}) {
  tooltest::Spawn s;
  s.argv = {tooltest::kCompile, list.string(), "--target", target, "--run", "--repeat", "0", "--cache-dir",
            cacheDir.string()};
  if (!dumpDir.empty()) s.argv.insert(s.argv.end(), {"--dump", dumpDir.string()});
  s.timeoutSec = 600;
  return tooltest::run(s);
}

// A dumped f32 buffer.
inline std::vector<float> readFloats(const std::filesystem::path& p) {
  const std::string s = cudatest::readFile(p);
  std::vector<float> v(s.size() / 4);
  std::memcpy(v.data(), s.data(), v.size() * 4);
  return v;
}
}  // namespace sk::gputest

// For target cuda, a GPU and nvcc (nvcc_ holds its path), else the test is skipped with the reason; the
// simulator needs neither.
#define SK_REQUIRE_GPU()                                                                                \
  std::string nvcc_;                                                                                    \
  if (!::sk::gputest::kSimulated) {                                                                     \
    auto api_ = ::sk::cudaRuntimeWithDevice();                                                          \
    if (!api_) GTEST_SKIP() << api_.error().message();                                                  \
    nvcc_ = ::sk::cudatest::findNvcc();                                                                 \
    if (nvcc_.empty()) GTEST_SKIP() << "nvcc not found (SK_NVCC, PATH, /usr/local/cuda/bin/nvcc)";      \
  }
