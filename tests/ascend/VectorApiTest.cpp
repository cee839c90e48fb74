// The simulator's Ascend C vector programming model (runtime/ascend/sim/include: kernel_tensor.h,
// kernel_tpipe.h, kernel_operator_*_intf.h; its checks in runtime/ascend/sim/src/VectorChecker.cpp): the
// public add sample compiled unchanged and run on 8 vector cores; each vector instruction, Cast, the
// reductions, strided and padded copies, TBuf and the scalar unit's UB access with their syncs, against host
// arithmetic; and each misuse (UB overflow, queue misuse, a missing WaitFlag, early start misplaced, ...)
// failing the launch with its own message. Kernels: VectorKernels.cpp and
// data/kernels/add_custom.cpp.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kernel_operator.h"  // the simulator's half / bfloat16_t for the expected values
#include "superkernel/ascend/Simulator.h"
#include "SimLaunch.h"
#include "superkernel/driver/Process.h"
#include "backends/ascend/AscendBuild.h"
#include "WorkDir.h"

extern "C" {
void vapi_elementwise_f32(uint8_t*, uint8_t*, uint8_t*);
void vapi_elementwise_f16(uint8_t*, uint8_t*, uint8_t*);
void vapi_casts(uint8_t*, uint8_t*);
void vapi_reduce(uint8_t*, uint8_t*);
void vapi_copies(uint8_t*, uint8_t*);
void vapi_gather(uint8_t*, uint8_t*);
void vapi_misuse(uint8_t*, uint8_t*);
void vapi_on_cube(uint8_t*);
}

