// MoE routing: top-k gate and the weighted combine of the experts' outputs
// (layouts and tie-breaking as on cpu: the first maximal expert wins).
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_MOE_GATE)
// One thread per row (experts and top-k are small): the selection is the cpu
// kernel's, so indices match exactly.
SK_KERNEL void sk_moe_gate_topk_f32(const sk_ctx* ctx, const float* logits, int32_t* idx, float* weights,
                                    int64_t rows, int64_t experts, int64_t topk, int32_t sigmoid,
                                    int32_t normalize) {
  const int64_t E = experts, K = topk;
  if (K < 1 || K > E) return;
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  for (int64_t r = rb + threadIdx.x; r < re; r += blockDim.x) {
    const float* l = logits + r * E;
    int32_t* ir = idx + r * K;
    float* wr = weights + r * K;
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
    if (!sigmoid) {
      denom = 0.0f;
      for (int64_t e = 0; e < E; ++e) denom += expf(l[e] - m);
    }
    float sel = 0.0f;
    for (int64_t j = 0; j < K; ++j) {
      const float v = l[ir[j]];
      wr[j] = sigmoid ? 1.0f / (1.0f + expf(-v)) : expf(v - m) / denom;
      sel += wr[j];
    }
    if (normalize && sel > 0.0f)
      for (int64_t j = 0; j < K; ++j) wr[j] /= sel;
  }
}
#elif defined(SK_MOE_COMBINE)
// y[r] = sum_s weights[s] * expert_out[s * rows + r].
SK_KERNEL void sk_moe_combine_f32(const sk_ctx* ctx, const float* weights, const float* expert_out, float* y,
                                  int64_t topk, int64_t rows) {
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  for (int64_t r = rb + threadIdx.x; r < re; r += blockDim.x) {
    float acc = 0.0f;
    for (int64_t s = 0; s < topk; ++s) acc += weights[s] * expert_out[s * rows + r];
    y[r] = acc;
  }
}
#else
#error "moe.cu: define SK_MOE_GATE or SK_MOE_COMBINE (the kernel's macros do)"
#endif
