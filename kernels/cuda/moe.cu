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
// y[r] = sum_s weights[s] * expert_out[s * rows + r], s in order (cpu's order) for every r. A thread takes 4
// consecutive rows of the block's slice: one 16-byte load per slot where rows % 4 == 0 and expert_out and y are
// 16-byte aligned at those rows (issue 40 item 3), else one row at a time; either way each y[r] is the same sum.
SK_KERNEL void sk_moe_combine_f32(const sk_ctx* ctx, const float* weights, const float* expert_out, float* y,
                                  int64_t topk, int64_t rows) {
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  for (int64_t r = rb + 4 * (int64_t)threadIdx.x; r < re; r += 4 * (int64_t)blockDim.x) {
    const int64_t n = re - r < 4 ? re - r : 4;
    const bool vec = n == 4 && rows % 4 == 0 && sk_aligned16(expert_out + r) && sk_aligned16(y + r);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (vec) {
      for (int64_t s = 0; s < topk; ++s) {
        float e[4];
        sk_u4_to_f4(sk_ld_global_v4(expert_out + s * rows + r), e);
        const float w = weights[s];
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i] += w * e[i];
      }
      sk_st_global_v4(y + r, sk_f4_to_u4(acc));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t s = 0; s < topk; ++s) acc[i] += weights[s] * expert_out[s * rows + r + i];
        y[r + i] = acc[i];
      }
    }
  }
}
#else
#error "moe.cu: define SK_MOE_GATE or SK_MOE_COMBINE (the kernel's macros do)"
#endif
