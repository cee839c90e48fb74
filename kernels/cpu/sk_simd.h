// Vector helpers of the builtin kernels: one portable code path written with
// GCC/Clang vector extensions whose width follows the target's -march
// (the driver compiles with -march=<op list arch>, "native" by default):
//   AVX-512F: 16 floats, AVX/AVX2: 8 floats, anything else: 4 floats (SSE2,
//   NEON, or scalar code the compiler lowers). f16 loads use the F16C /
//   AVX-512 conversion instructions when -march has them, bit arithmetic
//   otherwise. Nothing here depends on a run-time CPU check: the cache key of
//   every kernel object includes -march and the host CPU's flags.
//
// Determinism: every reduction has a fixed shape (4 vector accumulators over
// the main loop, one vector over the remainder, a scalar tail, then a fixed
// pairwise tree over lanes), which depends only on n and the vector width,
// never on block_dim, workers or timing; skv_hsum_many (several lane sums in
// one register) adds exactly the lane pairs skv_hsum adds, so a result does
// not depend on whether it was batched. Results are identical run to run
// and for any block split; they differ (by rounding) between -march levels.
// Software prefetch (SKV_PREFETCH) changes timing only, never a result.
//
// -DSK_KERNELS_BASELINE=1 (a kernel macro: "macros": {"SK_KERNELS_BASELINE": "1"})
// selects the previous scalar kernels instead; the benchmark keeps them as
// its baseline variant (bench/suite.cpp "kernels" and "decode").
//
// Private to this folder (its bytes are part of every including kernel's
// cache key).
#ifndef SK_KERNELS_SIMD_H
#define SK_KERNELS_SIMD_H

#include <stdint.h>

#if defined(__AVX512F__)
#define SKV_W 16
#elif defined(__AVX__)
#define SKV_W 8
#else
#define SKV_W 4
#endif

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

typedef float skv_f __attribute__((vector_size(SKV_W * 4)));
typedef int32_t skv_i __attribute__((vector_size(SKV_W * 4)));
typedef uint32_t skv_u __attribute__((vector_size(SKV_W * 4)));
typedef uint16_t skv_h __attribute__((vector_size(SKV_W * 2)));
typedef int8_t skv_b __attribute__((vector_size(SKV_W)));
typedef uint8_t skv_ub __attribute__((vector_size(SKV_W)));

static inline skv_f skv_load(const float* p) {
  skv_f v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
static inline void skv_store(float* p, skv_f v) { __builtin_memcpy(p, &v, sizeof v); }
static inline skv_f skv_splat(float x) {
  skv_f v = {0};
  return v + x;
}

// bf16 is the top half of an f32: widen and shift.
static inline skv_f skv_load_bf16(const uint16_t* p) {
  skv_h h;
  __builtin_memcpy(&h, p, sizeof h);
  skv_u u = __builtin_convertvector(h, skv_u) << 16;
  return (skv_f)u;
}

// Scalar IEEE half -> float (exact, including subnormals, inf and NaN).
static inline float sk_f16_to_f32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  // Move exponent+mantissa into place and rescale by 2^112: correct for
  // normals and subnormals; exponent 31 (inf/NaN) gets the f32 max exponent.
  const uint32_t em = (uint32_t)(h & 0x7fffu) << 13;
  float f;
  __builtin_memcpy(&f, &em, 4);
  f *= 5.192296858534828e+33f;  // 2^112
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((h & 0x7c00u) == 0x7c00u) u = 0x7f800000u | em;
  u |= (uint32_t)(h & 0x8000u) << 16;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}

static inline skv_f skv_load_f16(const uint16_t* p) {
#if SKV_W == 16
  // Two 8-wide conversions (GCC 12 warns about _mm512_cvtph_ps's undefined
  // pass-through operand); the compiler joins them into one register.
  const __m256 lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
  const __m256 hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(p + 8)));
  skv_f v;
  __builtin_memcpy(&v, &lo, 32);
  __builtin_memcpy((char*)&v + 32, &hi, 32);
  return v;
#elif SKV_W == 8 && defined(__F16C__)
  return (skv_f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
#elif SKV_W == 4 && defined(__F16C__)
  return (skv_f)_mm_cvtph_ps(_mm_loadl_epi64((const __m128i*)p));
#else
  skv_h h;
  __builtin_memcpy(&h, p, sizeof h);
  const skv_u hu = __builtin_convertvector(h, skv_u);
  const skv_u em = (hu & 0x7fffu) << 13;
  skv_u u = (skv_u)((skv_f)em * 5.192296858534828e+33f);
  const skv_u infnan = (skv_u)((hu & 0x7c00u) == 0x7c00u);  // all-ones lanes
  u = (u & ~infnan) | ((em | 0x7f800000u) & infnan);
  return (skv_f)(u | ((hu & 0x8000u) << 16));
#endif
}

