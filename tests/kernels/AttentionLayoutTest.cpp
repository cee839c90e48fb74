// Decode attention (scores, weighted sum; MHA and GQA) and layout kernels
// (transpose, concat) against references.
#include "KernelTestUtil.h"

using namespace sktest;

namespace {

struct AttnShape {
  int64_t heads, kvHeads, seq, dim;
};
const std::vector<AttnShape> kAttn{{1, 1, 1, 4}, {4, 4, 9, 16}, {8, 2, 33, 32}, {6, 3, 100, 8}};

TEST(Attention, ScoresAndWeightedSum) {
  for (AttnShape s : kAttn)
    for (uint32_t w : workerCounts())
      for (uint32_t bd : blockDims()) {
        SCOPED_TRACE("heads=" + std::to_string(s.heads) + " kv=" + std::to_string(s.kvHeads) +
                     " seq=" + std::to_string(s.seq) + " bd=" + std::to_string(bd));
        const int64_t H = s.heads, KV = s.kvHeads, T = s.seq, D = s.dim, G = H / KV;
        auto q = randomFloats(H * D, 31), k = randomFloats(T * KV * D, 32), v = randomFloats(T * KV * D, 33);
        const float scale = 1.0f / std::sqrt(static_cast<float>(D));
        std::vector<float> sc(H * T, NAN), want(H * T);
        for (int64_t h = 0; h < H; ++h)
          for (int64_t t = 0; t < T; ++t) {
            double acc = 0;
            for (int64_t d = 0; d < D; ++d) acc += double(q[h * D + d]) * k[(t * KV + h / G) * D + d];
            want[h * T + t] = static_cast<float>(acc * scale);
          }
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                      sk_attn_scores_f32(c, q.data(), k.data(), sc.data(), H, KV, T, D, scale);
                    }).ok());
        EXPECT_TRUE(near(sc, want, 1e-4, 1e-5));

        auto p = randomFloats(H * T, 34, 0, 1);
        std::vector<float> o(H * D, NAN), wo(H * D);
        for (int64_t h = 0; h < H; ++h)
          for (int64_t d = 0; d < D; ++d) {
            double acc = 0;
            for (int64_t t = 0; t < T; ++t) acc += double(p[h * T + t]) * v[(t * KV + h / G) * D + d];
            wo[h * D + d] = static_cast<float>(acc);
          }
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                      sk_attn_weighted_sum_f32(c, p.data(), v.data(), o.data(), H, KV, T, D);
                    }).ok());
        EXPECT_TRUE(near(o, wo, 1e-4, 1e-5));
      }
}

TEST(Attention, KvHeadsNotDividingHeadsIsReported) {
  std::vector<float> q(12), k(12), s(12);
  sk::Status st = runBlocks(executor(3), 2, [&](const sk_ctx* c) {
    sk_attn_scores_f32(c, q.data(), k.data(), s.data(), 3, 2, 1, 4, 1.0f);
  });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("kv_heads"), std::string::npos);
}

TEST(Layout, Transpose) {
  for (const auto& rc : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 9}, {5, 7}, {64, 3}, {33, 65}}) {
    // Plain locals, not structured bindings: clang++ 14 cannot capture those in a lambda.
    const int64_t R = rc.first, C = rc.second;
    for (uint32_t w : workerCounts())
      for (uint32_t bd : blockDims()) {
        auto x = randomFloats(R * C, 35);
        std::vector<float> y(R * C, NAN), want(R * C);
        for (int64_t r = 0; r < R; ++r)
          for (int64_t c = 0; c < C; ++c) want[c * R + r] = x[r * C + c];
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) { sk_transpose_f32(c, x.data(), y.data(), R, C); }).ok());
        EXPECT_TRUE(near(y, want, 0, 0)) << R << "x" << C << " bd=" << bd;
      }
  }
}

TEST(Layout, ConcatLastAxisAndFlat) {
  struct S {
    int64_t rows, ca, cb;
  };
  for (S s : {S{1, 1, 1}, S{1, 100, 37}, S{3, 4, 5}, S{8, 0, 6}, S{7, 16, 16}})
    for (uint32_t w : workerCounts())
      for (uint32_t bd : blockDims()) {
        auto a = randomFloats(s.rows * s.ca, 36), b = randomFloats(s.rows * s.cb, 37);
        const int64_t W = s.ca + s.cb;
        std::vector<float> y(s.rows * W, NAN), want(s.rows * W);
        for (int64_t r = 0; r < s.rows; ++r) {
          for (int64_t c = 0; c < s.ca; ++c) want[r * W + c] = a[r * s.ca + c];
          for (int64_t c = 0; c < s.cb; ++c) want[r * W + s.ca + c] = b[r * s.cb + c];
        }
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                      sk_concat_f32(c, a.data(), b.data(), y.data(), s.rows, s.ca, s.cb);
                    }).ok());
        EXPECT_TRUE(near(y, want, 0, 0)) << "rows=" << s.rows << " bd=" << bd;
      }
}

}  // namespace
