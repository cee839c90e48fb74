// The run target of the files in tests/cuda/gpu/, each built twice (tests/cuda/tests.cmake): in
// sk_test_cuda_gpu (target cuda, which needs a GPU and nvcc) and in sk_test_cuda_sim_run
// (SK_RUN_TARGET="cuda-sim": the same checks on the cuda simulator, which needs only the host compiler).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuda/CudaTestUtil.h"
#include "backends/cuda/CudaRuntime.h"
#include "superkernel/session/BufferSet.h"
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

// splitmix64 over `seed`: the same values on every run.
inline uint64_t nextRandom(uint64_t& seed) {
  uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// `blocks` ggml blocks written to `file` (an f16 scale of 2^-10 .. 2^-5 times 1..2, then `quantBytes` bytes of
// quants from `quant`), and the u8 buffer that loads them.
template <class Quant>
nlohmann::json ggmlBlocks(const std::filesystem::path& file, int64_t blocks, int quantBytes, uint64_t& seed,
                          Quant quant) {
  std::string bytes;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint16_t d = floatToHalf(
        std::ldexp(1.0f + float(nextRandom(seed) % 1024) / 1024.0f, -10 + int(nextRandom(seed) % 6)));
    bytes.push_back(char(d & 0xff));
    bytes.push_back(char(d >> 8));
    for (int i = 0; i < quantBytes; ++i) bytes.push_back(quant(seed));
  }
  std::ofstream(file, std::ios::binary) << bytes;
  return {{"dtype", "u8"}, {"shape", {blocks * (2 + quantBytes)}}, {"init", {{"file", file.string()}}}};
}

// q8_0 blocks: 32 int8 quants in -127..127.
inline nlohmann::json q8Blocks(const std::filesystem::path& file, int64_t blocks, uint64_t& seed) {
  return ggmlBlocks(file, blocks, 32, seed, [](uint64_t& s) { return char(int(nextRandom(s) % 255) - 127); });
}

// q4_0 blocks: 16 random bytes, 32 quants of 4 bits.
inline nlohmann::json q4Blocks(const std::filesystem::path& file, int64_t blocks, uint64_t& seed) {
  return ggmlBlocks(file, blocks, 16, seed, [](uint64_t& s) { return char(nextRandom(s) & 0xff); });
}

// A dumped f32 buffer.
inline std::vector<float> readFloats(const std::filesystem::path& p) {
  const std::string s = cudatest::readFile(p);
  std::vector<float> v(s.size() / 4);
  std::memcpy(v.data(), s.data(), v.size() * 4);
  return v;
}

// Runs `list` on cpu (dumping into dir/cpu) and on the run target (dir/dev), both with `cache`; the target's
// fused run must equal its unfused one. A fatal failure returns early: the caller checks HasFatalFailure().
inline void runOnCpuAndTarget(const std::filesystem::path& list, const std::filesystem::path& cache,
                              const std::filesystem::path& dir) {
  tooltest::Result cpu = runList(list, "cpu", cache, dir / "cpu");
  ASSERT_EQ(cpu.code, 0) << cpu.all();
  tooltest::Result dev = runList(list, kTarget, cache, dir / "dev");
  ASSERT_EQ(dev.code, 0) << dev.all();
  EXPECT_NE(dev.out.find("\n  results  identical: "), std::string::npos) << dev.all();
  EXPECT_EQ(dev.all().find("DIFFER"), std::string::npos) << dev.all();
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
