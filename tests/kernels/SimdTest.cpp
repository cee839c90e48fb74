// The vectorized builtins (kernels/cpu/sk_simd.h) at every vector
// width this machine can run: the portable fallback (objects built without
// -march), x86-64-v3 (AVX2 + F16C) and x86-64-v4 (AVX-512) copies
// (tests/kernels/extra.cmake); a width the CPU lacks is a skip that says
// so, one per test (Widths/SimdWidth.*/x86_64_v4). Against f64 references, with tolerances:
//  - dot products (gemv, matmul, attention scores, weighted sums):
//      |got - ref| <= 1e-5 * sum_c |w_c x_c| + 1e-6
//    (f32 accumulation in 4 vector accumulators plus a lane tree: at most
//    ~n/16 rounding steps per lane for n <= 2048, i.e. < 1e-5 relative to
//    the sum of magnitudes);
//  - f16 and bf16 weight conversion: exact (checked bit pattern by pattern);
//  - q8_0: the reference dequantizes exactly (d * q in f64), same tolerance;
//  - q4_0: the test packs known 4-bit values itself in ggml's block_q4_0
//    layout (f16 d, then byte j = element j | element j + 16 << 4) and the
//    reference is d * (q - 8) in f64, same tolerance; one-hot inputs check
//    every nibble position exactly;
//  - softmax (vector exp, < 2e-7 relative): 1e-5 relative + 1e-7;
//  - rms_norm: 1e-5 relative + 1e-6.
// Determinism: results are bit-identical for every block_dim and worker
// count (each output is computed whole by one block in a fixed order).
#include "KernelTestUtil.h"

#ifdef SK_TEST_MARCH_COPIES
#include <cpuid.h>
#endif

using namespace sktest;

#define SK_SIMD_DECLS(S)                                                                                         \
  void sk_gemv_f32##S(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t);                      \
  void sk_gemv_bf16w##S(const sk_ctx*, const uint16_t*, const float*, float*, int64_t, int64_t);                 \
  void sk_gemv_f16w##S(const sk_ctx*, const uint16_t*, const float*, float*, int64_t, int64_t);                  \
  void sk_gemv_q8_0##S(const sk_ctx*, const uint8_t*, const float*, float*, int64_t, int64_t);                   \
  void sk_matmul_f32##S(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, int64_t);           \
  void sk_matmul_bf16w##S(const sk_ctx*, const float*, const uint16_t*, float*, int64_t, int64_t, int64_t);      \
  void sk_matmul_f16w##S(const sk_ctx*, const float*, const uint16_t*, float*, int64_t, int64_t, int64_t);       \
  void sk_matmul_q8_0##S(const sk_ctx*, const float*, const uint8_t*, float*, int64_t, int64_t, int64_t);        \
  void sk_gemv_q4_0##S(const sk_ctx*, const uint8_t*, const float*, float*, int64_t, int64_t);                   \
  void sk_matmul_q4_0##S(const sk_ctx*, const float*, const uint8_t*, float*, int64_t, int64_t, int64_t);        \
  void sk_rms_norm_f32##S(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, float);           \
  void sk_add_rms_norm_f32##S(const sk_ctx*, const float*, const float*, const float*, float*, float*, int64_t,  \
                              int64_t, float);                                                                   \
  void sk_softmax_f32##S(const sk_ctx*, const float*, float*, int64_t, int64_t);                                 \
  void sk_attn_scores_f32##S(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, int64_t,       \
                             int64_t, float);                                                                    \
  void sk_attn_weighted_sum_f32##S(const sk_ctx*, const float*, const float*, float*, int64_t, int64_t, int64_t, \
                                   int64_t);

#ifdef SK_TEST_MARCH_COPIES
extern "C" {
SK_SIMD_DECLS(_v3)
SK_SIMD_DECLS(_v4)
}
#endif

