// gemv / matmul / MoE kernels (f32 and bf16 weights) against references.
#include "KernelTestUtil.h"

using namespace sktest;

namespace {

std::vector<float> bf16Values(const std::vector<uint16_t>& h) {
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = bf16ToFloat(h[i]);
  return f;
}

std::vector<float> gemvRef(const std::vector<float>& w, const std::vector<float>& x, int64_t R, int64_t C) {
  std::vector<float> y(R);
  for (int64_t r = 0; r < R; ++r) {
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += double(w[r * C + c]) * x[c];
    y[r] = static_cast<float>(s);
  }
  return y;
}

TEST(Linear, GemvF32AndBf16Weights) {
  struct S {
    int64_t rows, cols;
  };
  for (S s : {S{1, 1}, S{5, 3}, S{16, 64}, S{37, 130}, S{256, 512}})
    for (uint32_t w : workerCounts())
      for (uint32_t bd : blockDims()) {
        SCOPED_TRACE("rows=" + std::to_string(s.rows) + " cols=" + std::to_string(s.cols) + " bd=" + std::to_string(bd));
        auto wt = randomFloats(s.rows * s.cols, 21), x = randomFloats(s.cols, 22);
        std::vector<float> y(s.rows, NAN);
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                      sk_gemv_f32(c, wt.data(), x.data(), y.data(), s.rows, s.cols);
                    }).ok());
        EXPECT_TRUE(near(y, gemvRef(wt, x, s.rows, s.cols), 1e-4, 1e-4));
        auto wb = toBf16(wt);
        std::fill(y.begin(), y.end(), NAN);
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                      sk_gemv_bf16w(c, wb.data(), x.data(), y.data(), s.rows, s.cols);
                    }).ok());
        EXPECT_TRUE(near(y, gemvRef(bf16Values(wb), x, s.rows, s.cols), 1e-4, 1e-4));
      }
}

std::vector<float> matmulRef(const std::vector<float>& a, const std::vector<float>& b, int64_t M, int64_t K, int64_t N) {
  std::vector<float> c(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a[i * K + k]) * b[k * N + j];
      c[i * N + j] = static_cast<float>(s);
    }
  return c;
}

TEST(Linear, MatmulF32AndBf16Weights) {
  struct S {
    int64_t m, k, n;
  };
  for (S s : {S{1, 1, 1}, S{1, 16, 24}, S{3, 16, 24}, S{4, 33, 65}, S{8, 64, 7}})
    for (uint32_t w : workerCounts())
      for (uint32_t bd : blockDims()) {
        SCOPED_TRACE("m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) + " n=" + std::to_string(s.n) +
                     " bd=" + std::to_string(bd));
        auto a = randomFloats(s.m * s.k, 23), b = randomFloats(s.k * s.n, 24);
        std::vector<float> c(s.m * s.n, NAN);
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* cx) {
                      sk_matmul_f32(cx, a.data(), b.data(), c.data(), s.m, s.k, s.n);
                    }).ok());
        EXPECT_TRUE(near(c, matmulRef(a, b, s.m, s.k, s.n), 1e-4, 1e-4));
        auto bb = toBf16(b);
        std::fill(c.begin(), c.end(), NAN);
        ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* cx) {
                      sk_matmul_bf16w(cx, a.data(), bb.data(), c.data(), s.m, s.k, s.n);
                    }).ok());
        EXPECT_TRUE(near(c, matmulRef(a, bf16Values(bb), s.m, s.k, s.n), 1e-4, 1e-4));
      }
}

