// Weighted sum of the selected experts' outputs for one token:
//   y[r] = sum_s weights[s] * expert_out[s, r], expert_out [topk, rows].
// Split: sk_block_range(rows) = y's element split -> y "block"; weights and
// expert_out are "all". Static shape: -DSK_TOPK, -DSK_ROWS.
#include "superkernel/cpu/kernel.h"

#ifdef SK_TOPK
#define SKV_TOPK ((int64_t)(SK_TOPK))
#else
#define SKV_TOPK topk
#endif
#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif

SK_KERNEL void sk_moe_combine_f32(const sk_ctx* ctx, const float* weights, const float* expert_out, float* y,
                                  int64_t topk, int64_t rows) {
  (void)topk;
  (void)rows;
  const int64_t R = SKV_ROWS;
  int64_t rb, re;
  sk_block_range(ctx, R, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float acc = 0.0f;
    for (int64_t s = 0; s < SKV_TOPK; ++s) acc += weights[s] * expert_out[s * R + r];
    y[r] = acc;
  }
}