// Sum of the lanes in a fixed pairwise order (deterministic).
static inline float skv_hsum(skv_f v) {
  float a[SKV_W];
  __builtin_memcpy(a, &v, sizeof a);
  for (int w = SKV_W / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) a[i] += a[i + w];
  return a[0];
}
static inline float skv_hmax(skv_f v) {
  float a[SKV_W];
  __builtin_memcpy(a, &v, sizeof a);
  float m = a[0];
  for (int i = 1; i < SKV_W; ++i) m = a[i] > m ? a[i] : m;
  return m;
}
static inline skv_f skv_max(skv_f a, skv_f b) {
  const skv_i m = (skv_i)(a > b);
  return (skv_f)(((skv_i)a & m) | ((skv_i)b & ~m));
}

// Software prefetch of a weight stream, SKV_PF_BYTES ahead (a 4 KiB page
// boundary stops the hardware's stream prefetcher, which then has to find
// the stream again; a prefetch that runs ahead keeps a core's memory requests
// in flight across it). Measured on the 2-core AVX-512 VM (gemv at the
// benchmark's shape, one worker): +10-15% for bf16 / f16 rows and +25% for
// q8_0 with 1-2 KiB; f32 rows were not faster (their loads already keep
// enough lines in flight), so the f32 dot does not prefetch. The baseline
// kernels never prefetch.
#ifdef SK_KERNELS_BASELINE
#define SKV_PF_BYTES 0
#else
#define SKV_PF_BYTES 2048
#endif
#define SKV_PREFETCH(p, bytes, dist)                                                                   \
  do {                                                                                                 \
    if ((dist) > 0)                                                                                    \
      for (int pf_ = 0; pf_ < (int)(bytes); pf_ += 64) __builtin_prefetch((const char*)(p) + (dist) + pf_); \
  } while (0)

// The generic dot product: LOAD(w, i) yields SKV_W weights at element i as
// skv_f, ONE(w, i) one weight as float. 4 accumulators hide the FMA latency
// (the loop is bound by loads / memory, not by the add chain).
// SKV_DOT_ACCUMULATE leaves the four accumulators a0..a3 and the scalar tail;
// SKV_DOT_BODY returns their sum (skv_dotv_f32 the vector before it).
#define SKV_DOT_ACCUMULATE(LOAD, ONE, PF)                                    \
  skv_f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                              \
  int64_t i = 0;                                                             \
  for (; i + 4 * SKV_W <= n; i += 4 * SKV_W) {                               \
    SKV_PREFETCH(w + i, 4 * SKV_W * sizeof(*w), PF);                         \
    a0 += LOAD(w, i) * skv_load(x + i);                                      \
    a1 += LOAD(w, i + SKV_W) * skv_load(x + i + SKV_W);                      \
    a2 += LOAD(w, i + 2 * SKV_W) * skv_load(x + i + 2 * SKV_W);              \
    a3 += LOAD(w, i + 3 * SKV_W) * skv_load(x + i + 3 * SKV_W);              \
  }                                                                          \
  for (; i + SKV_W <= n; i += SKV_W) a0 += LOAD(w, i) * skv_load(x + i);     \
  float tail = 0.0f;                                                         \
  for (; i < n; ++i) tail += ONE(w, i) * x[i];
#define SKV_DOT_BODY(LOAD, ONE, PF) \
  SKV_DOT_ACCUMULATE(LOAD, ONE, PF) \
  return skv_hsum((a0 + a1) + (a2 + a3)) + tail;

#define SKV_LD_F32(w, i) skv_load((w) + (i))
#define SKV_ONE_F32(w, i) ((w)[i])
#define SKV_LD_BF16(w, i) skv_load_bf16((w) + (i))
#define SKV_ONE_BF16(w, i) sk_bf16_to_f32((w)[i])
#define SKV_LD_F16(w, i) skv_load_f16((w) + (i))
#define SKV_ONE_F16(w, i) sk_f16_to_f32((w)[i])