TEST(Moe, GateTopkSoftmaxAndSigmoid) {
  const int64_t R = 3, E = 8;
  auto logits = randomFloats(R * E, 25, -4, 4);
  logits[1 * E + 2] = logits[1 * E + 5] = 10.0f;  // a tie: the lower index first
  for (int32_t sig : {0, 1})
    for (int32_t norm : {0, 1})
      for (int64_t K : {1, 2, 8})
        for (uint32_t bd : {1u, 2u, 5u}) {
          SCOPED_TRACE("sigmoid=" + std::to_string(sig) + " norm=" + std::to_string(norm) + " k=" + std::to_string(K));
          std::vector<int32_t> idx(R * K, -7);
          std::vector<float> wts(R * K, NAN);
          ASSERT_TRUE(runBlocks(executor(3), bd, [&](const sk_ctx* c) {
                        sk_moe_gate_topk_f32(c, logits.data(), idx.data(), wts.data(), R, E, K, sig, norm);
                      }).ok());
          for (int64_t r = 0; r < R; ++r) {
            std::vector<int> order(E);
            for (int e = 0; e < E; ++e) order[e] = e;
            std::stable_sort(order.begin(), order.end(),
                             [&](int a, int b) { return logits[r * E + a] > logits[r * E + b]; });
            double m = logits[r * E + order[0]], denom = 0, sel = 0;
            for (int e = 0; e < E; ++e) denom += std::exp(logits[r * E + e] - m);
            std::vector<float> want(K);
            for (int64_t j = 0; j < K; ++j) {
              double l = logits[r * E + order[j]];
              want[j] = static_cast<float>(sig ? 1 / (1 + std::exp(-l)) : std::exp(l - m) / denom);
              sel += want[j];
            }
            for (int64_t j = 0; j < K; ++j) {
              EXPECT_EQ(idx[r * K + j], order[j]) << "row " << r << " slot " << j;
              float wv = norm ? static_cast<float>(want[j] / sel) : want[j];
              EXPECT_NEAR(wts[r * K + j], wv, 1e-5) << "row " << r << " slot " << j;
            }
          }
        }
  std::vector<int32_t> idx(9);
  std::vector<float> wts(9);
  sk::Status st = runBlocks(executor(3), 2, [&](const sk_ctx* c) {
    sk_moe_gate_topk_f32(c, logits.data(), idx.data(), wts.data(), 1, E, 9, 0, 0);
  });
  ASSERT_FALSE(st.ok()) << "topk > experts must be reported";
  EXPECT_NE(st.error().message().find("topk"), std::string::npos);
}

TEST(Moe, ExpertGemvAndCombine) {
  const int64_t E = 5, R = 12, C = 19;
  auto w = randomFloats(E * R * C, 26);
  auto wb = toBf16(w);
  auto wbf = bf16Values(wb);
  for (int64_t K : {1, 2, 3})
    for (int32_t perSlot : {0, 1})
      for (uint32_t bd : blockDims()) {
        SCOPED_TRACE("k=" + std::to_string(K) + " per_slot=" + std::to_string(perSlot) + " bd=" + std::to_string(bd));
        auto x = randomFloats(perSlot ? K * C : C, 27);
        std::vector<int32_t> idx{4, 0, 2};
        idx.resize(K);
        auto ref = [&](const std::vector<float>& wv) {
          std::vector<float> y(K * R);
          for (int64_t s = 0; s < K; ++s)
            for (int64_t r = 0; r < R; ++r) {
              double acc = 0;
              for (int64_t c = 0; c < C; ++c)
                acc += double(wv[(idx[s] * R + r) * C + c]) * x[(perSlot ? s * C : 0) + c];
              y[s * R + r] = static_cast<float>(acc);
            }
          return y;
        };
        std::vector<float> y(K * R, NAN);
        ASSERT_TRUE(runBlocks(executor(8), bd, [&](const sk_ctx* c) {
                      sk_moe_expert_gemv_f32(c, w.data(), x.data(), idx.data(), y.data(), E, K, R, C, perSlot);
                    }).ok());
        EXPECT_TRUE(near(y, ref(w), 1e-4, 1e-4));
        std::fill(y.begin(), y.end(), NAN);
        ASSERT_TRUE(runBlocks(executor(3), bd, [&](const sk_ctx* c) {
                      sk_moe_expert_gemv_bf16w(c, wb.data(), x.data(), idx.data(), y.data(), E, K, R, C, perSlot);
                    }).ok());
        EXPECT_TRUE(near(y, ref(wbf), 1e-4, 1e-4));

        auto gw = randomFloats(K, 28, 0, 1);
        std::vector<float> out(R, NAN), want(R);
        for (int64_t r = 0; r < R; ++r) {
          double acc = 0;
          for (int64_t s = 0; s < K; ++s) acc += double(gw[s]) * y[s * R + r];
          want[r] = static_cast<float>(acc);
        }
        ASSERT_TRUE(runBlocks(executor(3), bd, [&](const sk_ctx* c) {
                      sk_moe_combine_f32(c, gw.data(), y.data(), out.data(), K, R);
                    }).ok());
        EXPECT_TRUE(near(out, want, 1e-5, 1e-6));
      }
  // An index outside [0, experts) fails the launch instead of reading past W.
  std::vector<int32_t> bad{1, 5};
  std::vector<float> x(C, 1.0f), y(2 * R, NAN);
  sk::Status st = runBlocks(executor(3), 4, [&](const sk_ctx* c) {
    sk_moe_expert_gemv_f32(c, w.data(), x.data(), bad.data(), y.data(), E, 2, R, C, 0);
  });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("out of range"), std::string::npos) << st.error().message();
}

}  // namespace
