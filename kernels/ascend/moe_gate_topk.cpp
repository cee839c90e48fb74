// moe_gate_topk_f32: per token row, the top `topk` of `experts` logits (ties: lower index) and their
// weights (softmax, or logistic sigmoid when sigmoid != 0; normalize != 0 rescales them to sum 1).
// logits [rows, experts], idx [rows, topk] i32, weights [rows, topk]. Split: whole rows: all "all".
// Compile-time: SK_ROWS, SK_EXPERTS, SK_TOPK, SK_SIGMOID, SK_NORMALIZE (1 <= topk <= experts, else the
// launch fails).
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_EXPERTS) || !defined(SK_TOPK) || !defined(SK_SIGMOID) || !defined(SK_NORMALIZE)
#error "moe_gate_topk_f32 (ascend): rows, experts, topk, sigmoid, normalize are compile-time (-DSK_<NAME>)"
#endif

extern "C" __global__ __aicore__ void sk_moe_gate_topk_f32(GM_ADDR logits, GM_ADDR idx, GM_ADDR weights) {
  __gm__ const float* ls = SK_ASCEND_GM(const float, logits);
  __gm__ int32_t* is = SK_ASCEND_GM(int32_t, idx);
  __gm__ float* wsel = SK_ASCEND_GM(float, weights);
  const int64_t E = SK_EXPERTS, K = SK_TOPK;
  if (K < 1 || K > E) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("sk_moe_gate_topk_f32: need 1 <= topk <= experts");
    return;
  }
  int64_t rb, re;
  SkBlockRange(SK_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    __gm__ const float* l = ls + r * E;
    __gm__ int32_t* ir = is + r * K;
    __gm__ float* wr = wsel + r * K;
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
    const float m = l[ir[0]];
    if (!(SK_SIGMOID)) {
      denom = 0.0f;
      for (int64_t e = 0; e < E; ++e) denom += __builtin_expf(l[e] - m);
    }
    float sel = 0.0f;
    for (int64_t j = 0; j < K; ++j) {
      const float v = l[ir[j]];
      wr[j] = (SK_SIGMOID) ? 1.0f / (1.0f + __builtin_expf(-v)) : __builtin_expf(v - m) / denom;
      sel += wr[j];
    }
    if ((SK_NORMALIZE) && sel > 0.0f)
      for (int64_t j = 0; j < K; ++j) wr[j] /= sel;
  }
}
