// MoE router: for each of `rows` tokens, scores over `experts` logits
// (softmax when sigmoid == 0, logistic sigmoid when sigmoid != 0), the top
// `topk` experts (ties: lower index first) and their weights; with
// normalize != 0 the selected weights are rescaled to sum to 1.
//   logits [rows, experts] f32, idx [rows, topk] i32, weights [rows, topk] f32
// Split: whole rows sk_block_range(rows) -> every buffer "all".
// topk < 1 or topk > experts is reported with sk_report_error.
// Static shape: -DSK_ROWS, -DSK_EXPERTS, -DSK_TOPK, -DSK_SIGMOID, -DSK_NORMALIZE.
#include "superkernel/cpu/kernel.h"

#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif
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
#ifdef SK_SIGMOID
#define SKV_SIGMOID ((int32_t)(SK_SIGMOID))
#else
#define SKV_SIGMOID sigmoid
#endif
#ifdef SK_NORMALIZE
#define SKV_NORMALIZE ((int32_t)(SK_NORMALIZE))
#else
#define SKV_NORMALIZE normalize
#endif

SK_KERNEL void sk_moe_gate_topk_f32(const sk_ctx* ctx, const float* logits, int32_t* idx, float* weights,
                                    int64_t rows, int64_t experts, int64_t topk, int32_t sigmoid,
                                    int32_t normalize) {
  (void)rows;
  (void)experts;
  (void)topk;
  (void)sigmoid;
  (void)normalize;
  const int64_t E = SKV_EXPERTS, K = SKV_TOPK;
  if (K < 1 || K > E) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_moe_gate_topk_f32: need 1 <= topk <= experts");
    return;
  }
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    const float* l = logits + r * E;
    int32_t* ir = idx + r * K;
    float* wr = weights + r * K;
    // Softmax and sigmoid are monotonic: select on the logits directly.
    // O(K * E * K) selection without scratch memory; K and E are small.
    for (int64_t j = 0; j < K; ++j) {
      int64_t best = -1;
      for (int64_t e = 0; e < E; ++e) {
        bool taken = false;
        for (int64_t p = 0; p < j; ++p) taken = taken || ir[p] == (int32_t)e;
        if (taken) continue;
        if (best < 0 || l[e] > l[best]) best = e;
      }
      ir[j] = (int32_t)best;
    }
    float denom = 1.0f;
    float m = l[ir[0]];  // the maximum logit
    if (!SKV_SIGMOID) {
      denom = 0.0f;
      for (int64_t e = 0; e < E; ++e) denom += __builtin_expf(l[e] - m);
    }
    float sel = 0.0f;
    for (int64_t j = 0; j < K; ++j) {
      const float v = l[ir[j]];
      wr[j] = SKV_SIGMOID ? 1.0f / (1.0f + __builtin_expf(-v)) : __builtin_expf(v - m) / denom;
      sel += wr[j];
    }
    if (SKV_NORMALIZE && sel > 0.0f)
      for (int64_t j = 0; j < K; ++j) wr[j] /= sel;
  }
}