namespace simd_test {

struct Arch {
  const char* name;
  bool supported;
  const char* missing;  // why this CPU cannot run the copy (when !supported)
  decltype(&sk_gemv_f32) gemv_f32;
  decltype(&sk_gemv_bf16w) gemv_bf16w;
  decltype(&sk_gemv_f16w) gemv_f16w;
  decltype(&sk_gemv_q8_0) gemv_q8_0;
  decltype(&sk_matmul_f32) matmul_f32;
  decltype(&sk_matmul_bf16w) matmul_bf16w;
  decltype(&sk_matmul_f16w) matmul_f16w;
  decltype(&sk_matmul_q8_0) matmul_q8_0;
  decltype(&sk_gemv_q4_0) gemv_q4_0;
  decltype(&sk_matmul_q4_0) matmul_q4_0;
  decltype(&sk_rms_norm_f32) rms_norm;
  decltype(&sk_add_rms_norm_f32) add_rms_norm;
  decltype(&sk_softmax_f32) softmax;
  decltype(&sk_attn_scores_f32) attn_scores;
  decltype(&sk_attn_weighted_sum_f32) attn_wsum;
};

#define SK_ARCH(label, S, ok, missing)                                                                             \
  Arch {                                                                                                           \
    label, ok, missing, sk_gemv_f32##S, sk_gemv_bf16w##S, sk_gemv_f16w##S, sk_gemv_q8_0##S, sk_matmul_f32##S,      \
        sk_matmul_bf16w##S, sk_matmul_f16w##S, sk_matmul_q8_0##S, sk_gemv_q4_0##S, sk_matmul_q4_0##S,              \
        sk_rms_norm_f32##S, sk_add_rms_norm_f32##S,                                                                \
        sk_softmax_f32##S, sk_attn_scores_f32##S, sk_attn_weighted_sum_f32##S                                      \
  }

std::vector<Arch> arches() {
  std::vector<Arch> a{SK_ARCH("fallback", , true, "")};
#ifdef SK_TEST_MARCH_COPIES
  __builtin_cpu_init();
  // F16C through cpuid: clang++ 14's __builtin_cpu_supports does not know "f16c".
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  a.push_back(SK_ARCH("x86-64-v3", _v3, v3, "this CPU lacks AVX2, FMA or F16C"));
  a.push_back(SK_ARCH("x86-64-v4", _v4, v4, "this CPU lacks AVX-512 (F, BW, VL and DQ)"));
#endif
  return a;
}

// One instance per vector width of arches(); a width this CPU cannot run is reported as a skip with the
// reason, not passed silently.
#ifdef SK_TEST_MARCH_COPIES
constexpr int kWidths = 3;
#else
constexpr int kWidths = 1;
#endif

class SimdWidth : public ::testing::TestWithParam<int> {};

std::string widthName(const ::testing::TestParamInfo<int>& info) {
  std::string name = arches()[size_t(info.param)].name;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

#define SK_ARCH_OR_SKIP(a)                                                                                       \
  const Arch a = arches()[size_t(GetParam())];                                                                   \
  if (!a.supported) GTEST_SKIP() << "the " << a.name << " copies cannot run here: " << a.missing

// ---- weight formats and references ----------------------------------------

std::vector<uint16_t> toF16Exact(size_t n, uint32_t seed) {
  // Random finite halves in [-2, 2] (exponent <= 15): bit patterns, so the
  // reference value is exact by construction.
  std::mt19937 g(seed);
  std::vector<uint16_t> h(n);
  for (auto& v : h) {
    uint16_t e = static_cast<uint16_t>(g() % 16), m = static_cast<uint16_t>(g() % 1024), s = static_cast<uint16_t>(g() % 2);
    v = static_cast<uint16_t>((s << 15) | (e << 10) | m);
  }
  return h;
}

// q8_0 rows: per 32 weights an f16 scale (2^-10 .. 2^-4 range) and 32 int8.
std::vector<uint8_t> randomQ8(int64_t rows, int64_t cols, uint32_t seed, std::vector<double>* deq) {
  std::mt19937 g(seed);
  const int64_t nb = cols / 32;
  std::vector<uint8_t> out(size_t(rows * nb * 34));
  deq->assign(size_t(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* blk = out.data() + (r * nb + b) * 34;
      const uint16_t d = static_cast<uint16_t>(0x1400 + g() % 0x1400);
      std::memcpy(blk, &d, 2);
      for (int i = 0; i < 32; ++i) {
        const int8_t q = static_cast<int8_t>(int(g() % 255) - 127);
        blk[2 + i] = static_cast<uint8_t>(q);
        (*deq)[size_t(r * cols + b * 32 + i)] = double(f16ToFloatRef(d)) * q;
      }
    }
  return out;
}

// q4_0 rows (ggml's block_q4_0): per 32 weights an f16 scale (2^-10 .. 2^-4
// range), then 16 bytes; byte j holds element j in its low nibble and element
// j + 16 in its high nibble; weight = d * (q - 8). The test draws the 4-bit
// values q per element and packs them, so the reference never unpacks.
void packQ4Block(uint8_t* blk, uint16_t d, const int* q) {
  std::memcpy(blk, &d, 2);
  for (int j = 0; j < 16; ++j) blk[2 + j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
}
std::vector<uint8_t> randomQ4(int64_t rows, int64_t cols, uint32_t seed, std::vector<double>* deq) {
  std::mt19937 g(seed);
  const int64_t nb = cols / 32;
  std::vector<uint8_t> out(size_t(rows * nb * 18));
  deq->assign(size_t(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const uint16_t d = static_cast<uint16_t>(0x1400 + g() % 0x1400);
      int q[32];
      for (int i = 0; i < 32; ++i) {
        q[i] = int(g() % 16);
        (*deq)[size_t(r * cols + b * 32 + i)] = double(f16ToFloatRef(d)) * (q[i] - 8);
      }
      packQ4Block(out.data() + (r * nb + b) * 18, d, q);
    }
  return out;
}

// y[r] = sum_c w[r, c] x[c] in f64, and the tolerance of each row.
void gemvRef(const std::vector<double>& w, const std::vector<float>& x, int64_t R, int64_t C, std::vector<double>* y,
             std::vector<double>* tol) {
  y->assign(size_t(R), 0.0);
  tol->assign(size_t(R), 1e-6);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const double p = w[size_t(r * C + c)] * x[size_t(c)];
      (*y)[size_t(r)] += p;
      (*tol)[size_t(r)] += 1e-5 * std::fabs(p);
    }
}

::testing::AssertionResult within(const std::vector<float>& got, const std::vector<double>& want,
                                  const std::vector<double>& tol) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - want[i]) <= tol[i]))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i] << " ± "
                                           << tol[i];
  return ::testing::AssertionSuccess();
}

