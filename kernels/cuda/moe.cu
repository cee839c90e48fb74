// MoE routing: top-k gate and the weighted combine of the experts' outputs
// (layouts and tie-breaking as on cpu: the first maximal expert wins).
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_MOE_GATE)
// A warp per row (issue 40 item 3): warp w of the CTA takes the block's rows rb + w, rb + w + warps, ...; lane l the
// experts l, l + 32, ... (the first SK_MG_REGS * 32 of them cached in registers). The indices are cpu's exactly.
// cpu's selection j scans the experts not taken yet in order, keeping the first one and replacing it by a larger
// one: the first maximal expert wins, a NaN is never larger, and a NaN stays only when it is the first expert not
// taken. So pick j = F, the lowest index not taken, when its logit is NaN, else the first maximal non-NaN expert
// not taken (a max over (value, lower index first): exact in any order, a shuffle tree). What is taken follows from
// two warp-uniform values, with no list of picks: the non-NaN picks are the first ones of the order (value
// descending, index ascending), so a non-NaN expert is taken iff it is not after the last non-NaN pick (lv, li) in
// that order; a NaN expert is taken iff its index is at most the last NaN pick's, nf - 1 (a NaN pick is the lowest
// index not taken, so every index below it was taken). F is looked for only in a row holding a NaN.
// Then the weights: the softmax denominator sum_e exp(l_e - max) as lane partial sums (experts in lane order) added
// by a fixed shuffle tree, so it is a function of experts only; pick j's weight by lane j % 32, the selected sum
// by a shuffle tree (cpu adds both in expert / pick order: the weights differ from cpu's in rounding only).
#define SK_MG_REGS 8  // experts per lane in registers (experts <= 256); more are read again per pick

// a before b in the selection order: larger value first, then lower index (both non-NaN).
static __device__ __forceinline__ bool sk_mg_before(float av, int32_t ai, float bv, int32_t bi) {
  return av > bv || (av == bv && ai < bi);
}

SK_KERNEL void sk_moe_gate_topk_f32(const sk_ctx* ctx, const float* logits, int32_t* idx, float* weights,
                                    int64_t rows, int64_t experts, int64_t topk, int32_t sigmoid,
                                    int32_t normalize) {
  const int64_t E = experts, K = topk;
  // topk outside [1, experts]: nothing is written (cuda has no sk_report_error yet; cpu fails the launch).
  if (K < 1 || K > E) return;
  const float inf = __int_as_float(0x7f800000);
  const int64_t lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  for (int64_t r = rb + (threadIdx.x >> 5); r < re; r += warps) {
    const float* l = logits + r * E;
    int32_t* ir = idx + r * K;
    float* wr = weights + r * K;
    float reg[SK_MG_REGS];
    int nan = 0;
#pragma unroll
    for (int k = 0; k < SK_MG_REGS; ++k) {
      const int64_t e = lane + 32 * k;
      reg[k] = e < E ? l[e] : 0.0f;
      nan |= e < E && reg[k] != reg[k];
    }
    for (int64_t e = lane + 32 * SK_MG_REGS; e < E; e += 32) nan |= l[e] != l[e];
    for (int off = 16; off > 0; off >>= 1) nan |= __shfl_xor_sync(0xffffffffu, nan, off);
    float lv = inf, m = 0.0f;  // the last non-NaN pick (lv, li): none yet is (+inf, -1), before every expert
    int32_t li = -1, nf = 0;   // NaN experts below nf are taken
    for (int64_t j = 0; j < K; ++j) {
      float bv = -inf;
      int32_t bi = (int32_t)E, fi = (int32_t)E;  // the first non-NaN expert not taken; the lowest index not taken
      auto consider = [&](float v, int32_t e) {
        const bool vnan = v != v;
        if (vnan ? e < nf : !sk_mg_before(lv, li, v, e)) return;  // taken
        fi = e < fi ? e : fi;
        if (!vnan && sk_mg_before(v, e, bv, bi)) {
          bv = v;
          bi = e;
        }
      };
#pragma unroll
      for (int k = 0; k < SK_MG_REGS; ++k)
        if (lane + 32 * k < E) consider(reg[k], (int32_t)(lane + 32 * k));
      for (int64_t e = lane + 32 * SK_MG_REGS; e < E; e += 32) consider(l[e], (int32_t)e);
      for (int off = 16; off > 0; off >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bv, off);
        const int32_t oi = __shfl_xor_sync(0xffffffffu, bi, off);
        if (sk_mg_before(ov, oi, bv, bi)) {
          bv = ov;
          bi = oi;
        }
      }
      int32_t pick = bi;
      bool nanpick = false;
      if (nan) {  // uniform
        for (int off = 16; off > 0; off >>= 1) {
          const int32_t of = __shfl_xor_sync(0xffffffffu, fi, off);
          fi = of < fi ? of : fi;
        }
        nanpick = l[fi] != l[fi];
      }
      if (nanpick) {
        pick = fi;
        nf = fi + 1;
      } else {
        lv = bv;
        li = bi;
      }
      if (j == 0) m = nanpick ? l[pick] : bv;  // the maximum logit, cpu's l[ir[0]] (NaN included)
      if (lane == (j & 31)) ir[j] = pick;
    }
    // ir[j] is read back below by the lane that wrote it (j % 32).
    float denom = 1.0f;
    if (!sigmoid) {
      float part = 0.0f;
#pragma unroll
      for (int k = 0; k < SK_MG_REGS; ++k)
        if (lane + 32 * k < E) part += expf(reg[k] - m);
      for (int64_t e = lane + 32 * SK_MG_REGS; e < E; e += 32) part += expf(l[e] - m);
      for (int off = 16; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
      denom = part;
    }
    float sel = 0.0f;
    for (int64_t j = lane; j < K; j += 32) {
      const float v = l[ir[j]];
      const float w = sigmoid ? 1.0f / (1.0f + expf(-v)) : expf(v - m) / denom;
      wr[j] = w;
      sel += w;
    }
    for (int off = 16; off > 0; off >>= 1) sel += __shfl_xor_sync(0xffffffffu, sel, off);
    if (normalize && sel > 0.0f)
      for (int64_t j = lane; j < K; j += 32) wr[j] /= sel;
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
