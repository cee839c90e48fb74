// Weights of the projection kernels (gemv, matmul, moe_expert_gemv): f32, or
// bf16 stored as uint16_t when the builtin defines SK_WEIGHT_BF16. Activations
// and accumulation are always f32. Private to this folder (its bytes are part
// of every including kernel's cache key).
#ifndef SK_KERNELS_WEIGHT_H
#define SK_KERNELS_WEIGHT_H

#include <stdint.h>

#ifdef SK_WEIGHT_BF16
typedef uint16_t sk_weight_t;
static inline float sk_w(sk_weight_t v) {
  const uint32_t u = (uint32_t)v << 16;  // bf16 is the top half of an f32
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
#else
typedef float sk_weight_t;
static inline float sk_w(sk_weight_t v) { return v; }
#endif

// sum_c w[c] * x[c] with four partial sums: independent chains the compiler
// can vectorize (the order is fixed, so results are reproducible).
static inline float sk_dot_w(const sk_weight_t* w, const float* x, int64_t n) {
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
}

#endif
