// The decode-loop builtins (kv_append_f32, attn_decode_f32, increment_i64)
// against references written here: every block dim of blockDims() on every
// worker count, grouped-query and plain multi-head attention, cache rows above
// pos filled with NaN (never read), pos out of range (the launch fails with
// the message and the caches stay unchanged), and a short decode loop whose
// position counter is the buffer increment_i64 advances.
#include "KernelTestUtil.h"

#ifdef SK_TEST_MARCH_COPIES
#include <cpuid.h>

extern "C" {
void sk_attn_decode_f32_v3(const sk_ctx*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                           int64_t, int64_t, float);
void sk_attn_decode_f32_v4(const sk_ctx*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                           int64_t, int64_t, float);
}
#endif

using namespace sktest;

namespace {

using AttnDecodeFn = void (*)(const sk_ctx*, const float*, const float*, const float*, float*, int64_t, int64_t,
                              int64_t, int64_t, int64_t, float);

struct DecodeShape {
  int64_t heads, kvHeads, dim, cap;
};
// MHA, GQA, a dim not a multiple of any vector width, caches longer than one
// and two chunks of positions (the kernels' online softmax works in chunks).
const std::vector<DecodeShape> kDecode{{1, 1, 4, 1}, {4, 4, 16, 9}, {8, 2, 32, 300}, {6, 3, 7, 130}, {2, 1, 128, 20}};

// out[h, :] in f64: softmax over t <= pos of scale * q_h . k_t,g(h), times v.
std::vector<float> decodeRef(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                             DecodeShape s, int64_t pos, float scale) {
  const int64_t H = s.heads, KV = s.kvHeads, D = s.dim, G = H / KV;
  std::vector<float> out(size_t(H * D));
  for (int64_t h = 0; h < H; ++h) {
    std::vector<double> p(size_t(pos + 1));
    double mx = -INFINITY, sum = 0;
    for (int64_t t = 0; t <= pos; ++t) {
      double acc = 0;
      for (int64_t d = 0; d < D; ++d) acc += double(q[size_t(h * D + d)]) * k[size_t((t * KV + h / G) * D + d)];
      p[size_t(t)] = acc * scale;
      mx = std::max(mx, p[size_t(t)]);
    }
    for (double& x : p) sum += (x = std::exp(x - mx));
    for (int64_t d = 0; d < D; ++d) {
      double acc = 0;
      for (int64_t t = 0; t <= pos; ++t) acc += p[size_t(t)] * v[size_t((t * KV + h / G) * D + d)];
      out[size_t(h * D + d)] = static_cast<float>(acc / sum);
    }
  }
  return out;
}

// Caches of capacity cap with random rows 0..pos and NaN above.
void fillCaches(DecodeShape s, int64_t pos, std::vector<float>* k, std::vector<float>* v) {
  const int64_t row = s.kvHeads * s.dim;
  *k = randomFloats(size_t(s.cap * row), 72);
  *v = randomFloats(size_t(s.cap * row), 73);
  for (int64_t i = (pos + 1) * row; i < s.cap * row; ++i) (*k)[size_t(i)] = (*v)[size_t(i)] = NAN;
}

void checkDecode(AttnDecodeFn fn, const char* label) {
  for (DecodeShape s : kDecode)
    for (int64_t pos : {int64_t(0), s.cap / 2, s.cap - 1}) {
      SCOPED_TRACE(std::string(label) + " heads=" + std::to_string(s.heads) + " kv=" + std::to_string(s.kvHeads) +
                   " dim=" + std::to_string(s.dim) + " cap=" + std::to_string(s.cap) + " pos=" + std::to_string(pos));
      const int64_t H = s.heads, KV = s.kvHeads, D = s.dim, C = s.cap;
      auto q = randomFloats(size_t(H * D), 71, -2.0f, 2.0f);
      std::vector<float> k, v;
      fillCaches(s, pos, &k, &v);
      const float scale = 1.0f / std::sqrt(static_cast<float>(D));
      const auto want = decodeRef(q, k, v, s, pos, scale);
      std::vector<float> first;
      for (uint32_t w : workerCounts())
        for (uint32_t bd : blockDims()) {
          std::vector<float> out(size_t(H * D), -99.0f);
          ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                        fn(c, q.data(), k.data(), v.data(), out.data(), H, KV, D, C, pos, scale);
                      }).ok()) << "bd=" << bd << " w=" << w;
          EXPECT_TRUE(near(out, want, 1e-4, 1e-5)) << "bd=" << bd << " w=" << w;
          // Each head is one block's, summed in a fixed order: the bits do not depend on the split.
          if (first.empty()) first = out;
          else EXPECT_EQ(0, std::memcmp(first.data(), out.data(), out.size() * 4)) << "bd=" << bd << " w=" << w;
        }
    }
}

