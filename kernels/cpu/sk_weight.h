// Weights of the projection kernels (gemv, matmul, moe_expert_gemv), chosen
// by the builtin's macro; activations and accumulation are always f32:
//   (none)           f32
//   SK_WEIGHT_BF16   bf16 stored as uint16_t
//   SK_WEIGHT_F16    IEEE half stored as uint16_t
//   SK_WEIGHT_Q8_0   ggml's q8_0 blocks (sk_simd.h: f16 scale + 32 int8 per
//                    block, 34 bytes per 32 weights) stored as uint8_t; a
//                    row of C weights is C / 32 blocks (C % 32 == 0)
//   SK_WEIGHT_Q4_0   ggml's q4_0 blocks (sk_simd.h: f16 scale + 16 bytes of
//                    packed 4-bit quants, 18 bytes per 32 weights) stored as
//                    uint8_t; rows as for q8_0
// SK_W_NAME is the format's name (error messages); the block formats also
// define SK_WEIGHT_BLOCKED and SK_W_BLOCK_BYTES (bytes per 32 weights).
// sk_dot_w(w, x, n) is the vectorized dot product of sk_simd.h; with
// -DSK_KERNELS_BASELINE the f32 and bf16 paths are the previous scalar loop
// (four scalar partial sums), which the benchmark keeps as its baseline.
// Private to this folder (its bytes are part of every including kernel's
// cache key).
#ifndef SK_KERNELS_WEIGHT_H
#define SK_KERNELS_WEIGHT_H

#include <stdint.h>

#include "sk_simd.h"

#if defined(SK_WEIGHT_BF16)
typedef uint16_t sk_weight_t;
static inline float sk_w(sk_weight_t v) { return sk_bf16_to_f32(v); }
#define SK_DOT_VEC skv_dot_bf16
#define SK_W_NAME "bf16"
#elif defined(SK_WEIGHT_F16)
typedef uint16_t sk_weight_t;
static inline float sk_w(sk_weight_t v) { return sk_f16_to_f32(v); }
#define SK_DOT_VEC skv_dot_f16
#define SK_W_NAME "f16"
#elif defined(SK_WEIGHT_Q8_0)
typedef uint8_t sk_weight_t;
#define SK_WEIGHT_BLOCKED 1
#define SK_W_BLOCK_BYTES SK_Q8_0_BYTES
#define SK_W_NAME "q8_0"
#define SK_DOT_BLOCKED(w, x, n) skv_dot_q8_0((const sk_q8_0*)(const void*)(w), x, n)
#elif defined(SK_WEIGHT_Q4_0)
typedef uint8_t sk_weight_t;
#define SK_WEIGHT_BLOCKED 1
#define SK_W_BLOCK_BYTES SK_Q4_0_BYTES
#define SK_W_NAME "q4_0"
#define SK_DOT_BLOCKED(w, x, n) skv_dot_q4_0((const sk_q4_0*)(const void*)(w), x, n)
#else
typedef float sk_weight_t;
static inline float sk_w(sk_weight_t v) { return v; }
#define SK_DOT_VEC skv_dot_f32
#define SK_W_NAME "f32"
#endif

// Row r of a [rows, cols] weight matrix.
static inline const sk_weight_t* sk_w_row(const sk_weight_t* w, int64_t r, int64_t cols) {
#ifdef SK_WEIGHT_BLOCKED
  return w + r * (cols / 32) * SK_W_BLOCK_BYTES;
#else
  return w + r * cols;
#endif
}

// Whether cols is a valid row length for this weight format.
static inline int sk_w_cols_ok(int64_t cols) {
#ifdef SK_WEIGHT_BLOCKED
  return cols % 32 == 0;
#else
  (void)cols;
  return 1;
#endif
}

// sum_c w[c] * x[c] over one weight row of n weights.
static inline float sk_dot_w(const sk_weight_t* w, const float* x, int64_t n) {
#if defined(SK_WEIGHT_BLOCKED)
  return SK_DOT_BLOCKED(w, x, n);
#elif defined(SK_KERNELS_BASELINE) && !defined(SK_WEIGHT_F16)
  // The previous kernel: four scalar partial sums (no vectorized bf16 path).
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  const int64_t n4 = n - n % 4;
  for (int64_t c = 0; c < n4; c += 4) {
    s0 += sk_w(w[c]) * x[c];
    s1 += sk_w(w[c + 1]) * x[c + 1];
    s2 += sk_w(w[c + 2]) * x[c + 2];
    s3 += sk_w(w[c + 3]) * x[c + 3];
  }
  for (int64_t c = n4; c < n; ++c) s0 += sk_w(w[c]) * x[c];
  return (s0 + s1) + (s2 + s3);
#else
  return SK_DOT_VEC(w, x, n);
#endif
}

#endif