template <class T>
std::vector<double> widen(const std::vector<T>& v, double (*f)(T)) {
  std::vector<double> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = f(v[i]);
  return o;
}
double fromF32(float v) { return v; }
double fromBf16(uint16_t v) { return bf16ToFloat(v); }
double fromF16(uint16_t v) { return f16ToFloatRef(v); }

// Runs `call` at several block dims / worker counts; every run must give the
// bit-identical vector (determinism), which is returned.
template <class F>
std::vector<float> runAllSplits(size_t n, F&& call) {
  std::vector<float> first;
  for (uint32_t w : {1u, 3u})
    for (uint32_t bd : {1u, 2u, 7u, 40u}) {
      std::vector<float> y(n, NAN);
      EXPECT_TRUE(runBlocks(executor(w), bd, [&](const sk_ctx* c) { call(c, y.data()); }).ok());
      if (first.empty()) first = y;
      else EXPECT_EQ(0, std::memcmp(first.data(), y.data(), n * 4)) << "block_dim " << bd << " workers " << w;
    }
  return first;
}

struct SimdShape {
  int64_t rows, cols;
};
const SimdShape kGemvShapes[] = {{1, 32}, {5, 64}, {37, 160}, {64, 512}, {17, 2048}, {3, 96}};

TEST_P(SimdWidth, GemvAllWeightFormats) {
  SK_ARCH_OR_SKIP(a);
  for (SimdShape s : kGemvShapes) {
    SCOPED_TRACE(std::string(a.name) + " rows=" + std::to_string(s.rows) + " cols=" + std::to_string(s.cols));
    const int64_t R = s.rows, C = s.cols;
    auto x = randomFloats(size_t(C), 31);
    auto wf = randomFloats(size_t(R * C), 32);
    std::vector<double> ref, tol;

    gemvRef(widen(wf, fromF32), x, R, C, &ref, &tol);
    auto y = runAllSplits(size_t(R), [&](const sk_ctx* c, float* o) { a.gemv_f32(c, wf.data(), x.data(), o, R, C); });
    EXPECT_TRUE(within(y, ref, tol)) << "f32";

    auto wb = toBf16(wf);
    gemvRef(widen(wb, fromBf16), x, R, C, &ref, &tol);
    y = runAllSplits(size_t(R), [&](const sk_ctx* c, float* o) { a.gemv_bf16w(c, wb.data(), x.data(), o, R, C); });
    EXPECT_TRUE(within(y, ref, tol)) << "bf16";

    auto wh = toF16Exact(size_t(R * C), 33);
    gemvRef(widen(wh, fromF16), x, R, C, &ref, &tol);
    y = runAllSplits(size_t(R), [&](const sk_ctx* c, float* o) { a.gemv_f16w(c, wh.data(), x.data(), o, R, C); });
    EXPECT_TRUE(within(y, ref, tol)) << "f16";

    std::vector<double> deq;
    auto wq = randomQ8(R, C, 34, &deq);
    gemvRef(deq, x, R, C, &ref, &tol);
    y = runAllSplits(size_t(R), [&](const sk_ctx* c, float* o) { a.gemv_q8_0(c, wq.data(), x.data(), o, R, C); });
    EXPECT_TRUE(within(y, ref, tol)) << "q8_0";

    auto w4 = randomQ4(R, C, 35, &deq);
    gemvRef(deq, x, R, C, &ref, &tol);
    y = runAllSplits(size_t(R), [&](const sk_ctx* c, float* o) { a.gemv_q4_0(c, w4.data(), x.data(), o, R, C); });
    EXPECT_TRUE(within(y, ref, tol)) << "q4_0";
  }
}

