// Decode attention scores for one query token against a KV cache:
//   s[h, t] = scale * sum_d q[h, d] * k[t, h / (heads / kv_heads), d]
// q [heads, dim], k [seq, kv_heads, dim] (grouped-query attention when
// kv_heads < heads; kv_heads == heads is plain multi-head), s [heads, seq].
// Split: sk_block_range(heads * seq) over s's elements -> s "block";
// q and k "all". kv_heads not dividing heads is reported (sk_report_error).
// Static shape: -DSK_HEADS, -DSK_KV_HEADS, -DSK_SEQ, -DSK_DIM, -DSK_SCALE.
#include "superkernel/cpu/kernel.h"
#include "sk_simd.h"

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

// K rows prefetched ahead of the batch being computed (rows are kv_heads *
// dim floats apart and a head reads only its part of each: measured +7% on
// one worker at the benchmark's shape).
#define SKV_SC_PF_ROWS 16

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
#ifdef SK_KERNELS_BASELINE
  for (int64_t o = eb; o < ee; ++o) {
    const int64_t h = o / T, t = o - h * T;
    const float* qh = q + h * D;
    const float* kt = k + (t * KVH + h / group) * D;
    float acc = 0.0f;
    for (int64_t d = 0; d < D; ++d) acc += qh[d] * kt[d];
    s[o] = acc * SKV_SCALE;
  }
#else
  // The slice covers heads hb..he (the first and last maybe in part). Walk t
  // in tiles of about 16 KiB of one kv head's K rows and, inside a tile, every
  // head of the slice: the heads of one group then reuse the tile from L1, so
  // K comes from memory once per block instead of once per query head (the
  // previous order read it `group` times, each time half of every K row).
  // Within a head, SKV_W scores share one skv_hsum_many; each score is
  // skv_dot_f32(k_t, q_h, D) * scale bit for bit whichever path computes it,
  // so the result does not depend on the split.
  if (eb >= ee) return;
  const int64_t hb = eb / T, he = (ee - 1) / T;
  const int64_t tlo = hb == he ? eb - hb * T : 0, thi = hb == he ? ee - he * T : T;
  int64_t tile = (16384 / 4) / (D > 0 ? D : 1);
  tile = tile < SKV_W ? SKV_W : tile - tile % SKV_W;
  for (int64_t tt = tlo; tt < thi; tt += tile) {
    for (int64_t h = hb; h <= he; ++h) {
      int64_t t = h == hb ? eb - hb * T : 0, t1 = h == he ? ee - he * T : T;
      t = t < tt ? tt : t;
      t1 = t1 > tt + tile ? tt + tile : t1;
      const float* qh = q + h * D;
      const float* kh = k + (h / group) * D;
      float* sh = s + h * T;
      for (; t + SKV_W <= t1; t += SKV_W) {
        skv_f v[SKV_W], tails;
        for (int j = 0; j < SKV_W; ++j) {
          const int64_t tp = t + j + SKV_SC_PF_ROWS < T ? t + j + SKV_SC_PF_ROWS : t + j;
          for (int64_t c = 0; c < D; c += 16) __builtin_prefetch(kh + tp * KVH * D + c);
          float tl;
          v[j] = skv_dotv_f32(kh + (t + j) * KVH * D, qh, D, &tl);
          tails[j] = tl;
        }
        skv_store(sh + t, (skv_hsum_many(v) + tails) * SKV_SCALE);
      }
      for (; t < t1; ++t) sh[t] = skv_dot_f32(kh + t * KVH * D, qh, D) * SKV_SCALE;
    }
  }
#endif
}
