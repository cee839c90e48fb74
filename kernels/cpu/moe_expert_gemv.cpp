// Selected-expert gemv: for slot s in [0, topk) with e = idx[s],
//   y[s, r] = sum_c W[e, r, c] * x_s[c]
// W is stacked [experts, rows, cols]; x_s = x[0:cols] when x_per_slot == 0
// (gate/up projections share the token) or x[s*cols : (s+1)*cols] when
// x_per_slot != 0 (down projection of each expert's own hidden state).
// Two builtins: moe_expert_gemv_f32 (sk_moe_expert_gemv_f32) and
// moe_expert_gemv_bf16w (-DSK_WEIGHT_BF16, sk_moe_expert_gemv_bf16w).
// Split: sk_block_range(topk * rows) over y's elements -> y "block";
// W, x, idx "all". An index outside [0, experts) is reported with
// sk_report_error and its outputs are set to 0.
// Static shape: -DSK_EXPERTS, -DSK_TOPK, -DSK_ROWS, -DSK_COLS, -DSK_X_PER_SLOT.
#include "superkernel/cpu/kernel.h"
#include "sk_weight.h"

#ifdef SK_EXPERTS
#define SKV_EXPERTS ((int64_t)(SK_EXPERTS))
#else
#define SKV_EXPERTS experts
#endif
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
#ifdef SK_COLS
#define SKV_COLS ((int64_t)(SK_COLS))
#else
#define SKV_COLS cols
#endif
#ifdef SK_X_PER_SLOT
#define SKV_X_PER_SLOT ((int32_t)(SK_X_PER_SLOT))
#else
#define SKV_X_PER_SLOT x_per_slot
#endif

#ifdef SK_WEIGHT_BF16
#define SK_MOE_ENTRY sk_moe_expert_gemv_bf16w
#else
#define SK_MOE_ENTRY sk_moe_expert_gemv_f32
#endif

SK_KERNEL void SK_MOE_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, const int32_t* idx, float* y,
                            int64_t experts, int64_t topk, int64_t rows, int64_t cols, int32_t x_per_slot) {
  (void)experts;
  (void)topk;
  (void)rows;
  (void)cols;
  (void)x_per_slot;
  const int64_t R = SKV_ROWS, C = SKV_COLS;
  int64_t eb, ee;
  sk_block_range(ctx, SKV_TOPK * R, &eb, &ee);
  for (int64_t o = eb; o < ee; ++o) {
    const int64_t s = o / R, r = o - s * R;
    const int64_t e = idx[s];
    if (e < 0 || e >= SKV_EXPERTS) {
      sk_report_error(ctx, "sk_moe_expert_gemv: expert index out of range");
      y[o] = 0.0f;
      continue;
    }
    const sk_weight_t* wr = w + (e * R + r) * C;
    const float* xs = SKV_X_PER_SLOT ? x + s * C : x;
    y[o] = sk_dot_w(wr, xs, C);
  }
}
