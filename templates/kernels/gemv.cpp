// y[r] = sum_c W[r, c] * x[c]: W is [rows, cols], x [cols], y [rows].
// Two builtins from this source: gemv_f32 (f32 weights, entry sk_gemv_f32)
// and gemv_bf16w (-DSK_WEIGHT_BF16: bf16 weights as uint16_t, entry
// sk_gemv_bf16w); activations and accumulation are f32.
// Split: sk_block_range(rows) = the element split of y -> y "block";
// W (row slices, not its element split) and x are "all".
// Static shape: -DSK_ROWS, -DSK_COLS.
#include "superkernel/cpu/kernel.h"

#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif
#ifdef SK_COLS
#define SKV_COLS ((int64_t)(SK_COLS))
#else
#define SKV_COLS cols
#endif

#ifdef SK_WEIGHT_BF16
typedef uint16_t sk_weight_t;
static inline float sk_w(sk_weight_t v) {
  const uint32_t u = (uint32_t)v << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
#define SK_GEMV_ENTRY sk_gemv_bf16w
#else
typedef float sk_weight_t;
static inline float sk_w(sk_weight_t v) { return v; }
#define SK_GEMV_ENTRY sk_gemv_f32
#endif

SK_KERNEL void SK_GEMV_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, float* y, int64_t rows,
                             int64_t cols) {
  (void)rows;
  (void)cols;
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    const sk_weight_t* wr = w + r * C;
    // Four partial sums: independent chains the compiler can vectorize.
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    int64_t c = 0;
    for (; c + 4 <= C; c += 4) {
      s0 += sk_w(wr[c]) * x[c];
      s1 += sk_w(wr[c + 1]) * x[c + 1];
      s2 += sk_w(wr[c + 2]) * x[c + 2];
      s3 += sk_w(wr[c + 3]) * x[c + 3];
    }
    for (; c < C; ++c) s0 += sk_w(wr[c]) * x[c];
    y[r] = (s0 + s1) + (s2 + s3);
  }
}
