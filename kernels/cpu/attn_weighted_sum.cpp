// Decode attention output: o[h, d] = sum_t p[h, t] * v[t, h / (heads / kv_heads), d]
// p [heads, seq] (softmaxed scores), v [seq, kv_heads, dim], o [heads, dim].
// Split: sk_block_range(heads * dim) over o's elements -> o "block";
// p and v "all". kv_heads not dividing heads is reported (sk_report_error).
// Static shape: -DSK_HEADS, -DSK_KV_HEADS, -DSK_SEQ, -DSK_DIM.
#include "superkernel/cpu/kernel.h"

#ifdef SK_HEADS
#define SKV_HEADS ((int64_t)(SK_HEADS))
#else
#define SKV_HEADS heads
#endif
#ifdef SK_KV_HEADS
#define SKV_KV_HEADS ((int64_t)(SK_KV_HEADS))
#else
#define SKV_KV_HEADS kv_heads
#endif
#ifdef SK_SEQ
#define SKV_SEQ ((int64_t)(SK_SEQ))
#else
#define SKV_SEQ seq
#endif
#ifdef SK_DIM
#define SKV_DIM ((int64_t)(SK_DIM))
#else
#define SKV_DIM dim
#endif

SK_KERNEL void sk_attn_weighted_sum_f32(const sk_ctx* ctx, const float* p, const float* v, float* o,
                                        int64_t heads, int64_t kv_heads, int64_t seq, int64_t dim) {
  (void)heads;
  (void)kv_heads;
  (void)seq;
  (void)dim;
  const int64_t H = SKV_HEADS, KVH = SKV_KV_HEADS, T = SKV_SEQ, D = SKV_DIM;
  if (KVH < 1 || H % KVH != 0) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_attn_weighted_sum_f32: kv_heads must divide heads");
    return;
  }
  const int64_t group = H / KVH;
  int64_t eb, ee;
  sk_block_range(ctx, H * D, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t h = e / D, d = e - h * D;
    const float* ph = p + h * T;
    const float* vd = v + (h / group) * D + d;
    float acc = 0.0f;
    for (int64_t t = 0; t < T; ++t) acc += ph[t] * vd[t * KVH * D];
    o[e] = acc;
  }
}
