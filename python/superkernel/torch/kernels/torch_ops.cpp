// The kernels superkernel.torch lowers aten ops to (cpu target).
//
// Every kernel is generic over layout and specialised by macros: the
// lowering passes each op's static shape, strides and element offsets as
// -D macros, so one source serves every op and equal shapes share one object
// (the cache key follows the macros). Index arithmetic divides by
// compile-time constants, which the compiler turns into multiplications.
//
// Work split: block b computes the b-th sk_block_range slice of the op's
// OUTPUT elements in flat (row-major) order. So a fresh contiguous output is
// "partition": "block" exactly; inputs are "all" unless the lowering knows
// they are read in the same flat order (same shape, contiguous).
//
// Every macro the lowering passes is spelled SKT_* (-D macros are defined
// before the system headers are read, so a plain T or N could rename a
// header's identifiers); below they become typed constants.
//
// Element types: TA/TB/TC/TO name the storage type of each operand
// (float, double, bf16 and f16 (stored as uint16_t), int64_t, int32_t, bool
// (stored as uint8_t)). SKT_CT is the type arithmetic is done in: float,
// or double when an operand or the result is f64 (torch computes f64 in
// f64); integer add/sub/mul stay exact in int64.
//
// Op codes (OP_*) are defined once, below; the Python lowering reads them
// from this file by name (_lower.op_codes), so the two cannot drift.
#include <superkernel/cpu/kernel.h>

// No <cmath>, <cstring> or <type_traits>: every op is one object, and those
// headers cost clang 14 about as long as the kernel itself (0.15 of about
// 0.3 s per object), so the math below goes through the compiler's builtins
// (the same libm calls <cmath> makes) and the two traits are spelled out.

#ifndef SKT_CT
#define SKT_CT float
#endif

