// Rotary position embedding for one token, x/y are [heads, dim] floats
// (y may alias x). Pairs are interleaved (x[2i], x[2i+1]), angle
// pos * theta^(-2i/dim) (the original RoPE / llama layout).
// Split: whole heads sk_block_range(heads) -> x, y "all" (the head split is
// the element split only when block_dim divides heads).
// An odd dim is reported with sk_report_error.
// Static shape: -DSK_HEADS, -DSK_DIM, -DSK_POS, -DSK_THETA.
#include "superkernel/cpu/kernel.h"

#ifdef SK_HEADS
#define SKV_HEADS ((int64_t)(SK_HEADS))
#else
#define SKV_HEADS heads
#endif
#ifdef SK_DIM
#define SKV_DIM ((int64_t)(SK_DIM))
#else
#define SKV_DIM dim
#endif
#ifdef SK_POS
#define SKV_POS ((int64_t)(SK_POS))
#else
#define SKV_POS pos
#endif
#ifdef SK_THETA
#define SKV_THETA ((float)(SK_THETA))
#else
#define SKV_THETA theta
#endif

SK_KERNEL void sk_rope_f32(const sk_ctx* ctx, const float* x, float* y, int64_t heads, int64_t dim, int64_t pos,
                           float theta) {
  (void)heads;
  (void)dim;
  (void)pos;
  (void)theta;
  const int64_t D = SKV_DIM;
  if (D % 2 != 0) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_rope_f32: dim must be even");
    return;
  }
  int64_t hb, he;
  sk_block_range(ctx, SKV_HEADS, &hb, &he);
  for (int64_t i = 0; i < D / 2; ++i) {
    // Angles in double: pos * freq loses too much in float at long positions.
    const double freq = __builtin_pow((double)SKV_THETA, -2.0 * (double)i / (double)D);
    const double ang = (double)SKV_POS * freq;
    const float c = (float)__builtin_cos(ang);
    const float s = (float)__builtin_sin(ang);
    for (int64_t h = hb; h < he; ++h) {
      const float a = x[h * D + 2 * i];
      const float b = x[h * D + 2 * i + 1];
      y[h * D + 2 * i] = a * c - b * s;
      y[h * D + 2 * i + 1] = a * s + b * c;
    }
  }
}