// q4_0's nibble layout, exactly: 16 rows x 3 blocks where element e of
// block b in row r holds q = q4LayoutValue(r, b, e) and block b's scale is
// 2^(2b - 4) (f16 0x2c00, 0x3400, 0x3c00); a one-hot x picks column k, so
// y[r] must be exactly d_b * (q - 8) (a product of an f16 and a small
// integer is exact in f32, and every other term is zero). Over the rows
// every nibble value reaches every position of a block; the two elements
// of one byte (e and e + 16) always differ, so swapped halves fail, and so
// do swapped blocks (different scales). The matmul reads the same bytes as
// W [N = 16, K = 96].
int q4LayoutValue(int64_t r, int64_t b, int64_t e) { return int((r + e + (e / 16) * 5 + b * 7) % 16); }

TEST_P(SimdWidth, Q4NibbleLayoutIsGgmls) {
  SK_ARCH_OR_SKIP(a);
  const int64_t R = 16, C = 96, NB = C / 32;
  const uint16_t scales[3] = {0x2c00, 0x3400, 0x3c00};
  std::vector<uint8_t> w(size_t(R * NB * 18));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t b = 0; b < NB; ++b) {
      int q[32];
      for (int e = 0; e < 32; ++e) q[e] = q4LayoutValue(r, b, e);
      packQ4Block(w.data() + (r * NB + b) * 18, scales[b], q);
    }
  for (int64_t k = 0; k < C; ++k) {
    std::vector<float> x(size_t(C), 0.0f), y(size_t(R), NAN), c(size_t(R), NAN);
    x[size_t(k)] = 1.0f;
    sk_ctx ctx{0, 1, nullptr};
    a.gemv_q4_0(&ctx, w.data(), x.data(), y.data(), R, C);
    a.matmul_q4_0(&ctx, x.data(), w.data(), c.data(), 1, C, R);
    for (int64_t r = 0; r < R; ++r) {
      const float want = f16ToFloatRef(scales[k / 32]) * float(q4LayoutValue(r, k / 32, k % 32) - 8);
      ASSERT_EQ(y[size_t(r)], want) << a.name << " gemv row " << r << " column " << k;
      ASSERT_EQ(c[size_t(r)], want) << a.name << " matmul column " << r << " k " << k;
    }
  }
}