namespace {
using ct = SKT_CT;

namespace skm {  // float and double overloads, as std:: has them
#define SKT_MATH1(name) \
  inline float name(float x) { return __builtin_##name##f(x); } \
  inline double name(double x) { return __builtin_##name(x); }
SKT_MATH1(sqrt)
SKT_MATH1(exp)
SKT_MATH1(tanh)
SKT_MATH1(cos)
SKT_MATH1(sin)
SKT_MATH1(erf)
SKT_MATH1(log)
SKT_MATH1(fabs)
#undef SKT_MATH1
inline float pow(float x, float y) { return __builtin_powf(x, y); }
inline double pow(double x, double y) { return __builtin_pow(x, y); }
inline float fmax(float x, float y) { return __builtin_fmaxf(x, y); }
inline double fmax(double x, double y) { return __builtin_fmax(x, y); }
template <typename T>
inline bool isnan(T x) { return __builtin_isnan(x); }
using size_t = decltype(sizeof 0);
inline void memcpy(void* d, const void* s, size_t n) { __builtin_memcpy(d, s, n); }
constexpr double kNaN = __builtin_nan("");
constexpr float kInf = __builtin_inff();
}  // namespace skm

template <typename T, typename U>
constexpr bool same = false;
template <typename T>
constexpr bool same<T, T> = true;
template <typename T>  // std::is_integral for the types load() returns
constexpr bool integral = false;
template <>
constexpr bool integral<bool> = true;
template <>
constexpr bool integral<int64_t> = true;
template <>
constexpr bool integral<int32_t> = true;
template <>
constexpr bool integral<uint8_t> = true;

struct bf16 {
  uint16_t bits;
};

inline float load(const float* p) { return *p; }
inline double load(const double* p) { return *p; }
inline float load(const bf16* p) {
  uint32_t u = static_cast<uint32_t>(p->bits) << 16;
  float f;
  skm::memcpy(&f, &u, 4);
  return f;
}
// IEEE half, by bits (no compiler half type needed): exact widening.
struct f16 {
  uint16_t bits;
};
inline float load(const f16* p) {
  const uint32_t h = p->bits, sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  uint32_t u;
  if (exp == 0x1fu) {
    u = sign | 0x7f800000u | (man << 13);  // inf / NaN
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (man << 13);  // normal: rebias 15 -> 127
  } else if (man == 0) {
    u = sign;  // zero
  } else {  // subnormal half: a normal float
    int e = -1;
    uint32_t m = man;
    do {
      ++e;
      m <<= 1;
    } while ((m & 0x400u) == 0);
    u = sign | ((112u - e) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  skm::memcpy(&f, &u, 4);
  return f;
}
inline int64_t load(const int64_t* p) { return *p; }
inline int64_t load(const int32_t* p) { return *p; }
inline bool load(const uint8_t* p) { return *p != 0; }

inline void store(float* p, double v) { *p = static_cast<float>(v); }
inline void store(double* p, double v) { *p = v; }
inline void store(bf16* p, double v) {
  // Round to nearest even, as torch does; NaN stays NaN.
  float f = static_cast<float>(v);
  uint32_t u;
  skm::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    p->bits = static_cast<uint16_t>((u >> 16) | 0x40u);
    return;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  p->bits = static_cast<uint16_t>(u >> 16);
}
inline void store(f16* p, double v) {
  // Round to nearest even, as torch's float -> half conversion does.
  const float f = static_cast<float>(v);
  uint32_t u;
  skm::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  uint16_t h;
  if (a > 0x7f800000u) {
    h = static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  } else if (a >= 0x477ff000u) {
    h = static_cast<uint16_t>(sign | 0x7c00u);  // overflow (rounds to >= 65520) -> inf
  } else if (a < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (a < 0x33000000u) {
      h = static_cast<uint16_t>(sign);
    } else {
      const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;  // 14..24
      uint32_t r = m >> shift;
      const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
      if (rem > half || (rem == half && (r & 1u))) ++r;
      h = static_cast<uint16_t>(sign | r);
    }
  } else {
    uint32_t r = a - 0x38000000u;  // rebias 127 -> 15 (exponent field moves down by 112 << 23)
    r += 0xfffu + ((r >> 13) & 1u);
    h = static_cast<uint16_t>(sign | (r >> 13));
  }
  p->bits = h;
}
inline void store(int64_t* p, double v) { *p = static_cast<int64_t>(v); }
inline void store(int32_t* p, double v) { *p = static_cast<int32_t>(v); }
inline void store(uint8_t* p, double v) { *p = v != 0.0 ? 1 : 0; }

// Up to 6 dimensions; unused leading ones have extent 1 and stride 0.
#ifndef SKT_D0
#define SKT_D0 1
#endif
#ifndef SKT_D1
#define SKT_D1 1
#endif
#ifndef SKT_D2
#define SKT_D2 1
#endif
#ifndef SKT_D3
#define SKT_D3 1
#endif
#ifndef SKT_D4
#define SKT_D4 1
#endif
#ifndef SKT_D5
#define SKT_D5 1
#endif
constexpr int64_t D0 = SKT_D0, D1 = SKT_D1, D2 = SKT_D2, D3 = SKT_D3, D4 = SKT_D4, D5 = SKT_D5;
constexpr int64_t kN = D0 * D1 * D2 * D3 * D4 * D5;

// Contiguous strides of the iteration shape: an operand with exactly these
// is read at its offset + i (no index arithmetic); one with all strides 0 is
// one broadcast element.
constexpr int64_t kC5 = 1, kC4 = D5, kC3 = D4 * kC4, kC2 = D3 * kC3, kC1 = D2 * kC2, kC0 = D1 * kC1;

// The layout of operand P: element offset SKT_P_OFF and strides SKT_P_S0..5.
#define SKT_OPERAND(P)                                                                               \
  constexpr int64_t P##_OFF = SKT_##P##_OFF, P##_S0 = SKT_##P##_S0, P##_S1 = SKT_##P##_S1,           \
                    P##_S2 = SKT_##P##_S2, P##_S3 = SKT_##P##_S3, P##_S4 = SKT_##P##_S4,             \
                    P##_S5 = SKT_##P##_S5;                                                           \
  constexpr bool P##_FLAT = (D0 == 1 || P##_S0 == kC0) && (D1 == 1 || P##_S1 == kC1) &&               \
                            (D2 == 1 || P##_S2 == kC2) && (D3 == 1 || P##_S3 == kC3) &&               \
                            (D4 == 1 || P##_S4 == kC4) && (D5 == 1 || P##_S5 == kC5);                 \
  constexpr bool P##_ONE = (D0 == 1 || P##_S0 == 0) && (D1 == 1 || P##_S1 == 0) &&                    \
                           (D2 == 1 || P##_S2 == 0) && (D3 == 1 || P##_S3 == 0) &&                    \
                           (D4 == 1 || P##_S4 == 0) && (D5 == 1 || P##_S5 == 0);                      \
  inline int64_t P##_at(int64_t i) {                                                                 \
    if constexpr (P##_FLAT) return P##_OFF + i;                                                      \
    if constexpr (P##_ONE) return P##_OFF;                                                           \
    const int64_t c5 = i % D5;                                                                       \
    i /= D5;                                                                                         \
    const int64_t c4 = i % D4;                                                                       \
    i /= D4;                                                                                         \
    const int64_t c3 = i % D3;                                                                       \
    i /= D3;                                                                                         \
    const int64_t c2 = i % D2;                                                                       \
    i /= D2;                                                                                         \
    const int64_t c1 = i % D1;                                                                       \
    i /= D1;                                                                                         \
    return P##_OFF + i * P##_S0 + c1 * P##_S1 + c2 * P##_S2 + c3 * P##_S3 + c4 * P##_S4 + c5 * P##_S5; \
  }

}  // namespace

// ---- elementwise: out = f(a[, b[, c]]) over the iteration shape D0..D5 ------
// OP selects the function; alpha/beta are its scalars (add's alpha, the
// constant of a scalar op, clamp bounds).
#if defined(SKT_ELEMENTWISE)
namespace {
#if SKT_ARITY >= 1
SKT_OPERAND(A)
#endif
#if SKT_ARITY >= 2
SKT_OPERAND(B)
#endif
#if SKT_ARITY >= 3
SKT_OPERAND(C)
#endif
SKT_OPERAND(O)

#define OP_COPY 0
#define OP_NEG 1
#define OP_RSQRT 2
#define OP_EXP 3
#define OP_SILU 4
#define OP_SIGMOID 5
#define OP_SQRT 6
#define OP_RECIP 7
#define OP_ABS 8
#define OP_TANH 9
#define OP_COS 10
#define OP_SIN 11
#define OP_RELU 12
#define OP_GELU 13
#define OP_LOG 14
#define OP_NOT 15
#define OP_GELU_TANH 16
#define OP_ERF 17
#define OP_CLAMP 18
#define OP_ADD 20
#define OP_SUB 21
#define OP_MUL 22
#define OP_DIV 23
#define OP_POW 24
#define OP_MAX 25
#define OP_MIN 26
#define OP_EQ 27
#define OP_NE 28
#define OP_LT 29
#define OP_LE 30
#define OP_GT 31
#define OP_GE 32
#define OP_AND 33
#define OP_OR 34
#define OP_XOR 35
#define OP_CMUL 36
#define OP_WHERE 40
#define OP_FILL 41

#if SKT_ARITY <= 1
template <typename T>
inline double f1(T x, double alpha, double beta) {
  (void)alpha;
  (void)beta;
  const double v = static_cast<double>(x);
#if SKT_OP == OP_COPY
  return v;
#elif SKT_OP == OP_NEG
  return -v;
#elif SKT_OP == OP_RSQRT
  return ct(1) / skm::sqrt(static_cast<ct>(v));
#elif SKT_OP == OP_EXP
  return skm::exp(static_cast<ct>(v));
#elif SKT_OP == OP_SILU
  const ct f = static_cast<ct>(v);
  return f / (ct(1) + skm::exp(-f));
#elif SKT_OP == OP_SIGMOID
  return ct(1) / (ct(1) + skm::exp(-static_cast<ct>(v)));
#elif SKT_OP == OP_SQRT
  return skm::sqrt(static_cast<ct>(v));
#elif SKT_OP == OP_RECIP
  return ct(1) / static_cast<ct>(v);
#elif SKT_OP == OP_ABS
  return skm::fabs(v);
#elif SKT_OP == OP_TANH
  return skm::tanh(static_cast<ct>(v));
#elif SKT_OP == OP_COS
  return skm::cos(static_cast<ct>(v));
#elif SKT_OP == OP_SIN
  return skm::sin(static_cast<ct>(v));
#elif SKT_OP == OP_RELU
  return v > 0 ? v : 0.0;
#elif SKT_OP == OP_GELU  // torch's gelu(approximate="none")
  const ct f = static_cast<ct>(v);
  return f * ct(0.5) * (ct(1) + skm::erf(f * ct(0.70710678118654752440)));
#elif SKT_OP == OP_GELU_TANH  // torch's gelu(approximate="tanh")
  const ct f = static_cast<ct>(v);
  const ct inner = ct(0.79788456080286535588) * (f + ct(0.044715) * f * f * f);
  return ct(0.5) * f * (ct(1) + skm::tanh(inner));
#elif SKT_OP == OP_ERF
  return skm::erf(static_cast<ct>(v));
#elif SKT_OP == OP_CLAMP  // NaN stays NaN (both comparisons are false)
  double r = v;
#if SKT_CLAMP_LO
  r = r < alpha ? alpha : r;
#endif
#if SKT_CLAMP_HI
  r = r > beta ? beta : r;
#endif
  return r;
#elif SKT_OP == OP_LOG
  return skm::log(static_cast<ct>(v));
#elif SKT_OP == OP_NOT
  return v == 0.0;
#elif SKT_OP == OP_FILL
  return alpha;
#else
#error "unknown unary OP"
#endif
}
#endif

#if SKT_ARITY == 2 && SKT_OP != OP_CMUL
// Integer operands (positions, indices) stay exact in int64.
template <typename T, typename U>
constexpr bool kIntegral = integral<T> && integral<U>;

template <typename T, typename U>
inline double f2(T x, U y, double alpha) {
  (void)alpha;
#if SKT_OP == OP_ADD
  if constexpr (kIntegral<T, U>) return static_cast<double>(x + static_cast<int64_t>(alpha) * y);
  return static_cast<ct>(x) + static_cast<ct>(alpha) * static_cast<ct>(y);
#elif SKT_OP == OP_SUB
  if constexpr (kIntegral<T, U>) return static_cast<double>(x - static_cast<int64_t>(alpha) * y);
  return static_cast<ct>(x) - static_cast<ct>(alpha) * static_cast<ct>(y);
#elif SKT_OP == OP_MUL
  if constexpr (kIntegral<T, U>) return static_cast<double>(x * y);
  return static_cast<ct>(x) * static_cast<ct>(y);
#elif SKT_OP == OP_DIV
  return static_cast<ct>(x) / static_cast<ct>(y);
#elif SKT_OP == OP_POW
  return skm::pow(static_cast<ct>(x), static_cast<ct>(y));
#elif SKT_OP == OP_MAX  // torch.maximum: NaN if either is NaN
  if constexpr (!kIntegral<T, U>) {
    if (skm::isnan(static_cast<double>(x)) || skm::isnan(static_cast<double>(y))) return skm::kNaN;
  }
  return x > y ? x : y;
#elif SKT_OP == OP_MIN  // torch.minimum: NaN if either is NaN
  if constexpr (!kIntegral<T, U>) {
    if (skm::isnan(static_cast<double>(x)) || skm::isnan(static_cast<double>(y))) return skm::kNaN;
  }
  return x < y ? x : y;
#elif SKT_OP == OP_EQ
  return x == y;
#elif SKT_OP == OP_NE
  return x != y;
#elif SKT_OP == OP_LT
  return x < y;
#elif SKT_OP == OP_LE
  return x <= y;
#elif SKT_OP == OP_GT
  return x > y;
#elif SKT_OP == OP_GE
  return x >= y;
#elif SKT_OP == OP_AND
  return (x != 0) && (y != 0);
#elif SKT_OP == OP_OR
  return (x != 0) || (y != 0);
#elif SKT_OP == OP_XOR
  return (x != 0) != (y != 0);
#else
#error "unknown binary OP"
#endif
}
#endif
}  // namespace

#if SKT_ARITY == 0
SK_KERNEL void skt_elementwise(const sk_ctx* ctx, SKT_TO* out, double alpha, double beta) {
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t i = b; i < e; ++i) store(out + O_at(i), f1(0.0, alpha, beta));
}
#elif SKT_ARITY == 1
SK_KERNEL void skt_elementwise(const sk_ctx* ctx, const SKT_TA* a, SKT_TO* out, double alpha, double beta) {
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t i = b; i < e; ++i) store(out + O_at(i), f1(load(a + A_at(i)), alpha, beta));
}
#elif SKT_ARITY == 2 && SKT_OP == OP_CMUL
// Complex multiplication on float pairs: operand layouts count complex
// elements (value i is at floats 2 * at(i), 2 * at(i) + 1); a real operand
// (SKT_X_COMPLEX 0) is (x, 0).
SK_KERNEL void skt_elementwise(const sk_ctx* ctx, const float* a, const float* bb, float* out, double alpha, double beta) {
  (void)alpha;
  (void)beta;
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t i = b; i < e; ++i) {
#if SKT_A_COMPLEX
    const float ar = a[2 * A_at(i)], ai = a[2 * A_at(i) + 1];
#else
    const float ar = a[A_at(i)], ai = 0.0f;
#endif
#if SKT_B_COMPLEX
    const float br = bb[2 * B_at(i)], bi = bb[2 * B_at(i) + 1];
#else
    const float br = bb[B_at(i)], bi = 0.0f;
#endif
    out[2 * O_at(i)] = ar * br - ai * bi;
    out[2 * O_at(i) + 1] = ar * bi + ai * br;
  }
}
#elif SKT_ARITY == 2
SK_KERNEL void skt_elementwise(const sk_ctx* ctx, const SKT_TA* a, const SKT_TB* bb, SKT_TO* out, double alpha, double beta) {
  (void)beta;
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t i = b; i < e; ++i) store(out + O_at(i), f2(load(a + A_at(i)), load(bb + B_at(i)), alpha));
}
#else  // where(cond, a, b)
SK_KERNEL void skt_elementwise(const sk_ctx* ctx, const SKT_TA* cond, const SKT_TB* x, const SKT_TC* y, SKT_TO* out, double alpha,
                               double beta) {
  (void)alpha;
  (void)beta;
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t i = b; i < e; ++i)
    store(out + O_at(i), load(cond + A_at(i)) ? static_cast<double>(load(x + B_at(i)))
                                              : static_cast<double>(load(y + C_at(i))));
}
#endif
#endif  // SKT_ELEMENTWISE

// ---- batched matmul: out[t, m, n] = sum_k A[t, m, k] B[t, k, n] (+ bias) ----
// Shapes T, M, K, N; strides A_ST/A_SM/A_SK, B_ST/B_SK/B_SN, offsets. A
// weight W [N, K] used as W.t() has B_SK = 1: the inner loop is contiguous
// in both operands. HAS_BIAS adds bias[BIAS_OFF + n * BIAS_SN] (addmm).
#if defined(SKT_MM)
namespace {
constexpr int64_t T = SKT_T, M = SKT_M, K = SKT_K, N = SKT_N;
constexpr int64_t A_OFF = SKT_A_OFF, A_ST = SKT_A_ST, A_SM = SKT_A_SM, A_SK = SKT_A_SK;
constexpr int64_t B_OFF = SKT_B_OFF, B_ST = SKT_B_ST, B_SK = SKT_B_SK, B_SN = SKT_B_SN;
#if SKT_HAS_BIAS
constexpr int64_t BIAS_OFF = SKT_BIAS_OFF, BIAS_SN = SKT_BIAS_SN;
#endif
// B_GATHER: B is a view of table rows picked by an index (w1[expert_indices]) that was never copied: B's flat
// position p is row p / BG_ROW of the gathered tensor, i.e. table row bidx[p / BG_ROW] (negative counts from the
// end when BG_WRAP). The lowering checked that no column of B crosses a row, so a column is one run in the table.
#if SKT_B_GATHER
constexpr int64_t BG_ROW = SKT_BG_ROW, BG_ROWS = SKT_BG_ROWS, BG_I = SKT_BG_I, BG_IDX_OFF = SKT_BG_IDX_OFF,
                  BG_IDX_S = SKT_BG_IDX_S, BG_TABLE_OFF = SKT_BG_TABLE_OFF;
inline int64_t table_row(const int64_t* bidx, int64_t i) {
  const int64_t r = bidx[BG_IDX_OFF + i * BG_IDX_S];
  return SKT_BG_WRAP && r < 0 ? r + BG_ROWS : r;
}
#endif

// 8 lanes of floats (GCC/Clang vector extensions; the compiler maps them to
// the -march's registers). Loads widen bf16 and convert anything else.
typedef float vf8 __attribute__((vector_size(32)));
template <typename E>
inline vf8 load8(const E* p) {
  vf8 v;
  for (int j = 0; j < 8; ++j) v[j] = static_cast<float>(load(p + j));
  return v;
}
inline vf8 load8(const float* p) {
  vf8 v;
  skm::memcpy(&v, p, sizeof v);
  return v;
}

// sum_k a[k * A_SK] * b[k * B_SK]. Contiguous operands (a weight used as
// W.t(), an activation row) take two 8-lane accumulators, a fixed shape, so
// the result does not depend on the block split; strided ones a scalar loop.
template <typename EA, typename EB>
inline ct dot(const EA* a, const EB* b) {
  int64_t k = 0;
  ct acc = 0;
  if constexpr (A_SK == 1 && B_SK == 1 && same<ct, float>) {
    vf8 s0 = {0, 0, 0, 0, 0, 0, 0, 0}, s1 = s0;
    for (; k + 16 <= K; k += 16) {
      s0 += load8(a + k) * load8(b + k);
      s1 += load8(a + k + 8) * load8(b + k + 8);
    }
    const vf8 s = s0 + s1;
    acc = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  }
  for (; k < K; ++k) acc += static_cast<ct>(load(a + k * A_SK)) * static_cast<ct>(load(b + k * B_SK));
  return acc;
}
// Four columns n .. n+3 of one output row at once: each A chunk is loaded
// once for four dot products. Every column is summed exactly as dot() sums
// it (two 8-lane accumulators, the same reduction and tail), so a result
// does not depend on whether it was computed alone or in a group of four.
constexpr bool kGroup4 = A_SK == 1 && B_SK == 1 && same<ct, float> && K >= 16;
template <typename EA, typename EB>
inline void dot4(const EA* a, const EB* const b[4], ct* out) {
  const vf8 z = {0, 0, 0, 0, 0, 0, 0, 0};
  vf8 s0[4] = {z, z, z, z}, s1[4] = {z, z, z, z};
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    const vf8 a0 = load8(a + k), a1 = load8(a + k + 8);
    for (int j = 0; j < 4; ++j) {
      s0[j] += a0 * load8(b[j] + k);
      s1[j] += a1 * load8(b[j] + k + 8);
    }
  }
  for (int j = 0; j < 4; ++j) {
    const vf8 v = s0[j] + s1[j];
    ct acc = ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
    for (int64_t kk = k; kk < K; ++kk) acc += static_cast<ct>(load(a + kk)) * static_cast<ct>(load(b[j] + kk));
    out[j] = acc;
  }
}
}  // namespace
SK_KERNEL void skt_mm(const sk_ctx* ctx, const SKT_TA* a, const SKT_TB* w, const SKT_TC* bias, SKT_TO* out
#if SKT_B_GATHER
                      ,
                      const int64_t* bidx
#endif
) {
  (void)bias;
  constexpr int64_t n_out = (int64_t)T * M * N;
  int64_t b, e;
  sk_block_range(ctx, n_out, &b, &e);
#if SKT_B_GATHER
  for (int64_t i = 0; i < BG_I; ++i) {  // checked once, before any column is read
    const int64_t r = table_row(bidx, i);
    if (r < 0 || r >= BG_ROWS) {
      sk_report_error(ctx, "superkernel.torch matmul of gathered rows (w[index] @ x): index out of range");
      return;
    }
  }
  // Column n of batch t: its first element in the table.
  auto column = [&](int64_t t, int64_t n) -> const SKT_TB* {
    const int64_t p = B_OFF + t * B_ST + n * B_SN;
    return w + BG_TABLE_OFF + table_row(bidx, p / BG_ROW) * BG_ROW + p % BG_ROW;
  };
#else
  auto column = [&](int64_t t, int64_t n) -> const SKT_TB* { return w + B_OFF + t * B_ST + n * B_SN; };
#endif
  auto finish = [&](int64_t i, int64_t n, ct acc) {
#if SKT_HAS_BIAS
    acc += load(bias + BIAS_OFF + n * BIAS_SN);
#else
    (void)n;
#endif
    store(out + i, acc);
  };
  // Outputs [i0, i1) of one row r = (t, m): groups of four columns, then single ones.
  auto row_part = [&](int64_t r, int64_t n0, int64_t n1) {
    const int64_t m = r % M, t = r / M;
    const SKT_TA* ar = a + A_OFF + t * A_ST + m * A_SM;
    int64_t n = n0;
    if constexpr (kGroup4) {
      for (; n + 4 <= n1; n += 4) {
        ct acc[4];
        const SKT_TB* const cols[4] = {column(t, n), column(t, n + 1), column(t, n + 2), column(t, n + 3)};
        dot4(ar, cols, acc);
        for (int j = 0; j < 4; ++j) finish(r * N + n + j, n + j, acc[j]);
      }
    }
    for (; n < n1; ++n) finish(r * N + n, n, dot(ar, column(t, n)));
  };
  // The block's slice of the flat output: a partial first row, whole rows, a partial last row. Over whole rows
  // the column groups are the outer loop, so four columns of weights (4 K values each) stay in L1 while every
  // row uses them: the weights are read once per block, not once per row (a prompt of 16 tokens).
  int64_t i = b;
  if (i % N != 0 && i < e) {
    const int64_t end = (i / N + 1) * N < e ? (i / N + 1) * N : e;
    row_part(i / N, i % N, end - (i / N) * N);
    i = end;
  }
  const int64_t r0 = i / N, r1 = e / N;
  if (r1 > r0) {
    constexpr int64_t G = kGroup4 ? 4 : 1;
    for (int64_t n = 0; n < N; n += G) {
      const int64_t n1 = n + G <= N ? n + G : N;
      for (int64_t r = r0; r < r1; ++r) row_part(r, n, n1);
    }
    i = r1 * N;
  }
  if (i < e) row_part(i / N, i % N, e - (i / N) * N);
}
#endif

// ---- reductions over the last dimension: out[r] = op(x[r, 0..L)) ----------
// Rows are the iteration shape D0..D5 (the input's leading dimensions);
// X_SL is the reduced dimension's stride. RED: 0 sum, 1 mean, 2 amax.
#if defined(SKT_REDUCE)
namespace {
SKT_OPERAND(X)
constexpr int64_t L = SKT_L, X_SL = SKT_X_SL;
}
SK_KERNEL void skt_reduce(const sk_ctx* ctx, const SKT_TA* x, SKT_TO* out) {
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t r = b; r < e; ++r) {
    const SKT_TA* row = x + X_at(r);
#if SKT_RED == 2  // amax: NaN wins, as in torch
    ct acc = -skm::kInf;
    for (int64_t l = 0; l < L; ++l) {
      const ct xv = static_cast<ct>(load(row + l * X_SL));
      acc = (skm::isnan(xv) || xv > acc) ? xv : acc;
    }
#else
    ct acc = 0;
    for (int64_t l = 0; l < L; ++l) acc += static_cast<ct>(load(row + l * X_SL));
#if SKT_RED == 1
    acc /= static_cast<ct>(L);
#endif
#endif
    store(out + r, acc);
  }
}
#endif

// ---- softmax over one dimension ---------------------------------------------
// Over the last dimension the output is contiguous [rows, L]; a block's slice
// of it may cut rows, so each row it touches gets its max and sum computed
// once, then only the block's elements are written ("partition": "block").
// Over another dimension (SKT_SOFTMAX_ROWS) a block takes whole rows and
// writes each at the output's layout O (row start) + l * O_SL.
#if defined(SKT_SOFTMAX)
namespace {
SKT_OPERAND(X)
#if SKT_SOFTMAX_ROWS
SKT_OPERAND(O)
constexpr int64_t O_SL = SKT_O_SL;
#endif
constexpr int64_t L = SKT_L, X_SL = SKT_X_SL;
template <typename E>
inline void row_stats(const E* row, ct* mx_out, ct* sum_out) {
  ct mx = -skm::kInf;
  for (int64_t l = 0; l < L; ++l) mx = skm::fmax(mx, static_cast<ct>(load(row + l * X_SL)));
  ct sum = 0;
  for (int64_t l = 0; l < L; ++l) sum += skm::exp(static_cast<ct>(load(row + l * X_SL)) - mx);
  *mx_out = mx;
  *sum_out = sum;
}
}  // namespace
SK_KERNEL void skt_softmax(const sk_ctx* ctx, const SKT_TA* x, SKT_TO* out) {
  int64_t b, e;
#if SKT_SOFTMAX_ROWS
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t r = b; r < e; ++r) {
    const SKT_TA* row = x + X_at(r);
    ct mx, sum;
    row_stats(row, &mx, &sum);
    for (int64_t l = 0; l < L; ++l)
      store(out + O_at(r) + l * O_SL, skm::exp(static_cast<ct>(load(row + l * X_SL)) - mx) / sum);
  }
#else
  sk_block_range(ctx, kN * L, &b, &e);
  for (int64_t r = b / L; r * L < e; ++r) {
    const SKT_TA* row = x + X_at(r);
    ct mx, sum;
    row_stats(row, &mx, &sum);
    const int64_t lo = r * L < b ? b - r * L : 0, hi = (r + 1) * L > e ? e - r * L : L;
    for (int64_t l = lo; l < hi; ++l) store(out + r * L + l, skm::exp(static_cast<ct>(load(row + l * X_SL)) - mx) / sum);
  }
#endif
}
#endif

// ---- top-k over the last dimension: the K largest of each row, sorted -------
// (torch.topk's default: largest, sorted; among equal values the lower index
// first). One block writes whole rows: its slice of the rows.
#if defined(SKT_TOPK)
namespace {
SKT_OPERAND(X)
constexpr int64_t L = SKT_L, X_SL = SKT_X_SL, K = SKT_K;
}
SK_KERNEL void skt_topk(const sk_ctx* ctx, const SKT_TA* x, SKT_TO* values, int64_t* indices) {
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t r = b; r < e; ++r) {
    const SKT_TA* row = x + X_at(r);
    int64_t taken[K];
    for (int64_t j = 0; j < K; ++j) {
      int64_t best = -1;
      float bv = 0.0f;
      for (int64_t l = 0; l < L; ++l) {
        bool used = false;
        for (int64_t t = 0; t < j; ++t) used = used || taken[t] == l;
        const float xv = static_cast<float>(load(row + l * X_SL));
        if (!used && (best < 0 || xv > bv || (skm::isnan(xv) && !skm::isnan(bv)))) {
          best = l;
          bv = xv;
        }
      }
      taken[j] = best;
      store(values + r * K + j, bv);
      indices[r * K + j] = best;
    }
  }
}
#endif

