// Decode attention for one query token over the first pos + 1 rows of a KV
// cache of capacity cap:
//   s[h, t] = scale * q[h, :] . k_cache[t, g(h), :]       for t in [0, pos]
//   p[h, :] = softmax(s[h, :])  (max subtracted, f32)
//   out[h, :] = sum_t p[h, t] * v_cache[t, g(h), :]
// q, out [heads, dim]; k_cache, v_cache [cap, kv_heads, dim]; grouped-query
// attention maps head h to kv head g(h) = h / (heads / kv_heads).
// Rows above pos are never read (they may hold anything, NaN included).
// Split: whole heads sk_block_range(heads) -> q, out "all" (the head split is
// the element split only when block_dim divides heads); caches "all". Each
// head is computed by one block in a fixed order, so the result does not
// depend on block_dim.
// Softmax without a scratch buffer: an online softmax over chunks of
// SKV_AD_CHUNK positions (scores of a chunk on the stack; when a chunk raises
// the running max, the sum and the accumulator are rescaled by
// exp(old max - new max)), with a stack accumulator of dim floats.
// pos is a run-time scalar in a decode loop ("runtime": true). Reported
// (sk_report_error, block 0; no block writes): pos outside [0, cap),
// kv_heads not dividing heads, dim outside [0, 1024].
// Static shape: -DSK_HEADS, -DSK_KV_HEADS, -DSK_DIM, -DSK_CAP, -DSK_POS,
// -DSK_SCALE.
#include "superkernel/cpu/kernel.h"
#include "sk_range_error.h"
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
#ifdef SK_DIM
#define SKV_DIM ((int64_t)(SK_DIM))
#else
#define SKV_DIM dim
#endif
#ifdef SK_CAP
#define SKV_CAP ((int64_t)(SK_CAP))
#else
#define SKV_CAP cap
#endif
#ifdef SK_POS
#define SKV_POS ((int64_t)(SK_POS))
#else
#define SKV_POS pos
#endif
#ifdef SK_SCALE
#define SKV_SCALE ((float)(SK_SCALE))
#else
#define SKV_SCALE scale
#endif

// Largest dim (the accumulator lives on the stack) and positions per chunk.
#define SKV_AD_MAX_DIM 1024
#define SKV_AD_CHUNK 128

SK_KERNEL void sk_attn_decode_f32(const sk_ctx* ctx, const float* q, const float* k_cache, const float* v_cache,
                                  float* out, int64_t heads, int64_t kv_heads, int64_t dim, int64_t cap, int64_t pos,
                                  float scale) {
  (void)heads;
  (void)kv_heads;
  (void)dim;
  (void)cap;
  (void)pos;
  (void)scale;
  const int64_t H = SKV_HEADS, KVH = SKV_KV_HEADS, D = SKV_DIM, C = SKV_CAP, P = SKV_POS;
  if (P < 0 || P >= C) {
    if (ctx->block_idx == 0) sk_report_range_error(ctx, "attn_decode_f32", "pos", P, 0, C, ")");
    return;
  }
  if (KVH < 1 || H % KVH != 0) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "attn_decode_f32: kv_heads must divide heads");
    return;
  }
  if (D < 0 || D > SKV_AD_MAX_DIM) {
    if (ctx->block_idx == 0) sk_report_range_error(ctx, "attn_decode_f32", "dim", D, 0, SKV_AD_MAX_DIM, "]");
    return;
  }
  const int64_t group = H / KVH, stride = KVH * D;
  int64_t hb, he;
  sk_block_range(ctx, H, &hb, &he);
  float acc[SKV_AD_MAX_DIM];
  float sc[SKV_AD_CHUNK];
  for (int64_t h = hb; h < he; ++h) {
    const float* qh = q + h * D;
    const float* kh = k_cache + (h / group) * D;
    const float* vh = v_cache + (h / group) * D;
    float m = -__builtin_inff(), l = 0.0f;
    for (int64_t d = 0; d < D; ++d) acc[d] = 0.0f;
    for (int64_t t0 = 0; t0 <= P; t0 += SKV_AD_CHUNK) {
      const int64_t n = P + 1 - t0 < SKV_AD_CHUNK ? P + 1 - t0 : SKV_AD_CHUNK;
      float cm = -__builtin_inff();
      for (int64_t i = 0; i < n; ++i) {
        const float* kt = kh + (t0 + i) * stride;
#ifdef SK_KERNELS_BASELINE
        float s = 0.0f;
        for (int64_t d = 0; d < D; ++d) s += qh[d] * kt[d];
#else
        const float s = skv_dot_f32(kt, qh, D);
#endif
        sc[i] = s * SKV_SCALE;
        cm = sc[i] > cm ? sc[i] : cm;
      }
      if (cm > m) {
        const float r = __builtin_expf(m - cm);
        l *= r;
        for (int64_t d = 0; d < D; ++d) acc[d] *= r;
        m = cm;
      }
      for (int64_t i = 0; i < n; ++i) {
        sc[i] = __builtin_expf(sc[i] - m);
        l += sc[i];
      }
      int64_t d = 0;
#ifndef SK_KERNELS_BASELINE
      // One vector of columns at a time over the chunk's rows: each element
      // still adds p[t] * v[t, d] for t in order, as the scalar loop does.
      for (; d + SKV_W <= D; d += SKV_W) {
        skv_f a = skv_load(acc + d);
        for (int64_t i = 0; i < n; ++i) a += skv_splat(sc[i]) * skv_load(vh + (t0 + i) * stride + d);
        skv_store(acc + d, a);
      }
#endif
      for (; d < D; ++d) {
        float a = acc[d];
        for (int64_t i = 0; i < n; ++i) a += sc[i] * vh[(t0 + i) * stride + d];
        acc[d] = a;
      }
    }
    const float inv = 1.0f / l;
    float* oh = out + h * D;
    for (int64_t d = 0; d < D; ++d) oh[d] = acc[d] * inv;
  }
}