static inline float sk_bf16_to_f32(uint16_t v) {
  const uint32_t u = (uint32_t)v << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

static inline float skv_dot_f32(const float* w, const float* x, int64_t n) { SKV_DOT_BODY(SKV_LD_F32, SKV_ONE_F32, 0) }
static inline float skv_dot_bf16(const uint16_t* w, const float* x, int64_t n) {
  SKV_DOT_BODY(SKV_LD_BF16, SKV_ONE_BF16, SKV_PF_BYTES)
}
static inline float skv_dot_f16(const uint16_t* w, const float* x, int64_t n) {
  SKV_DOT_BODY(SKV_LD_F16, SKV_ONE_F16, SKV_PF_BYTES)
}

// q8_0: ggml's block-quantised int8 layout, 34 bytes per 32 weights:
// an f16 scale d, then 32 int8 q; weight = d * q. A row of n weights
// (n a multiple of 32) is n / 32 consecutive blocks.
#define SK_Q8_0_BLOCK 32
#define SK_Q8_0_BYTES 34
typedef struct sk_q8_0 {
  uint16_t d;
  int8_t qs[SK_Q8_0_BLOCK];
} __attribute__((packed)) sk_q8_0;

// sum_b d_b * sum_i q_i * x_i: per block the int8 -> f32 conversion is fused
// with the multiply, then the block sum is scaled once; blocks rotate over 4
// accumulators (block b into accumulator b % 4).
static inline skv_f skv_q8_0_block(const sk_q8_0* blk, const float* xb) {
  skv_f s = {0};
  for (int j = 0; j < SK_Q8_0_BLOCK; j += SKV_W) {
    skv_b q;
    __builtin_memcpy(&q, blk->qs + j, sizeof q);
    s += __builtin_convertvector(q, skv_f) * skv_load(xb + j);
  }
  return s;
}
#ifdef SK_KERNELS_BASELINE
// The previous loop (the benchmark's baseline): same sums, accumulators
// indexed by b & 3 (kept in memory by the compiler).
static inline float skv_dot_q8_0(const sk_q8_0* w, const float* x, int64_t n) {
  const int64_t nb = n / SK_Q8_0_BLOCK;
  skv_f acc[4] = {{0}, {0}, {0}, {0}};
  for (int64_t b = 0; b < nb; ++b) {
    const sk_q8_0* blk = w + b;
    const float* xb = x + b * SK_Q8_0_BLOCK;
    skv_f s = {0};
    for (int j = 0; j < SK_Q8_0_BLOCK; j += SKV_W) {
      skv_b q;
      __builtin_memcpy(&q, blk->qs + j, sizeof q);
      s += __builtin_convertvector(q, skv_f) * skv_load(xb + j);
    }
    acc[b & 3] += s * sk_f16_to_f32(blk->d);
  }
  return skv_hsum((acc[0] + acc[1]) + (acc[2] + acc[3]));
}
#else
static inline float skv_dot_q8_0(const sk_q8_0* w, const float* x, int64_t n) {
  const int64_t nb = n / SK_Q8_0_BLOCK;
  // Block b goes to accumulator b % 4; unrolled by 4 so the accumulators stay
  // in registers.
  skv_f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
  int64_t b = 0;
  for (; b + 4 <= nb; b += 4) {
    SKV_PREFETCH(w + b, 4 * SK_Q8_0_BYTES, SKV_PF_BYTES);
    a0 += skv_q8_0_block(w + b, x + b * SK_Q8_0_BLOCK) * sk_f16_to_f32(w[b].d);
    a1 += skv_q8_0_block(w + b + 1, x + (b + 1) * SK_Q8_0_BLOCK) * sk_f16_to_f32(w[b + 1].d);
    a2 += skv_q8_0_block(w + b + 2, x + (b + 2) * SK_Q8_0_BLOCK) * sk_f16_to_f32(w[b + 2].d);
    a3 += skv_q8_0_block(w + b + 3, x + (b + 3) * SK_Q8_0_BLOCK) * sk_f16_to_f32(w[b + 3].d);
  }
  if (b < nb) a0 += skv_q8_0_block(w + b, x + b * SK_Q8_0_BLOCK) * sk_f16_to_f32(w[b].d);
  if (b + 1 < nb) a1 += skv_q8_0_block(w + b + 1, x + (b + 1) * SK_Q8_0_BLOCK) * sk_f16_to_f32(w[b + 1].d);
  if (b + 2 < nb) a2 += skv_q8_0_block(w + b + 2, x + (b + 2) * SK_Q8_0_BLOCK) * sk_f16_to_f32(w[b + 2].d);
  return skv_hsum((a0 + a1) + (a2 + a3));
}
#endif

// q4_0: ggml's 4-bit block layout (block_q4_0), 18 bytes per 32 weights: an
// f16 scale d, then 16 bytes of packed quants; byte j holds element j in its
// low nibble and element j + 16 in its high nibble; weight = d * (q - 8),
// q in 0..15. A row of n weights (n a multiple of 32) is n / 32 consecutive
// blocks.
#define SK_Q4_0_BLOCK 32
#define SK_Q4_0_BYTES 18
typedef struct sk_q4_0 {
  uint16_t d;
  uint8_t qs[SK_Q4_0_BLOCK / 2];
} __attribute__((packed)) sk_q4_0;

#ifdef SK_KERNELS_BASELINE
// The baseline of the benchmark (there was no earlier q4_0 kernel): the
// scalar dequantize-and-multiply loop, one sum per block scaled by d.
static inline float skv_dot_q4_0(const sk_q4_0* w, const float* x, int64_t n) {
  const int64_t nb = n / SK_Q4_0_BLOCK;
  float acc = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * SK_Q4_0_BLOCK;
    float s = 0.0f;
    for (int j = 0; j < SK_Q4_0_BLOCK / 2; ++j) {
      s += (float)((int)(w[b].qs[j] & 0x0f) - 8) * xb[j];
      s += (float)((int)(w[b].qs[j] >> 4) - 8) * xb[j + SK_Q4_0_BLOCK / 2];
    }
    acc += s * sk_f16_to_f32(w[b].d);
  }
  return acc;
}
#else
// One block as a vector of partial sums: SKV_W packed bytes at a time give
// SKV_W low-nibble weights (elements j..) and SKV_W high-nibble weights
// (elements 16 + j..). The bytes are widened to 32-bit lanes first (one
// zero-extending load), then split and re-centred (q - 8) there, which
// saves the two widening shuffles of splitting in byte lanes
// (docs/PERFORMANCE.md section 6 has the measurement). At SKV_W = 16 one
// load covers the block.
static inline skv_f skv_q4_0_block(const sk_q4_0* blk, const float* xb) {
  skv_f s = {0};
  for (int j = 0; j < SK_Q4_0_BLOCK / 2; j += SKV_W) {
    skv_ub q;
    __builtin_memcpy(&q, blk->qs + j, sizeof q);
    const skv_i v = __builtin_convertvector(q, skv_i);
    s += __builtin_convertvector((v & 15) - 8, skv_f) * skv_load(xb + j);
    s += __builtin_convertvector((v >> 4) - 8, skv_f) * skv_load(xb + SK_Q4_0_BLOCK / 2 + j);
  }
  return s;
}
// Blocks rotate over 4 accumulators (block b into accumulator b % 4), like
// skv_dot_q8_0; the sum does not depend on the block split.
static inline float skv_dot_q4_0(const sk_q4_0* w, const float* x, int64_t n) {
  const int64_t nb = n / SK_Q4_0_BLOCK;
  skv_f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
  int64_t b = 0;
  for (; b + 4 <= nb; b += 4) {
    SKV_PREFETCH(w + b, 4 * SK_Q4_0_BYTES, SKV_PF_BYTES);
    a0 += skv_q4_0_block(w + b, x + b * SK_Q4_0_BLOCK) * sk_f16_to_f32(w[b].d);
    a1 += skv_q4_0_block(w + b + 1, x + (b + 1) * SK_Q4_0_BLOCK) * sk_f16_to_f32(w[b + 1].d);
    a2 += skv_q4_0_block(w + b + 2, x + (b + 2) * SK_Q4_0_BLOCK) * sk_f16_to_f32(w[b + 2].d);
    a3 += skv_q4_0_block(w + b + 3, x + (b + 3) * SK_Q4_0_BLOCK) * sk_f16_to_f32(w[b + 3].d);
  }
  if (b < nb) a0 += skv_q4_0_block(w + b, x + b * SK_Q4_0_BLOCK) * sk_f16_to_f32(w[b].d);
  if (b + 1 < nb) a1 += skv_q4_0_block(w + b + 1, x + (b + 1) * SK_Q4_0_BLOCK) * sk_f16_to_f32(w[b + 1].d);
  if (b + 2 < nb) a2 += skv_q4_0_block(w + b + 2, x + (b + 2) * SK_Q4_0_BLOCK) * sk_f16_to_f32(w[b + 2].d);
  return skv_hsum((a0 + a1) + (a2 + a3));
}
#endif