TEST(DecodeAttention, MatchesTheReferenceForEverySplitWithNaNAbovePos) { checkDecode(sk_attn_decode_f32, "portable"); }

#ifdef SK_TEST_MARCH_COPIES
TEST(DecodeAttention, EveryVectorWidth) {
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (v3) checkDecode(sk_attn_decode_f32_v3, "x86-64-v3");
  if (v4) checkDecode(sk_attn_decode_f32_v4, "x86-64-v4");
}
#endif

TEST(DecodeAttention, LargeScoresDoNotOverflow) {
  // Scores of about +-1000: exp without the max subtracted overflows to inf.
  const DecodeShape s{2, 1, 8, 40};
  const int64_t pos = 33;
  auto q = randomFloats(16, 74, -30.0f, 30.0f);
  std::vector<float> k, v;
  fillCaches(s, pos, &k, &v);
  for (float& x : k)
    if (!std::isnan(x)) x *= 30.0f;
  const auto want = decodeRef(q, k, v, s, pos, 1.0f);
  std::vector<float> out(16, NAN);
  ASSERT_TRUE(runBlocks(executor(3), 2, [&](const sk_ctx* c) {
                sk_attn_decode_f32(c, q.data(), k.data(), v.data(), out.data(), 2, 1, 8, 40, pos, 1.0f);
              }).ok());
  EXPECT_TRUE(near(out, want, 1e-4, 1e-5));
}

TEST(DecodeAttention, BadShapesFailTheLaunchAndWriteNothing) {
  std::vector<float> k(9 * 2 * 16, 0.25f), v(9 * 2 * 16, 1.0f);
  struct Bad {
    int64_t heads, kvHeads, dim, cap, pos;
    const char* message;
  };
  for (Bad b : {Bad{4, 2, 16, 9, 9, "attn_decode_f32: pos 9 out of range [0, 9)"},
                Bad{4, 2, 16, 9, -1, "attn_decode_f32: pos -1 out of range [0, 9)"},
                Bad{3, 2, 16, 9, 0, "attn_decode_f32: kv_heads must divide heads"},
                Bad{4, 0, 16, 9, 0, "attn_decode_f32: kv_heads must divide heads"},
                Bad{1, 1, 1025, 1, 0, "attn_decode_f32: dim 1025 out of range [0, 1024]"}})
    for (uint32_t bd : {1u, 3u, 40u}) {
      SCOPED_TRACE(std::string(b.message) + " bd=" + std::to_string(bd));
      std::vector<float> big(size_t(std::max<int64_t>(b.dim, 16) * 6), 0.5f);
      std::vector<float> out(big.size(), -3.0f);
      sk::Status st = runBlocks(executor(3), bd, [&](const sk_ctx* c) {
        sk_attn_decode_f32(c, big.data(), k.data(), v.data(), out.data(), b.heads, b.kvHeads, b.dim, b.cap, b.pos, 1.0f);
      });
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.error().message().find(b.message), std::string::npos) << st.error().message();
      for (float x : out) ASSERT_EQ(x, -3.0f) << "written despite the error";
    }
}

TEST(KvAppend, WritesRowPosAndNothingElse) {
  for (int64_t row : {int64_t(1), int64_t(7), int64_t(64), int64_t(100)})
    for (int64_t cap : {int64_t(1), int64_t(5)})
      for (uint32_t w : workerCounts())
        for (uint32_t bd : blockDims()) {
          auto k = randomFloats(size_t(row), 81), v = randomFloats(size_t(row), 82);
          const auto k0 = randomFloats(size_t(row * cap), 83), v0 = randomFloats(size_t(row * cap), 84);
          for (int64_t pos = 0; pos < cap; ++pos) {
            SCOPED_TRACE("row=" + std::to_string(row) + " cap=" + std::to_string(cap) + " pos=" + std::to_string(pos) +
                         " bd=" + std::to_string(bd) + " w=" + std::to_string(w));
            auto kc = k0, vc = v0, wk = k0, wv = v0;
            for (int64_t i = 0; i < row; ++i) {
              wk[size_t(pos * row + i)] = k[size_t(i)];
              wv[size_t(pos * row + i)] = v[size_t(i)];
            }
            ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) {
                          sk_kv_append_f32(c, k.data(), v.data(), kc.data(), vc.data(), row, cap, pos);
                        }).ok());
            EXPECT_TRUE(near(kc, wk, 0, 0));
            EXPECT_TRUE(near(vc, wv, 0, 0));
          }
        }
}