// Every finite f16 bit pattern (and every bf16 pattern with a finite value)
// through the gemv weight path: a one-hot x picks column k, so y[r] must be
// the exact value of w[r, k] (the conversion is exact).
TEST_P(SimdWidth, F16AndBf16WeightConversionIsExact) {
  SK_ARCH_OR_SKIP(a);
  const int64_t C = 16;
  std::vector<uint16_t> pats;
  for (uint32_t h = 0; h < 65536; ++h)
    if ((h & 0x7c00u) != 0x7c00u) pats.push_back(static_cast<uint16_t>(h));
  const int64_t R = int64_t(pats.size()) / C;
  std::vector<uint16_t> bpats;
  for (uint32_t h = 0; h < 65536; ++h)
    if ((h & 0x7f80u) != 0x7f80u) bpats.push_back(static_cast<uint16_t>(h));
  const int64_t RB = int64_t(bpats.size()) / C;
  for (int64_t k = 0; k < C; ++k) {
    std::vector<float> x(static_cast<size_t>(C), 0.0f), y(static_cast<size_t>(R)), yb(static_cast<size_t>(RB));
    x[size_t(k)] = 1.0f;
    sk_ctx ctx{0, 1, nullptr};
    a.gemv_f16w(&ctx, pats.data(), x.data(), y.data(), R, C);
    for (int64_t r = 0; r < R; ++r)
      ASSERT_EQ(y[size_t(r)], f16ToFloatRef(pats[size_t(r * C + k)])) << "f16 pattern " << pats[size_t(r * C + k)];
    a.gemv_bf16w(&ctx, bpats.data(), x.data(), yb.data(), RB, C);
    for (int64_t r = 0; r < RB; ++r)
      ASSERT_EQ(yb[size_t(r)], bf16ToFloat(bpats[size_t(r * C + k)])) << "bf16 pattern " << bpats[size_t(r * C + k)];
  }
}