// ---- gather along one dimension: out[p, i, q] = table[p, idx[i], q] --------
// (embedding, index_select, x[..., idx, ...]). The table is contiguous over
// [P, ROWS, Q] from TABLE_OFF; idx holds I int64 values (IDX_S apart); out is
// contiguous [P, I, Q]. A negative index counts from the end when SKT_WRAP
// (tensor indexing, x[:, [-1]]); an index out of range is a runtime error.
#if defined(SKT_GATHER)
namespace {
constexpr int64_t P = SKT_P, I = SKT_I, Q = SKT_Q, ROWS = SKT_ROWS, IDX_OFF = SKT_IDX_OFF, IDX_S = SKT_IDX_S,
                  TABLE_OFF = SKT_TABLE_OFF;
}
SK_KERNEL void skt_gather(const sk_ctx* ctx, const SKT_TA* table, const int64_t* idx, SKT_TO* out) {
  int64_t b, e;
  sk_block_range(ctx, P * I * Q, &b, &e);
  // One contiguous run per gathered row (an expert's weights, an embedding row): the index is read once per run
  // and the run is a plain copy (memcpy when the types are equal).
  for (int64_t o = b; o < e;) {
    const int64_t q0 = o % Q, i = (o / Q) % I, p = o / (Q * I);
    const int64_t n = (Q - q0) < (e - o) ? (Q - q0) : (e - o);
    int64_t row = idx[IDX_OFF + i * IDX_S];
#if SKT_WRAP
    if (row < 0) row += ROWS;
#endif
    if (row < 0 || row >= ROWS) {
      sk_report_error(ctx, "superkernel.torch gather (embedding/index_select/indexing): index out of range");
      return;
    }
    const SKT_TA* src = table + TABLE_OFF + (p * ROWS + row) * Q + q0;
    if constexpr (same<SKT_TA, SKT_TO>) {
      skm::memcpy(out + o, src, static_cast<skm::size_t>(n) * sizeof(SKT_TO));
    } else {
      for (int64_t j = 0; j < n; ++j) store(out + o + j, static_cast<double>(load(src + j)));
    }
    o += n;
  }
}
#endif

