// The run target of the files in tests/cuda/gpu/, each built twice (tests/cuda/tests.cmake): in
// sk_test_cuda_gpu (target cuda, which needs a GPU and nvcc) and in sk_test_cuda_sim_run
// (SK_RUN_TARGET="cuda-sim": the same checks on the cuda simulator, which needs only the host compiler).
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "cuda/CudaTestUtil.h"
#include "backends/cuda/CudaRuntime.h"

#ifndef SK_RUN_TARGET
#define SK_RUN_TARGET "cuda"
#endif

namespace sk::gputest {
inline constexpr const char* kTarget = SK_RUN_TARGET;
inline const bool kSimulated = std::string(kTarget) == "cuda-sim";
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