namespace {

using sk::ascend_sim::LaunchSpec;
using sk::ascend_sim::TaskType;

using sktest::ascend::simOutcome;
using sktest::ascend::simSpec;

uint16_t vapiBits(half h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

// The f16 conversion the simulator's half uses, on values whose encodings are known by hand.
TEST(AscendVector, HalfConvertsWithRoundToNearestEven) {
  EXPECT_EQ(vapiBits(half(1.0f)), 0x3c00);
  EXPECT_EQ(vapiBits(half(-2.0f)), 0xc000);
  EXPECT_EQ(vapiBits(half(65504.0f)), 0x7bff);
  EXPECT_EQ(vapiBits(half(65519.0f)), 0x7bff);   // below the halfway point to 65536
  EXPECT_EQ(vapiBits(half(65520.0f)), 0x7c00);   // ties to even: infinity
  EXPECT_EQ(vapiBits(half(std::ldexp(1.0f, -24))), 0x0001);  // smallest subnormal
  EXPECT_EQ(vapiBits(half(std::ldexp(1.0f, -25))), 0x0000);  // half of it: ties to even, zero
  EXPECT_EQ(vapiBits(half(std::ldexp(3.0f, -26))), 0x0001);
  EXPECT_EQ(vapiBits(half(1.0f + std::ldexp(1.0f, -11))), 0x3c00);      // tie, even stays
  EXPECT_EQ(vapiBits(half(1.0f + std::ldexp(3.0f, -11))), 0x3c02);      // tie, odd rounds up
  EXPECT_EQ(vapiBits(half(std::nanf(""))) & 0x7e00, 0x7e00);
  EXPECT_EQ(static_cast<float>(half(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(half(-0.333251953125f)), -0.333251953125f);  // exactly representable
  EXPECT_EQ(static_cast<float>(bfloat16_t(1.00390625f)), 1.0f);  // tie to even in bf16
  EXPECT_EQ(static_cast<float>(bfloat16_t(1.01171875f)), 1.015625f);
}

// The add sample, compiled unchanged by the simulator's compiler (clang++, simCompileArgv) and run as
// the sample runs it: 8 blocks on 8 vector cores; z = x + y in half, every element.
TEST(AscendVector, PublicAddSampleCompilesUnchangedAndRuns) {
  const std::filesystem::path cxx = sk::findExecutableUnresolved("clang++");
  if (cxx.empty()) GTEST_SKIP() << "clang++ not on PATH";
  const std::filesystem::path dir = sktest::ascend::workDir();
  sk::ascend::CompileStep s;
  s.source = std::filesystem::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "kernels" / "add_custom.cpp";
  s.object = dir / "add_custom.o";
  auto argv = sk::ascend::simCompileArgv(cxx, SK_ASCEND_SIM_INCLUDE, s);
  auto r = sk::runProcess(argv);
  ASSERT_TRUE(r.ok() && r->succeeded()) << sk::formatCommand(argv) << "\n" << (r.ok() ? r->err : "");
  auto link = sk::ascend::simLinkArgv(cxx, {s.object}, dir / "add_custom.so");
  r = sk::runProcess(link);
  ASSERT_TRUE(r.ok() && r->succeeded()) << sk::formatCommand(link) << "\n" << (r.ok() ? r->err : "");
  auto mod = sk::ascend_sim::Module::load((dir / "add_custom.so").string());
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  auto entry = mod->entry("add_custom");
  ASSERT_TRUE(entry.ok()) << entry.error().message();

  constexpr int n = 8 * 2048;
  std::vector<half> x(n), y(n), z(n, half(-7.0f));
  for (int i = 0; i < n; ++i) {
    x[i] = half(static_cast<float>((i * 37) % 1001) / 64.0f - 7.0f);
    y[i] = half(static_cast<float>((i * 91) % 997) / 128.0f);
  }
  LaunchSpec spec;
  spec.type = TaskType::AivOnly;
  spec.blockDim = 8;
  spec.entry = *entry;
  spec.enter = mod->enter();
  spec.args = {x.data(), y.data(), z.data()};
  sk::Status st = sk::ascend_sim::launch(spec);
  ASSERT_TRUE(st.ok()) << st.error().message();
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    const half want(static_cast<float>(x[i]) + static_cast<float>(y[i]));
    if (vapiBits(z[i]) != vapiBits(want) && ++wrong < 5) ADD_FAILURE() << "z[" << i << "] = " << float(z[i]) << ", want " << float(want);
  }
  EXPECT_EQ(wrong, 0);
}

template <class T>
void vapiElementwise(void (*kernel)(uint8_t*, uint8_t*, uint8_t*)) {
  constexpr int n = 64, ops = 19;
  std::vector<T> x(n), y(n), out(ops * n, T(-99.0f));
  for (int i = 0; i < n; ++i) {
    x[i] = T(static_cast<float>(i - 31) / 8.0f + 0.0625f);  // never 0 (Reciprocal, Ln of |x|)
    y[i] = T(0.5f + static_cast<float>(i % 7) / 4.0f);
  }
  ASSERT_EQ(simOutcome(simSpec(kernel, TaskType::AivOnly, 1, {x.data(), y.data(), out.data()})), "<ok>");
  for (int i = 0; i < n; ++i) {
    const float a = static_cast<float>(x[i]), b = static_cast<float>(y[i]), m = std::fabs(a);
    const float want[ops] = {a + b, a - b, a * b, a / b, a > b ? a : b, a < b ? a : b, a + 0.5f, a * -2.0f,
                             a > 0.25f ? a : 0.25f, a < 0.25f ? a : 0.25f, std::exp(a), std::log(m), m,
                             std::sqrt(m), 1.0f / std::sqrt(m), 1.0f / a, a > 0 ? a : 0.0f, 3.0f, a};
    for (int k = 0; k < ops; ++k) {
      const T w(want[k]);
      EXPECT_EQ(std::memcmp(&out[k * n + i], &w, sizeof(T)), 0)
          << "op " << k << " element " << i << ": " << static_cast<float>(out[k * n + i]) << ", want " << static_cast<float>(w);
    }
  }
}

TEST(AscendVector, ElementwiseInstructionsOnF32) { vapiElementwise<float>(vapi_elementwise_f32); }
TEST(AscendVector, ElementwiseInstructionsOnF16) { vapiElementwise<half>(vapi_elementwise_f16); }

TEST(AscendVector, CastsRoundAsTheirModeSays) {
  constexpr int n = 64;
  std::vector<float> x(n), out(8 * n, -99.0f);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i - 32) * 0.75f + (i % 2 ? 0.0001f : 0.0f) + 1e-3f * i;
  x[0] = 2.5f;   // RINT: 2, ROUND: 3
  x[1] = -2.5f;  // RINT: -2, ROUND: -3, FLOOR: -3, CEIL: -2
  x[2] = 1e10f;  // saturates
  ASSERT_EQ(simOutcome(simSpec(vapi_casts, TaskType::AivOnly, 1, {x.data(), out.data()})), "<ok>");
  std::vector<int32_t> ints(out.size());
  std::memcpy(ints.data(), out.data(), out.size() * 4);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], static_cast<float>(half(x[i]))) << i;
    EXPECT_EQ(out[n + i], static_cast<float>(bfloat16_t(x[i]))) << i;
    const float v = x[i];
    auto sat = [](float r) { return r >= 2147483648.0f ? INT32_MAX : static_cast<int32_t>(r); };
    EXPECT_EQ(ints[2 * n + i], sat(std::nearbyint(v))) << i;
    EXPECT_EQ(ints[3 * n + i], sat(std::floor(v))) << i;
    EXPECT_EQ(ints[4 * n + i], sat(std::ceil(v))) << i;
    EXPECT_EQ(ints[5 * n + i], sat(std::round(v))) << i;
    EXPECT_EQ(ints[6 * n + i], sat(std::trunc(v))) << i;
    EXPECT_EQ(out[7 * n + i], static_cast<float>(sat(std::nearbyint(v)))) << i;
  }
  EXPECT_EQ(ints[2 * n + 0], 2);
  EXPECT_EQ(ints[5 * n + 0], 3);
  EXPECT_EQ(ints[3 * n + 1], -3);
  EXPECT_EQ(ints[2 * n + 2], INT32_MAX);
}

