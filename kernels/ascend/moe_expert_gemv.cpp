// moe_expert_gemv: for slot s < topk with e = idx[s]: y[s, r] = W[e, r, :] . x_s, W [experts, rows, cols];
// x_s = x (x_per_slot 0) or x[s * cols:] (x_per_slot 1). A cube-core kernel.
// Two builtins: moe_expert_gemv_f32 and moe_expert_gemv_bf16w (-DSK_WEIGHT_BF16).
// Split: SkBlockRange(topk * rows): y "block"; W, x, idx "all". An expert index out of range fails the launch.
// Compile-time: SK_EXPERTS, SK_TOPK, SK_ROWS, SK_COLS, SK_X_PER_SLOT.
#include "sk_ascend_kernel.h"
#if !defined(SK_EXPERTS) || !defined(SK_TOPK) || !defined(SK_ROWS) || !defined(SK_COLS) || !defined(SK_X_PER_SLOT)
#error "moe_expert_gemv (ascend): experts, topk, rows, cols, x_per_slot are compile-time (-DSK_<NAME>)"
#endif

#ifdef SK_WEIGHT_BF16
#define SK_MOE_ENTRY sk_moe_expert_gemv_bf16w
#else
#define SK_MOE_ENTRY sk_moe_expert_gemv_f32
#endif

extern "C" __global__ __aicore__ void SK_MOE_ENTRY(GM_ADDR w, GM_ADDR x, GM_ADDR idx, GM_ADDR y) {
  __gm__ const sk_weight_t* ws = SK_ASCEND_GM(const sk_weight_t, w);
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ const int32_t* is = SK_ASCEND_GM(const int32_t, idx);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t R = SK_ROWS, C = SK_COLS;
  int64_t eb, ee;
  SkBlockRange((int64_t)(SK_TOPK) * R, &eb, &ee);
  for (int64_t o = eb; o < ee; ++o) {
    const int64_t s = o / R, r = o - s * R;
    const int64_t e = is[s];
    if (e < 0 || e >= (int64_t)(SK_EXPERTS)) {
      ys[o] = 0.0f;
      SkReportError("sk_moe_expert_gemv: expert index out of range");
      return;
    }
    ys[o] = SkDotW(ws + (e * R + r) * C, (SK_X_PER_SLOT) ? xs + s * C : xs, C);
  }
}
