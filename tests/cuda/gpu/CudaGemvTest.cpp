// kernels/cuda/gemv.cu (issue 40: 16-byte vector loads; f16, q8_0 and q4_0 weights) against the cpu target's gemv,
// built like CudaGpuTest.cpp: in sk_test_cuda_gpu (target cuda, needs a GPU) and in sk_test_cuda_sim_run
// (SK_RUN_TARGET="cuda-sim": the same kernel text built by the host compiler; the simulator traps on a 16-byte
// load from an address that is not 16-byte aligned, as a GPU faults).
//  - every weight format (f32, bf16, f16, q8_0, q4_0) on shapes that reach each load path: cols a multiple of the vector
//    (every row aligned: the vector body only), cols not (rows start at every offset modulo 16: a scalar head,
//    the vector body, a scalar tail), cols below one vector, x a view at offset 1 (x read with scalar loads beside
//    vector weights); q8_0 with cols % 256 == 0 (every row 16-byte aligned: 17 vector loads per 8 blocks), with
//    leftover blocks and rows that are not aligned (byte loads), and x at offset 1; q4_0 alike (9 vector loads per
//    8 blocks). 37 rows over 3 blocks (a split
//    that is not even). Each y within |cuda - cpu| <= 1e-4 + 1e-4 |cpu| (measured on cuda-sim: at most 5e-6 relative;
//    both targets sum in f32 in different orders), and fused equal to unfused bit for bit;
//  - q8_0 and q4_0 with cols not a multiple of 32 fail the run with the cpu kernel's message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cuda/CudaTestUtil.h"
#include "superkernel/session/BufferSet.h"
#include "backends/cuda/CudaRuntime.h"
#include "cuda/gpu/RunTarget.h"
#include "tools/ToolTestUtil.h"

// Names in their own namespace: the test targets are unity builds, one translation unit with CudaGpuTest.cpp.
namespace sk {
namespace {
namespace gemvtest {
namespace fs = std::filesystem;
using tooltest::kCompile;
using tooltest::Result;

using gputest::kSimulated;
using gputest::kTarget;

struct TempDir : cudatest::TempDir {
  TempDir() : cudatest::TempDir("gemv") {}
};

Result run(const fs::path& list, const std::string& target, const TempDir& dir, const std::string& dump) {
  return gputest::runList(list, target, dir.path / "cache", dump.empty() ? fs::path() : dir.path / dump);
}

// An op list of gemv ops, one buffer triple per op, written to dir/name.json; q8_0 weights from a file the test
// writes (random bytes could make a scale inf or NaN): per block an f16 scale in [2^-10, 2^-4] and 32 int8.
struct GemvList {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::object(), buffers = nlohmann::ordered_json::object(),
                         ops = nlohmann::ordered_json::array();
  std::vector<std::string> outputs;
  uint64_t seed = 1;