TEST(AscendVector, ReductionsAndTheScalarUnitsReadBack) {
  std::vector<float> x(256, 1000.0f), out(32, -99.0f);  // elements past 200 must not count
  for (int i = 0; i < 200; ++i) x[i] = std::sin(static_cast<float>(i)) * 10.0f;
  ASSERT_EQ(simOutcome(simSpec(vapi_reduce, TaskType::AivOnly, 1, {x.data(), out.data()})), "<ok>");
  // ReduceSum: each 64-element repeat in order, then the repeats in order.
  float sum = 0.0f;
  for (int r = 0; r < 4; ++r) {
    float s = 0.0f;
    for (int i = r * 64; i < 200 && i < (r + 1) * 64; ++i) s += x[i];
    sum += s;
  }
  int mx = 0, mn = 0;
  for (int i = 1; i < 200; ++i) {
    if (x[i] > x[mx]) mx = i;
    if (x[i] < x[mn]) mn = i;
  }
  EXPECT_EQ(out[0], sum);
  EXPECT_EQ(out[1], x[mx]);
  EXPECT_EQ(out[2], static_cast<float>(mx));
  EXPECT_EQ(out[3], x[mn]);
  EXPECT_EQ(out[4], static_cast<float>(mn));
  EXPECT_EQ(out[5], sum * 2.0f);
  for (int r = 0; r < 3; ++r) {
    float s = 0.0f;
    for (int i = 0; i < 40; ++i) s += x[r * 64 + i];
    EXPECT_EQ(out[24 + r], s) << r;
  }
}

TEST(AscendVector, StridedAndPaddedCopies) {
  std::vector<float> x(128), out(256, -99.0f);
  for (int i = 0; i < 128; ++i) x[i] = static_cast<float>(i);
  ASSERT_EQ(simOutcome(simSpec(vapi_copies, TaskType::AivOnly, 1, {x.data(), out.data()})), "<ok>");
  // Blocks 0, 2, ..., 14 of x land at blocks 0, 3, ..., 21 of out; the blocks between are untouched.
  for (int b = 0; b < 22; ++b) {
    for (int k = 0; k < 8; ++k) {
      const float want = b % 3 == 0 ? x[(b / 3) * 16 + k] : -99.0f;
      EXPECT_EQ(out[b * 8 + k], want) << "block " << b << " element " << k;
    }
  }
  // 5 bursts of 3 floats, from x[1] every 5 floats, to out[200] every 4 floats (the 4th untouched).
  for (int i = 0; i < 5; ++i) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(out[200 + i * 4 + k], x[1 + i * 5 + k]) << i << "," << k;
    if (i < 4) {
      EXPECT_EQ(out[200 + i * 4 + 3], -99.0f) << i;
    }
  }
  EXPECT_EQ(out[250], -1.0f);  // UB word 3: the pad value after a burst's 3 floats
  EXPECT_EQ(out[251], -1.0f);
}