// exp(x) for a vector, Cephes-style: 2^n * p(r), |rel. error| < 2e-7 over
// [-87.3, 88.7]; below -87.3 (exp < 1.2e-38, including -inf) it returns 0,
// above 88.7 +inf. NaN is not propagated (clamped): callers never pass one.
static inline skv_f skv_exp(skv_f x) {
  const skv_i under = (skv_i)(x < -87.33654f);
  const skv_i over = (skv_i)(x > 88.72283f);
  x = skv_max(x, skv_splat(-87.33654f));
  x = -skv_max(-x, skv_splat(-88.72283f));
  // n = round(x / ln2) with the 1.5 * 2^23 trick (|n| < 2^22).
  const skv_f magic = skv_splat(12582912.0f);
  const skv_f t = x * 1.44269504088896341f + magic;
  const skv_f n = t - magic;
  const skv_f r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  skv_f p = skv_splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // 2^n as 2^n1 * 2^n2 (n1, n2 in [-63, 64]): both factors are normal floats
  // over the whole clamped range.
  const skv_i ni = __builtin_convertvector(n, skv_i);
  const skv_i n1 = ni >> 1, n2 = ni - n1;
  skv_f y = p * (skv_f)((n1 + 127) << 23) * (skv_f)((n2 + 127) << 23);
  y = (skv_f)((skv_i)y & ~under);
  y = (skv_f)(((skv_i)y & ~over) | ((skv_i)skv_splat(__builtin_inff()) & over));
  return y;
}

