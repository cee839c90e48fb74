// attn_scores_f32 (decode attention, part 1): s[h, t] = scale * q[h, :] . k[t, h / (heads / kv_heads), :]
// q [heads, dim], k [seq, kv_heads, dim], s [heads, seq]. Split: SkBlockRange(heads * seq): s "block";
// q, k "all". Compile-time: SK_HEADS, SK_KV_HEADS, SK_SEQ, SK_DIM, SK_SCALE.
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_KV_HEADS) || !defined(SK_SEQ) || !defined(SK_DIM) || !defined(SK_SCALE)
#error "attn_scores_f32 (ascend): heads, kv_heads, seq, dim, scale are compile-time (-DSK_<NAME>)"
#endif

extern "C" __global__ __aicore__ void sk_attn_scores_f32(GM_ADDR q, GM_ADDR k, GM_ADDR s) {
  __gm__ const float* qs = SK_ASCEND_GM(const float, q);
  __gm__ const float* ks = SK_ASCEND_GM(const float, k);
  __gm__ float* out = SK_ASCEND_GM(float, s);
  const int64_t H = SK_HEADS, KVH = SK_KV_HEADS, T = SK_SEQ, D = SK_DIM;
  if (KVH < 1 || H % KVH != 0) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("sk_attn_scores_f32: kv_heads must divide heads");
    return;
  }
  const int64_t group = H / KVH;
  int64_t eb, ee;
  SkBlockRange(H * T, &eb, &ee);
  for (int64_t o = eb; o < ee; ++o) {
    const int64_t h = o / T, t = o - h * T;
    float acc = 0.0f;
    for (int64_t d = 0; d < D; ++d) acc += qs[h * D + d] * ks[(t * KVH + h / group) * D + d];
    out[o] = acc * (float)(SK_SCALE);
  }
}