TEST(AscendVector, GatherPicksElementsByByteOffset) {
  std::vector<float> x(64), out(128, -99.0f);
  for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i) + 0.5f;
  ASSERT_EQ(simOutcome(simSpec(vapi_gather, TaskType::AivOnly, 1, {x.data(), out.data()})), "<ok>");
  for (int k = 0; k < 64; ++k) EXPECT_EQ(out[k], x[k ^ 1]) << k;
  for (int k = 0; k < 56; ++k) EXPECT_EQ(out[64 + k], x[8 + (k ^ 1)]) << k;
  for (int k = 120; k < 128; ++k) EXPECT_EQ(out[k], -7.0f) << k;  // past count: untouched
}

// Each misuse fails the launch with a message saying what was wrong; the correct uses pass.
TEST(AscendVector, MisusesAreErrors) {
  struct Case {
    int64_t which;
    const char* want;
  };
  const Case cases[] = {
      {0, "<ok>"},
      {11, "<ok>"},
      {1, "TPipe::InitBuffer of 1 x 196608 bytes: the unified buffer holds 196608 bytes and 1024 are already allocated"},
      {2, "DeQue of an empty queue: no EnQue before it"},
      {3, "FreeTensor of a tensor already freed"},
      {4, "EnQue past the queue's depth 1"},
      {5, "AllocTensor: all 2 buffer(s) of the queue are in use"},
      {6, "Adds: a LocalTensor used after its EnQue"},
      {7, "Adds: a LocalTensor used after its FreeTensor"},
      {8, "a TQue ends with a tensor still queued: an EnQue with no DeQue"},
      {9, "LocalTensor::GetValue: the S (scalar) pipe reads UB bytes [768, 800) that the V (vector) pipe wrote, with no "
          "sync ordering it after that write (SetFlag/WaitFlag<HardEvent::V_S>"},
      {10, "Muls: the V (vector) pipe reads UB bytes [768, 800) that the MTE2 (copy-in) pipe wrote"},
      {12, "WaitFlag<HardEvent::V_MTE3>(3) with no SetFlag of that event before it"},
      {13, "the kernel ends with SetFlag<HardEvent::V_MTE3>(3) never waited for"},
      {14, "DataCopy (GM -> UB) of 40 bytes: DataCopy moves whole 32-byte blocks"},
      {15, "Duplicate: 65 element(s) of dst, a LocalTensor of 64"},
      {16, "Duplicate: dst starts at UB byte 780, not 32-byte aligned"},
      {17, "WaitPreTaskEnd after this kernel already moved GM data"},
      {18, "DataCopy (GM -> UB) after this kernel's SetNextTaskStart"},
      {19, "SetNextTaskStart is issued on the V pipe, which is not ordered after this kernel's last MTE3 transfer"},
      {20, "DataCopy (GM -> UB): the MTE2 (copy-in) pipe reads GM this core's MTE3 copy-out writes"},
      {21, "a second TPipe while another is alive on this core"},
      {22, "DataCopy (GM -> UB): 64 element(s) from a GlobalTensor past its SetGlobalBuffer size"},
      {23, "a TQue ends with a tensor still allocated: an AllocTensor or DeQue with no FreeTensor"},
      {24, "Gather: srcOffset[0] = 256 (+ srcBaseAddr 0) past src, a LocalTensor of 256 bytes"},
      {25, "Gather: srcOffset[0] = 2 (+ srcBaseAddr 0) is not a whole element of 4 bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("case " + std::to_string(c.which));
    int64_t params[1] = {c.which};
    std::vector<float> buf(1024, 1.0f);
    const std::string err = simOutcome(simSpec(vapi_misuse, TaskType::AivOnly, 1, {params, buf.data()}));
    EXPECT_NE(err.find(c.want), std::string::npos) << err;
    if (std::string(c.want) != "<ok>") {
      EXPECT_NE(err.find("on AIV 0"), std::string::npos) << "names the core: " << err;
    }
  }
}

TEST(AscendVector, TheUnifiedBufferIsOnVectorCoresOnly) {
  const std::string err = simOutcome(simSpec(vapi_on_cube, TaskType::AicOnly, 1, {nullptr}));
  EXPECT_NE(err.find("TPipe::InitBuffer on a cube core: the unified buffer and the vector unit are on vector cores"),
            std::string::npos)
      << err;
}

}  // namespace
