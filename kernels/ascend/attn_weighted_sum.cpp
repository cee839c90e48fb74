// attn_weighted_sum_f32 (decode attention, part 2): o[h, d] = sum_t p[h, t] * v[t, h / (heads / kv_heads), d]
// p [heads, seq], v [seq, kv_heads, dim], o [heads, dim]. Split: SkBlockRange(heads * dim): o "block";
// p, v "all". Compile-time: SK_HEADS, SK_KV_HEADS, SK_SEQ, SK_DIM.
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_KV_HEADS) || !defined(SK_SEQ) || !defined(SK_DIM)
#error "attn_weighted_sum_f32 (ascend): heads, kv_heads, seq, dim are compile-time (-DSK_<NAME>)"
#endif

extern "C" __global__ __aicore__ void sk_attn_weighted_sum_f32(GM_ADDR p, GM_ADDR v, GM_ADDR o) {
  __gm__ const float* ps = SK_ASCEND_GM(const float, p);
  __gm__ const float* vs = SK_ASCEND_GM(const float, v);
  __gm__ float* out = SK_ASCEND_GM(float, o);
  const int64_t H = SK_HEADS, KVH = SK_KV_HEADS, T = SK_SEQ, D = SK_DIM;
  if (KVH < 1 || H % KVH != 0) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("sk_attn_weighted_sum_f32: kv_heads must divide heads");
    return;
  }
  const int64_t group = H / KVH;
  int64_t eb, ee;
  SkBlockRange(H * D, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t h = e / D, d = e - h * D;
    float acc = 0.0f;
    for (int64_t t = 0; t < T; ++t) acc += ps[h * T + t] * vs[(h / group) * D + d + t * KVH * D];
    out[e] = acc;
  }
}