// ---- many horizontal sums at once -----------------------------------------
// skv_hsum_many(v) returns the vector whose lane j is skv_hsum(v[j]), bit for
// bit: each fold step adds the same lane pairs as skv_hsum's tree (lane i +
// lane i + m/2 inside a segment of m lanes), only several sums share one
// register. A fold of a and b keeps a's segments then b's, each halved, so
// folding neighbours keeps the slots in order. SKV_W sums cost SKV_W - 1
// folds (two shuffles and an add each) instead of SKV_W scalar trees.
// SKV_FOLD_X/Y(m) list the lanes of (a, b) whose index mod m is below /
// at least m / 2.
#if SKV_W == 16
#define SKV_FOLD_X16 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define SKV_FOLD_Y16 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define SKV_FOLD_X8 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27
#define SKV_FOLD_Y8 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31
#define SKV_FOLD_X4 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29
#define SKV_FOLD_Y4 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31
#define SKV_FOLD_X2 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define SKV_FOLD_Y2 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#elif SKV_W == 8
#define SKV_FOLD_X8 0, 1, 2, 3, 8, 9, 10, 11
#define SKV_FOLD_Y8 4, 5, 6, 7, 12, 13, 14, 15
#define SKV_FOLD_X4 0, 1, 4, 5, 8, 9, 12, 13
#define SKV_FOLD_Y4 2, 3, 6, 7, 10, 11, 14, 15
#define SKV_FOLD_X2 0, 2, 4, 6, 8, 10, 12, 14
#define SKV_FOLD_Y2 1, 3, 5, 7, 9, 11, 13, 15
#else
#define SKV_FOLD_X4 0, 1, 4, 5
#define SKV_FOLD_Y4 2, 3, 6, 7
#define SKV_FOLD_X2 0, 2, 4, 6
#define SKV_FOLD_Y2 1, 3, 5, 7
#endif
#define SKV_FOLD(a, b, m) \
  (__builtin_shufflevector((a), (b), SKV_FOLD_X##m) + __builtin_shufflevector((a), (b), SKV_FOLD_Y##m))

static inline skv_f skv_hsum_many(const skv_f* v) {
#if SKV_W == 16
  skv_f u[8], w[4];
  for (int j = 0; j < 8; ++j) u[j] = SKV_FOLD(v[2 * j], v[2 * j + 1], 16);
  for (int j = 0; j < 4; ++j) w[j] = SKV_FOLD(u[2 * j], u[2 * j + 1], 8);
  return SKV_FOLD(SKV_FOLD(w[0], w[1], 4), SKV_FOLD(w[2], w[3], 4), 2);
#elif SKV_W == 8
  skv_f u[4];
  for (int j = 0; j < 4; ++j) u[j] = SKV_FOLD(v[2 * j], v[2 * j + 1], 8);
  return SKV_FOLD(SKV_FOLD(u[0], u[1], 4), SKV_FOLD(u[2], u[3], 4), 2);
#else
  return SKV_FOLD(SKV_FOLD(v[0], v[1], 4), SKV_FOLD(v[2], v[3], 4), 2);
#endif
}

// skv_dot_f32 before its lane sum: returns the vector V and sets *tail so that
// skv_dot_f32(w, x, n) == skv_hsum(V) + *tail bit for bit (same statements,
// same order; kernels batch the lane sums with skv_hsum_many).
static inline skv_f skv_dotv_f32(const float* w, const float* x, int64_t n, float* tail_out) {
  SKV_DOT_ACCUMULATE(SKV_LD_F32, SKV_ONE_F32, 0)
  *tail_out = tail;
  return (a0 + a1) + (a2 + a3);
}

#endif
