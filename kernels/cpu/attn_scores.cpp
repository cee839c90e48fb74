// Decode attention scores for one query token against a KV cache:
//   s[h, t] = scale * sum_d q[h, d] * k[t, h / (heads / kv_heads), d]
// q [heads, dim], k [seq, kv_heads, dim] (grouped-query attention when
// kv_heads < heads; kv_heads == heads is plain multi-head), s [heads, seq].
// Split: sk_block_range(heads * seq) over s's elements -> s "block";
// q and k "all". kv_heads not dividing heads is reported (sk_report_error).
// Static shape: -DSK_HEADS, -DSK_KV_HEADS, -DSK_SEQ, -DSK_DIM, -DSK_SCALE.
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
#ifdef SK_SCALE
#define SKV_SCALE ((float)(SK_SCALE))
#else
#define SKV_SCALE scale
#endif

SK_KERNEL void sk_attn_scores_f32(const sk_ctx* ctx, const float* q, const float* k, float* s, int64_t heads,
                                  int64_t kv_heads, int64_t seq, int64_t dim, float scale) {
  (void)heads;
  (void)kv_heads;
  (void)seq;
  (void)dim;
  (void)scale;
  const int64_t H = SKV_HEADS, KVH = SKV_KV_HEADS, T = SKV_SEQ, D = SKV_DIM;
  if (KVH < 1 || H % KVH != 0) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_attn_scores_f32: kv_heads must divide heads");
    return;
  }
  const int64_t group = H / KVH;
  int64_t eb, ee;
  sk_block_range(ctx, H * T, &eb, &ee);
  for (int64_t o = eb; o < ee; ++o) {
    const int64_t h = o / T, t = o - h * T;
    const float* qh = q + h * D;
    const float* kt = k + (t * KVH + h / group) * D;
    float acc = 0.0f;
    for (int64_t d = 0; d < D; ++d) acc += qh[d] * kt[d];
    s[o] = acc * SKV_SCALE;
  }
}
