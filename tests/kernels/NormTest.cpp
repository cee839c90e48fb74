// Row-wise kernels (rms_norm, add_rms_norm, softmax, reduce_mean, rope)
// against double-precision references. Shapes include rows < block_dim.
#include <atomic>
#include <thread>

#include "KernelTestUtil.h"

using namespace sktest;

namespace {

struct Shape {
  int64_t rows, cols;
};
const std::vector<Shape> kShapes{{1, 1}, {1, 64}, {3, 17}, {16, 128}, {9, 1000}};

template <class Body>
void sweep(Body&& body) {
  for (uint32_t w : workerCounts())
    for (uint32_t bd : blockDims())
      for (Shape s : kShapes) {
        SCOPED_TRACE("workers=" + std::to_string(w) + " block_dim=" + std::to_string(bd) +
                     " rows=" + std::to_string(s.rows) + " cols=" + std::to_string(s.cols));
        body(executor(w), bd, s.rows, s.cols);
      }
}

std::vector<float> rmsRef(const std::vector<float>& x, const std::vector<float>& w, int64_t R, int64_t C, float eps) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < R; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < C; ++c) ss += double(x[r * C + c]) * x[r * C + c];
    double inv = 1.0 / std::sqrt(ss / C + eps);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = static_cast<float>(x[r * C + c] * inv * w[c]);
  }
  return y;
}

TEST(RowKernels, RmsNorm) {
  sweep([](sk::Executor& ex, uint32_t bd, int64_t R, int64_t C) {
    auto x = randomFloats(R * C, 11, -3, 3), w = randomFloats(C, 12, 0.5, 1.5);
    std::vector<float> y(R * C, NAN);
    ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_rms_norm_f32(c, x.data(), w.data(), y.data(), R, C, 1e-5f); }).ok());
    EXPECT_TRUE(near(y, rmsRef(x, w, R, C, 1e-5f), 1e-4, 1e-5));
  });
}

TEST(RowKernels, AddRmsNormWritesSumAndNorm) {
  sweep([](sk::Executor& ex, uint32_t bd, int64_t R, int64_t C) {
    auto x = randomFloats(R * C, 13, -3, 3), res = randomFloats(R * C, 14), w = randomFloats(C, 15, 0.5, 1.5);
    std::vector<float> sum(R * C, NAN), y(R * C, NAN), want(R * C);
    for (int64_t i = 0; i < R * C; ++i) want[i] = x[i] + res[i];
    ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) {
                  sk_add_rms_norm_f32(c, x.data(), res.data(), w.data(), sum.data(), y.data(), R, C, 1e-6f);
                }).ok());
    EXPECT_TRUE(near(sum, want, 0, 0));
    EXPECT_TRUE(near(y, rmsRef(want, w, R, C, 1e-6f), 1e-4, 1e-5));
    // In place on the residual stream: sum aliases x.
    auto xs = x;
    ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) {
                  sk_add_rms_norm_f32(c, xs.data(), res.data(), w.data(), xs.data(), y.data(), R, C, 1e-6f);
                }).ok());
    EXPECT_TRUE(near(xs, want, 0, 0));
  });
}

TEST(RowKernels, Softmax) {
  sweep([](sk::Executor& ex, uint32_t bd, int64_t R, int64_t C) {
    auto x = randomFloats(R * C, 16, -30, 30);
    std::vector<float> y(R * C, NAN), want(R * C);
    for (int64_t r = 0; r < R; ++r) {
      double m = -INFINITY, s = 0;
      for (int64_t c = 0; c < C; ++c) m = std::max<double>(m, x[r * C + c]);
      for (int64_t c = 0; c < C; ++c) s += std::exp(x[r * C + c] - m);
      for (int64_t c = 0; c < C; ++c) want[r * C + c] = static_cast<float>(std::exp(x[r * C + c] - m) / s);
    }
    ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_softmax_f32(c, x.data(), y.data(), R, C); }).ok());
    EXPECT_TRUE(near(y, want, 1e-4, 1e-7));
    ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_softmax_f32(c, x.data(), x.data(), R, C); }).ok());
    EXPECT_TRUE(near(x, want, 1e-4, 1e-7)) << "in place";
  });
}

