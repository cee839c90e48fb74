// Elementwise kernels and casts against naive references, at several sizes,
// block dims (1, non-dividing, > workers, > elements) and worker counts.
#include "KernelTestUtil.h"

using namespace sktest;

namespace {

const std::vector<int64_t> kSizes{1, 5, 64, 1000, 4099};

template <class Launch, class Check>
void sweep(Launch&& launch, Check&& check) {
  for (uint32_t w : workerCounts())
    for (uint32_t bd : blockDims())
      for (int64_t n : kSizes) {
        SCOPED_TRACE("workers=" + std::to_string(w) + " block_dim=" + std::to_string(bd) + " n=" + std::to_string(n));
        launch(executor(w), bd, n);
        check(n);
      }
}

TEST(Elementwise, AddMulSwiglu) {
  std::vector<float> x, y, z;
  sweep(
      [&](sk::Executor& ex, uint32_t bd, int64_t n) {
        x = randomFloats(n, 1);
        y = randomFloats(n, 2);
        z.assign(n, NAN);
        ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_add_f32(c, x.data(), y.data(), z.data(), n); }).ok());
      },
      [&](int64_t n) {
        std::vector<float> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = x[i] + y[i];
        EXPECT_TRUE(near(z, want, 0, 0));
      });
  sweep(
      [&](sk::Executor& ex, uint32_t bd, int64_t n) {
        x = randomFloats(n, 3);
        y = randomFloats(n, 4);
        z.assign(n, NAN);
        ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_mul_f32(c, x.data(), y.data(), z.data(), n); }).ok());
      },
      [&](int64_t n) {
        std::vector<float> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = x[i] * y[i];
        EXPECT_TRUE(near(z, want, 0, 0));
      });
  sweep(
      [&](sk::Executor& ex, uint32_t bd, int64_t n) {
        x = randomFloats(n, 5, -6, 6);
        y = randomFloats(n, 6);
        z.assign(n, NAN);
        ASSERT_TRUE(
            runBlocks(ex, bd, [&](const sk_ctx* c) { sk_swiglu_f32(c, x.data(), y.data(), z.data(), n); }).ok());
      },
      [&](int64_t n) {
        std::vector<float> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = static_cast<float>(x[i] / (1.0 + std::exp(-double(x[i]))) * y[i]);
        EXPECT_TRUE(near(z, want, 1e-5, 1e-6));
      });
}

TEST(Elementwise, ScaleInPlaceAndCopy) {
  std::vector<float> x, orig, y;
  sweep(
      [&](sk::Executor& ex, uint32_t bd, int64_t n) {
        orig = randomFloats(n, 7);
        x = orig;  // in place, as DESIGN's example op does (x and y the same buffer)
        ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_scale_f32(c, x.data(), x.data(), -2.5f, n); }).ok());
      },
      [&](int64_t n) {
        std::vector<float> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = orig[i] * -2.5f;
        EXPECT_TRUE(near(x, want, 0, 0));
      });
  sweep(
      [&](sk::Executor& ex, uint32_t bd, int64_t n) {
        x = randomFloats(n, 8);
        y.assign(n, NAN);
        ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_copy_f32(c, x.data(), y.data(), n); }).ok());
      },
      [&](int64_t) { EXPECT_TRUE(near(y, x, 0, 0)); });
}

TEST(Cast, Bf16RoundTripAndRounding) {
  // Random values plus the corner cases: ties, NaN, inf, max, subnormals.
  std::vector<float> x = randomFloats(997, 9, -1000, 1000);
  uint32_t specials[] = {0x3f808000u /*tie, even down*/, 0x3f818000u /*tie, odd up*/, 0x7f800000u, 0xff800000u,
                         0x7f7fffffu /*max: rounds to inf*/, 0x00000001u, 0x80000000u, 0x7fc00000u, 0x7fa00000u};
  for (uint32_t u : specials) {
    float f;
    std::memcpy(&f, &u, 4);
    x.push_back(f);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  for (uint32_t w : workerCounts())
    for (uint32_t bd : blockDims()) {
      std::vector<uint16_t> h(n, 0xdead);
      ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) { sk_cast_f32_bf16(c, x.data(), h.data(), n); }).ok());
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) {
          EXPECT_TRUE(std::isnan(bf16ToFloat(h[i]))) << i;
        } else {
          EXPECT_EQ(h[i], floatToBf16Ref(x[i])) << "i=" << i << " x=" << x[i];
        }
      }
      std::vector<float> back(n, 0);
      ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) { sk_cast_bf16_f32(c, h.data(), back.data(), n); }).ok());
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) continue;
        EXPECT_EQ(back[i], bf16ToFloat(h[i])) << i;
      }
    }
}

TEST(Cast, F16AllBitPatternsAndRounding) {
  // f16 -> f32 on all 65536 patterns; then f32 -> f16 must invert it on every
  // non-NaN pattern and round midpoints to even.
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> f(65536);
  ASSERT_TRUE(runBlocks(executor(3), 7, [&](const sk_ctx* c) { sk_cast_f16_f32(c, all.data(), f.data(), 65536); }).ok());
  for (uint32_t i = 0; i < 65536; ++i) {
    float want = f16ToFloatRef(static_cast<uint16_t>(i));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f[i])) << i;
    } else {
      ASSERT_EQ(f[i], want) << "pattern " << i;
    }
  }
  std::vector<uint16_t> h(65536);
  ASSERT_TRUE(runBlocks(executor(8), 40, [&](const sk_ctx* c) { sk_cast_f32_f16(c, f.data(), h.data(), 65536); }).ok());
  for (uint32_t i = 0; i < 65536; ++i) {
    if (std::isnan(f[i])) {
      EXPECT_TRUE(std::isnan(f16ToFloatRef(h[i]))) << i;
    } else {
      ASSERT_EQ(h[i], i) << "pattern " << i;
    }
  }
  // Midpoints between consecutive positive finite halves round to the even one;
  // values past the largest half's midpoint become inf.
  std::vector<float> mids;
  std::vector<uint16_t> want;
  for (uint32_t i = 0; i < 0x7bff; i += 37) {
    double a = f16ToFloatRef(static_cast<uint16_t>(i)), b = f16ToFloatRef(static_cast<uint16_t>(i + 1));
    mids.push_back(static_cast<float>((a + b) / 2));
    want.push_back(static_cast<uint16_t>((i & 1) ? i + 1 : i));
  }
  mids.push_back(65520.0f);  // midpoint of 65504 and 65536: ties to even -> inf
  want.push_back(0x7c00);
  mids.push_back(65519.0f);
  want.push_back(0x7bff);
  std::vector<uint16_t> got(mids.size());
  const int64_t m = static_cast<int64_t>(mids.size());
  ASSERT_TRUE(runBlocks(executor(3), 3, [&](const sk_ctx* c) { sk_cast_f32_f16(c, mids.data(), got.data(), m); }).ok());
  for (size_t i = 0; i < mids.size(); ++i) EXPECT_EQ(got[i], want[i]) << "value " << mids[i];
}

}  // namespace