TEST(Simd, GemvQ8ColsNotMultipleOf32IsReported) {
  std::vector<uint8_t> w(34 * 2, 0);
  std::vector<float> x(40, 1.0f), y(1, 0.0f);
  sk::Status st = runBlocks(executor(1), 1, [&](const sk_ctx* c) { sk_gemv_q8_0(c, w.data(), x.data(), y.data(), 1, 40); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("multiple of 32"), std::string::npos) << st.error().message();
  st = runBlocks(executor(1), 1, [&](const sk_ctx* c) { sk_matmul_q8_0(c, x.data(), w.data(), y.data(), 1, 40, 1); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("sk_matmul_q8_0: k must be a multiple of 32"), std::string::npos)
      << st.error().message();
}

TEST(Simd, GemvQ4ColsNotMultipleOf32IsReported) {
  std::vector<uint8_t> w(18 * 2, 0);
  std::vector<float> x(48, 1.0f), y(2, 0.0f);
  // Two blocks: only block 0 reports, the call fails once with one message.
  sk::Status st = runBlocks(executor(2), 2, [&](const sk_ctx* c) { sk_gemv_q4_0(c, w.data(), x.data(), y.data(), 2, 48); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("sk_gemv: q4_0 weights need cols to be a multiple of 32"), std::string::npos)
      << st.error().message();
  st = runBlocks(executor(1), 1, [&](const sk_ctx* c) { sk_matmul_q4_0(c, x.data(), w.data(), y.data(), 1, 48, 1); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("sk_matmul_q4_0: k must be a multiple of 32"), std::string::npos)
      << st.error().message();
}

TEST_P(SimdWidth, MatmulAllWeightFormats) {
  struct S {
    int64_t m, k, n;
  };
  SK_ARCH_OR_SKIP(a);
  // {5, 33, 1100}: a group of 4 rows plus one, a column chunk boundary, and
  // an odd k (the k loop's single-step tail; not a q8_0 shape).
  for (S s : {S{1, 32, 7}, S{3, 64, 100}, S{4, 96, 33}, S{2, 128, 257}, S{2, 64, 2100}, S{1, 32, 4200},
              S{5, 33, 1100}}) {
    SCOPED_TRACE(std::string(a.name) + " m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) +
                 " n=" + std::to_string(s.n));
    const int64_t M = s.m, K = s.k, N = s.n;
    auto A = randomFloats(size_t(M * K), 41);
    auto B = randomFloats(size_t(K * N), 42);
    auto ref = [&](const std::vector<double>& bw, bool transposed, std::vector<double>* y, std::vector<double>* tol) {
      y->assign(size_t(M * N), 0.0);
      tol->assign(size_t(M * N), 1e-6);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t kk = 0; kk < K; ++kk) {
            const double p = double(A[size_t(i * K + kk)]) * bw[size_t(transposed ? j * K + kk : kk * N + j)];
            (*y)[size_t(i * N + j)] += p;
            (*tol)[size_t(i * N + j)] += 1e-5 * std::fabs(p);
          }
    };
    std::vector<double> want, tol;
    ref(widen(B, fromF32), false, &want, &tol);
    auto c = runAllSplits(size_t(M * N), [&](const sk_ctx* x, float* o) { a.matmul_f32(x, A.data(), B.data(), o, M, K, N); });
    EXPECT_TRUE(within(c, want, tol)) << "f32";
    auto Bb = toBf16(B);
    ref(widen(Bb, fromBf16), false, &want, &tol);
    c = runAllSplits(size_t(M * N), [&](const sk_ctx* x, float* o) { a.matmul_bf16w(x, A.data(), Bb.data(), o, M, K, N); });
    EXPECT_TRUE(within(c, want, tol)) << "bf16";
    auto Bh = toF16Exact(size_t(K * N), 43);
    ref(widen(Bh, fromF16), false, &want, &tol);
    c = runAllSplits(size_t(M * N), [&](const sk_ctx* x, float* o) { a.matmul_f16w(x, A.data(), Bh.data(), o, M, K, N); });
    EXPECT_TRUE(within(c, want, tol)) << "f16";
    if (K % 32 != 0) continue;
    std::vector<double> deq;
    auto Wq = randomQ8(N, K, 44, &deq);  // [N, K]: the linear layout
    ref(deq, true, &want, &tol);
    c = runAllSplits(size_t(M * N), [&](const sk_ctx* x, float* o) { a.matmul_q8_0(x, A.data(), Wq.data(), o, M, K, N); });
    EXPECT_TRUE(within(c, want, tol)) << "q8_0";
    auto W4 = randomQ4(N, K, 45, &deq);  // [N, K]: the linear layout
    ref(deq, true, &want, &tol);
    c = runAllSplits(size_t(M * N), [&](const sk_ctx* x, float* o) { a.matmul_q4_0(x, A.data(), W4.data(), o, M, K, N); });
    EXPECT_TRUE(within(c, want, tol)) << "q4_0";
  }
}

TEST_P(SimdWidth, RowKernels) {
  SK_ARCH_OR_SKIP(a);
  for (SimdShape s : {SimdShape{1, 1}, SimdShape{3, 17}, SimdShape{4, 64}, SimdShape{5, 333}, SimdShape{2, 4096}}) {
    SCOPED_TRACE(std::string(a.name) + " rows=" + std::to_string(s.rows) + " cols=" + std::to_string(s.cols));
    const int64_t R = s.rows, C = s.cols;
    auto x = randomFloats(size_t(R * C), 51, -30, 30), w = randomFloats(size_t(C), 52, 0.5, 1.5);
    auto res = randomFloats(size_t(R * C), 53);
    // softmax (vector exp): x in [-30, 30] spans e^-60 .. 1 after the max shift.
    auto y = runAllSplits(size_t(R * C), [&](const sk_ctx* c, float* o) { a.softmax(c, x.data(), o, R, C); });
    for (int64_t r = 0; r < R; ++r) {
      double m = -INFINITY, sum = 0;
      for (int64_t cc = 0; cc < C; ++cc) m = std::max(m, double(x[size_t(r * C + cc)]));
      for (int64_t cc = 0; cc < C; ++cc) sum += std::exp(double(x[size_t(r * C + cc)]) - m);
      for (int64_t cc = 0; cc < C; ++cc) {
        const double want = std::exp(double(x[size_t(r * C + cc)]) - m) / sum;
        ASSERT_NEAR(y[size_t(r * C + cc)], want, 1e-5 * want + 1e-7) << "softmax " << r << "," << cc;
      }
    }
    // rms_norm and add_rms_norm.
    y = runAllSplits(size_t(R * C), [&](const sk_ctx* c, float* o) { a.rms_norm(c, x.data(), w.data(), o, R, C, 1e-5f); });
    std::vector<float> sum(size_t(R * C));
    auto y2 = runAllSplits(size_t(R * C), [&](const sk_ctx* c, float* o) {
      a.add_rms_norm(c, x.data(), res.data(), w.data(), sum.data(), o, R, C, 1e-5f);
    });
    for (int64_t r = 0; r < R; ++r) {
      double ss = 0, ss2 = 0;
      for (int64_t cc = 0; cc < C; ++cc) {
        const double v = x[size_t(r * C + cc)], v2 = double(x[size_t(r * C + cc)] + res[size_t(r * C + cc)]);
        ss += v * v;
        ss2 += v2 * v2;
      }
      const double inv = 1.0 / std::sqrt(ss / double(C) + 1e-5), inv2 = 1.0 / std::sqrt(ss2 / double(C) + 1e-5);
      for (int64_t cc = 0; cc < C; ++cc) {
        const size_t i = size_t(r * C + cc);
        const double want = x[i] * inv * w[size_t(cc)];
        ASSERT_NEAR(y[i], want, 1e-5 * std::fabs(want) + 1e-6) << "rms_norm " << i;
        ASSERT_EQ(sum[i], x[i] + res[i]) << "add_rms_norm sum " << i;
        const double want2 = double(sum[i]) * inv2 * w[size_t(cc)];
        ASSERT_NEAR(y2[i], want2, 1e-5 * std::fabs(want2) + 1e-6) << "add_rms_norm " << i;
      }
    }
  }
}

TEST_P(SimdWidth, Attention) {
  struct S {
    int64_t heads, kvh, seq, dim;
  };
  SK_ARCH_OR_SKIP(a);
  for (S s : {S{8, 2, 64, 64}, S{4, 4, 9, 17}, S{2, 1, 33, 128}}) {
    SCOPED_TRACE(std::string(a.name) + " heads=" + std::to_string(s.heads) + " dim=" + std::to_string(s.dim));
    const int64_t H = s.heads, KVH = s.kvh, T = s.seq, D = s.dim, G = H / KVH;
    auto q = randomFloats(size_t(H * D), 61), k = randomFloats(size_t(T * KVH * D), 62);
    auto p = randomFloats(size_t(H * T), 63, 0, 1), v = randomFloats(size_t(T * KVH * D), 64);
    auto sc = runAllSplits(size_t(H * T), [&](const sk_ctx* c, float* o) { a.attn_scores(c, q.data(), k.data(), o, H, KVH, T, D, 0.125f); });
    auto os = runAllSplits(size_t(H * D), [&](const sk_ctx* c, float* o) { a.attn_wsum(c, p.data(), v.data(), o, H, KVH, T, D); });
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t t = 0; t < T; ++t) {
        double acc = 0, mag = 0;
        for (int64_t d = 0; d < D; ++d) {
          const double pr = double(q[size_t(h * D + d)]) * k[size_t((t * KVH + h / G) * D + d)];
          acc += pr;
          mag += std::fabs(pr);
        }
        ASSERT_NEAR(sc[size_t(h * T + t)], 0.125 * acc, 0.125 * 1e-5 * mag + 1e-6) << "scores " << h << "," << t;
      }
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0, mag = 0;
        for (int64_t t = 0; t < T; ++t) {
          const double pr = double(p[size_t(h * T + t)]) * v[size_t((t * KVH + h / G) * D + d)];
          acc += pr;
          mag += std::fabs(pr);
        }
        ASSERT_NEAR(os[size_t(h * D + d)], acc, 1e-5 * mag + 1e-6) << "weighted sum " << h << "," << d;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, SimdWidth, ::testing::Range(0, kWidths), widthName);

}  // namespace simd_test