TEST(RowKernels, ReduceMean) {
  sweep([](sk::Executor& ex, uint32_t bd, int64_t R, int64_t C) {
    auto x = randomFloats(R * C, 17, -2, 4);
    std::vector<float> y(R, NAN), want(R);
    for (int64_t r = 0; r < R; ++r) {
      double s = 0;
      for (int64_t c = 0; c < C; ++c) s += x[r * C + c];
      want[r] = static_cast<float>(s / C);
    }
    ASSERT_TRUE(runBlocks(ex, bd, [&](const sk_ctx* c) { sk_reduce_mean_f32(c, x.data(), y.data(), R, C); }).ok());
    EXPECT_TRUE(near(y, want, 1e-4, 1e-5));
  });
}

std::vector<float> ropeRef(const std::vector<float>& x, int64_t H, int64_t D, int64_t pos, double theta) {
  std::vector<float> y(x.size());
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < D / 2; ++i) {
      double ang = pos * std::pow(theta, -2.0 * i / D);
      double a = x[h * D + 2 * i], b = x[h * D + 2 * i + 1];
      y[h * D + 2 * i] = static_cast<float>(a * std::cos(ang) - b * std::sin(ang));
      y[h * D + 2 * i + 1] = static_cast<float>(a * std::sin(ang) + b * std::cos(ang));
    }
  return y;
}

TEST(RowKernels, Rope) {
  struct S {
    int64_t heads, dim, pos;
  };
  for (S s : {S{1, 2, 0}, S{4, 16, 7}, S{8, 64, 1234}, S{3, 128, 40000}})
    for (uint32_t w : workerCounts())
      for (uint32_t bd : blockDims()) {
        SCOPED_TRACE("heads=" + std::to_string(s.heads) + " block_dim=" + std::to_string(bd));
        auto x = randomFloats(s.heads * s.dim, 18);
        std::vector<float> y(x.size(), NAN);
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                      sk_rope_f32(c, x.data(), y.data(), s.heads, s.dim, s.pos, 10000.0f);
                    }).ok());
        EXPECT_TRUE(near(y, ropeRef(x, s.heads, s.dim, s.pos, 10000.0), 1e-4, 1e-5));
      }
}

// The angle table is shared by every thread running the kernel (rope.cpp's
// sequence-locked memo). Threads that keep switching between positions force
// concurrent rewrites of it while others read: every result must still equal
// the single-threaded result of its own position, bit for bit.
TEST(RowKernels, RopeSharedAngleTableUnderConcurrentPositions) {
  const int64_t H = 4, D = 64;
  const int64_t positions[] = {3, 63, 1000, 4095};
  auto x = randomFloats(H * D, 19);
  std::vector<std::vector<float>> want;
  for (int64_t pos : positions) {
    std::vector<float> y(x.size(), NAN);
    ASSERT_TRUE(runBlocks(executor(1), 1, [&](const sk_ctx* c) { sk_rope_f32(c, x.data(), y.data(), H, D, pos, 1e4f); }).ok());
    want.push_back(y);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<float> y(x.size());
      for (int i = 0; i < 2000; ++i) {
        const size_t p = static_cast<size_t>((i + t) % 4);
        const sk_ctx ctx = {0, 1, nullptr};  // one block; rt is only used to report errors
        sk_rope_f32(&ctx, x.data(), y.data(), H, D, positions[p], 1e4f);
        if (std::memcmp(y.data(), want[p].data(), y.size() * sizeof(float)) != 0) mismatches.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(RowKernels, RopeOddDimIsReported) {
  std::vector<float> x(6), y(6);
  sk::Status st = runBlocks(executor(3), 3, [&](const sk_ctx* c) { sk_rope_f32(c, x.data(), y.data(), 2, 3, 0, 1e4f); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("dim must be even"), std::string::npos) << st.error().message();
}

// A negative even dim passed the old "even" check and reached the angle
// table with a huge length: it is reported like an odd one.
TEST(RowKernels, RopeNegativeDimIsReported) {
  std::vector<float> x(8, 1.0f), y(8, 0.0f);
  sk::Status st = runBlocks(executor(3), 3, [&](const sk_ctx* c) { sk_rope_f32(c, x.data(), y.data(), 2, -2, 0, 1e4f); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("not negative"), std::string::npos) << st.error().message();
  EXPECT_EQ(y, std::vector<float>(8, 0.0f));
}

}  // namespace