// ---- index copy in place: dst[p, idx[j], q] = src[p, j, q] -----------------
// dst [P, L, Q] contiguous (its element offset DST_OFF), src strided [P, J, Q]
// in the iteration shape D0..D5 = (P, J, Q); idx J int64 values.
#if defined(SKT_INDEX_COPY)
namespace {
SKT_OPERAND(S)
constexpr int64_t P = SKT_P, L = SKT_L, J = SKT_J, Q = SKT_Q, IDX_OFF = SKT_IDX_OFF, IDX_S = SKT_IDX_S,
                  DST_OFF = SKT_DST_OFF;
}
SK_KERNEL void skt_index_copy(const sk_ctx* ctx, const SKT_TA* src, const int64_t* idx, SKT_TO* dst) {
  int64_t b, e;
  sk_block_range(ctx, kN, &b, &e);
  for (int64_t i = b; i < e; ++i) {
    const int64_t q = i % Q, j = (i / Q) % J, p = i / (Q * J);
    const int64_t at = idx[IDX_OFF + j * IDX_S];
    if (at < 0 || at >= L) {
      sk_report_error(ctx, "superkernel.torch index_copy_/index_put_: index out of range of the destination");
      return;
    }
    store(dst + DST_OFF + (p * L + at) * Q + q, static_cast<double>(load(src + S_at(i))));
  }
}
#endif