  void add(const TempDir& dir, const std::string& kernel, const std::string& dtype, int64_t rows, int64_t cols,
           int64_t xOffset = 0) {
    const std::string n = kernel + "_" + std::to_string(rows) + "x" + std::to_string(cols) + "_x" + std::to_string(xOffset);
    kernels[kernel] = {{"builtin", kernel}};
    if (dtype == "q8_0") {
      buffers["w_" + n] = gputest::q8Blocks(dir.path / (n + ".w"), rows * ((cols + 31) / 32), seed);
    } else if (dtype == "q4_0") {
      buffers["w_" + n] = gputest::q4Blocks(dir.path / (n + ".w"), rows * ((cols + 31) / 32), seed);
    } else {
      buffers["w_" + n] = {{"dtype", dtype}, {"shape", {rows * cols}}, {"init", "random"}};
    }
    buffers["x_" + n] = {{"dtype", "f32"}, {"shape", {cols + xOffset}}, {"init", "random"}};
    buffers["y_" + n] = {{"dtype", "f32"}, {"shape", {rows}}};
    nlohmann::ordered_json x = "x_" + n;
    if (xOffset) x = {{"buffer", "x_" + n}, {"offset", xOffset}, {"count", cols}};
    ops.push_back({{"name", n},
                   {"kernel", kernel},
                   {"block_dim", 3},
                   {"scope", "s"},
                   {"args", {{"w", "w_" + n}, {"x", x}, {"y", "y_" + n}, {"rows", rows}, {"cols", cols}}}});
    outputs.push_back("y_" + n);
  }
  fs::path write(const TempDir& dir, const std::string& name) const {
    nlohmann::ordered_json j = {{"format", "superkernel.oplist"}, {"version", 1}, {"target", "cuda"},
                                {"kernels", kernels}, {"buffers", buffers}, {"ops", ops}};
    const fs::path p = dir.path / (name + ".json");
    std::ofstream(p) << j.dump(1);
    return p;
  }
};

using gputest::readFloats;

TEST(CudaGemv, EveryWeightFormatAndLoadPathMatchesCpu) {
  SK_REQUIRE_GPU();
  TempDir dir;
  GemvList l;
  for (auto [kernel, dtype] : {std::pair{"gemv_f32", "f32"}, {"gemv_bf16w", "bf16"}, {"gemv_f16w", "f16"}}) {
    for (int64_t cols : {256, 37, 5}) l.add(dir, kernel, dtype, 37, cols);
    l.add(dir, kernel, dtype, 37, 64, /*xOffset=*/1);
  }
  l.add(dir, "gemv_q8_0", "q8_0", 37, 512);      // 16 blocks a row: two groups of 8, every row 16-byte aligned
  l.add(dir, "gemv_q8_0", "q8_0", 37, 608);      // 19 blocks: two groups and 3 leftover; rows at 646-byte steps
  l.add(dir, "gemv_q8_0", "q8_0", 37, 608, 1);
  l.add(dir, "gemv_q4_0", "q4_0", 37, 512);      // 16 blocks a row: two groups of 8 (9 vectors each), rows aligned
  l.add(dir, "gemv_q4_0", "q4_0", 37, 608);      // 19 blocks: two groups and 3 leftover; rows at 342-byte steps
  l.add(dir, "gemv_q4_0", "q4_0", 37, 608, 1);
  const fs::path list = l.write(dir, "gemv");
  Result cpu = run(list, "cpu", dir, "cpu");
  ASSERT_EQ(cpu.code, 0) << cpu.all();
  Result dev = run(list, kTarget, dir, "dev");
  ASSERT_EQ(dev.code, 0) << dev.all();
  EXPECT_NE(dev.out.find("\n  results  identical: "), std::string::npos) << dev.all();
  EXPECT_EQ(dev.all().find("DIFFER"), std::string::npos) << dev.all();
  for (const std::string& y : l.outputs) {
    const std::vector<float> a = readFloats(dir.path / "cpu" / (y + ".bin")), b = readFloats(dir.path / "dev" / (y + ".bin"));
    ASSERT_EQ(a.size(), b.size()) << y;
    ASSERT_FALSE(a.empty()) << y;
    bool nonzero = false;
    for (size_t i = 0; i < a.size(); ++i) {
      nonzero |= a[i] != 0.0f;
      ASSERT_LE(std::fabs(a[i] - b[i]), 1e-4f + 1e-4f * std::fabs(a[i]))
          << y << "[" << i << "]: cpu " << a[i] << ", " << kTarget << " " << b[i];
    }
    EXPECT_TRUE(nonzero) << y << ": all zero, the comparison proves nothing";
  }
}

TEST(CudaGemv, BlockFormatColsNotAMultipleOf32FailsTheRunAsOnCpu) {
  SK_REQUIRE_GPU();
  for (const std::string format : {"q8_0", "q4_0"}) {
    SCOPED_TRACE(format);
    TempDir dir;
    GemvList l;
    l.add(dir, "gemv_" + format, format, 3, 40);
    const fs::path list = l.write(dir, "bad");
    const std::string message = "sk_gemv: " + format + " weights need cols to be a multiple of 32";
    Result cpu = run(list, "cpu", dir, "");
    EXPECT_NE(cpu.code, 0) << cpu.all();
    EXPECT_NE(cpu.all().find(message), std::string::npos) << cpu.all();
    Result dev = run(list, kTarget, dir, "");
    EXPECT_NE(dev.code, 0) << dev.all();
    // The simulator fails the launch with the message; a GPU prints it (device printf) and traps, and whether the
    // print reaches stdout before the failed context is torn down is not verified on hardware yet.
    if (kSimulated) {
      EXPECT_NE(dev.all().find(message), std::string::npos) << dev.all();
    }
  }
}

}  // namespace gemvtest
}  // namespace
}  // namespace sk