TEST(KvAppend, PosOutOfRangeFailsTheLaunchAndKeepsTheCaches) {
  const int64_t row = 12, cap = 5;
  auto k = randomFloats(row, 85), v = randomFloats(row, 86);
  const auto k0 = randomFloats(row * cap, 87), v0 = randomFloats(row * cap, 88);
  for (int64_t pos : {int64_t(-1), cap, int64_t(1) << 40})
    for (uint32_t bd : blockDims()) {
      SCOPED_TRACE("pos=" + std::to_string(pos) + " bd=" + std::to_string(bd));
      auto kc = k0, vc = v0;
      sk::Status st = runBlocks(executor(3), bd, [&](const sk_ctx* c) {
        sk_kv_append_f32(c, k.data(), v.data(), kc.data(), vc.data(), row, cap, pos);
      });
      ASSERT_FALSE(st.ok());
      const std::string want = "kv_append_f32: pos " + std::to_string(pos) + " out of range [0, 5)";
      EXPECT_NE(st.error().message().find(want), std::string::npos) << st.error().message();
      EXPECT_EQ(0, std::memcmp(kc.data(), k0.data(), kc.size() * 4));
      EXPECT_EQ(0, std::memcmp(vc.data(), v0.data(), vc.size() * 4));
    }
}

TEST(Increment, AddsDeltaToEveryElement) {
  for (int64_t n : {int64_t(1), int64_t(3), int64_t(100), int64_t(1000)})
    for (int64_t delta : {int64_t(1), int64_t(-7), int64_t(0)})
      for (uint32_t w : workerCounts())
        for (uint32_t bd : blockDims()) {
          std::vector<int64_t> x(static_cast<size_t>(n)), want(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) want[size_t(i)] = (x[size_t(i)] = i * 1000 - 5000) + delta;
          ASSERT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) { sk_increment_i64(c, x.data(), n, delta); }).ok());
          EXPECT_EQ(x, want) << "n=" << n << " delta=" << delta << " bd=" << bd;
        }
  // Two's complement wrap, not undefined behaviour.
  std::vector<int64_t> x{INT64_MAX, INT64_MIN};
  ASSERT_TRUE(runBlocks(executor(1), 2, [&](const sk_ctx* c) { sk_increment_i64(c, x.data(), 1, 1); }).ok());
  ASSERT_TRUE(runBlocks(executor(1), 1, [&](const sk_ctx* c) { sk_increment_i64(c, x.data() + 1, 1, -1); }).ok());
  EXPECT_EQ(x[0], INT64_MIN);
  EXPECT_EQ(x[1], INT64_MAX);
}

// A decode loop as a graph runs it: per token, append k and v at the position
// held in `step`, attend over rows 0..pos, advance `step`. The caches start as
// NaN, so reading a row not yet written shows up in the output.
TEST(DecodeLoop, AppendAttendIncrementMatchesTheReferenceEveryToken) {
  const DecodeShape s{8, 2, 16, 20};
  const int64_t row = s.kvHeads * s.dim, tokens = 17;
  const float scale = 0.25f;
  std::vector<float> kc(size_t(s.cap * row), NAN), vc(size_t(s.cap * row), NAN);
  std::vector<int64_t> step{0};
  for (uint32_t bd : {1u, 3u, 40u}) {
    std::fill(kc.begin(), kc.end(), NAN);
    std::fill(vc.begin(), vc.end(), NAN);
    step[0] = 0;
    for (int64_t t = 0; t < tokens; ++t) {
      SCOPED_TRACE("token " + std::to_string(t) + " bd=" + std::to_string(bd));
      auto q = randomFloats(size_t(s.heads * s.dim), uint32_t(100 + t));
      auto k = randomFloats(size_t(row), uint32_t(200 + t)), v = randomFloats(size_t(row), uint32_t(300 + t));
      std::vector<float> out(size_t(s.heads * s.dim), NAN);
      ASSERT_TRUE(runBlocks(executor(3), bd, [&](const sk_ctx* c) {
                    sk_kv_append_f32(c, k.data(), v.data(), kc.data(), vc.data(), row, s.cap, step[0]);
                  }).ok());
      ASSERT_TRUE(runBlocks(executor(3), bd, [&](const sk_ctx* c) {
                    sk_attn_decode_f32(c, q.data(), kc.data(), vc.data(), out.data(), s.heads, s.kvHeads, s.dim, s.cap,
                                       step[0], scale);
                  }).ok());
      EXPECT_TRUE(near(out, decodeRef(q, kc, vc, s, t, scale), 1e-4, 1e-5));
      ASSERT_TRUE(runBlocks(executor(3), bd, [&](const sk_ctx* c) { sk_increment_i64(c, step.data(), 1, 1); }).ok());
      ASSERT_EQ(step[0], t + 1);
    }
  }
}

}  // namespace
