// Decode attention output: o[h, d] = sum_t p[h, t] * v[t, h / (heads / kv_heads), d]
// p [heads, seq] (softmaxed scores), v [seq, kv_heads, dim], o [heads, dim].
// Split: sk_block_range(heads * dim) over o's elements -> o "block";
// p and v "all". kv_heads not dividing heads is reported (sk_report_error).
// Static shape: -DSK_HEADS, -DSK_KV_HEADS, -DSK_SEQ, -DSK_DIM.
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

// Heads per register tile, and vectors of columns per head (accumulators:
// SKV_WS_HEADS * SKV_WS_COLS registers; AVX-512 has 32, AVX2 / SSE 16).
#define SKV_WS_HEADS 4
#if SKV_W == 16
#define SKV_WS_COLS 4
#else
#define SKV_WS_COLS 2
#endif
// v rows prefetched ahead: v's rows are kv_heads * dim floats apart and a tile
// reads only its own part of each, a pattern the hardware prefetcher follows
// less far (measured +12% on one worker at the benchmark's shape).
#define SKV_WS_PF_ROWS 16

// o[n, d] = sum_t p[n, t] * v[t, d] for heads n < NH (p rows T apart, o rows
// od apart) and d in [d0, d1); v rows are vs floats apart.
template <int NH>
static inline void sk_wsum_tile(const float* p, int64_t T, const float* v, int64_t vs, float* o, int64_t od,
                                int64_t d0, int64_t d1) {
  int64_t d = d0;
  for (; d + SKV_WS_COLS * SKV_W <= d1; d += SKV_WS_COLS * SKV_W) {
    skv_f acc[NH][SKV_WS_COLS] = {};
    for (int64_t t = 0; t < T; ++t) {
      skv_f vv[SKV_WS_COLS];
      const int64_t tp = t + SKV_WS_PF_ROWS < T ? t + SKV_WS_PF_ROWS : t;
      for (int c = 0; c < SKV_WS_COLS * SKV_W; c += 16) __builtin_prefetch(v + tp * vs + d + c);
      for (int c = 0; c < SKV_WS_COLS; ++c) vv[c] = skv_load(v + t * vs + d + c * SKV_W);
      for (int n = 0; n < NH; ++n) {
        const skv_f pt = skv_splat(p[n * T + t]);
        for (int c = 0; c < SKV_WS_COLS; ++c) acc[n][c] += pt * vv[c];
      }
    }
    for (int n = 0; n < NH; ++n)
      for (int c = 0; c < SKV_WS_COLS; ++c) skv_store(o + n * od + d + c * SKV_W, acc[n][c]);
  }
  for (; d + SKV_W <= d1; d += SKV_W) {
    skv_f acc[NH] = {};
    for (int64_t t = 0; t < T; ++t) {
      const skv_f vv = skv_load(v + t * vs + d);
      for (int n = 0; n < NH; ++n) acc[n] += skv_splat(p[n * T + t]) * vv;
    }
    for (int n = 0; n < NH; ++n) skv_store(o + n * od + d, acc[n]);
  }
  for (; d < d1; ++d)
    for (int n = 0; n < NH; ++n) {
      float acc = 0.0f;
      for (int64_t t = 0; t < T; ++t) acc += p[n * T + t] * v[t * vs + d];
      o[n * od + d] = acc;
    }
}

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
#ifndef SK_KERNELS_BASELINE
  // The slice covers heads hb..he, each over a contiguous d range (the first
  // and last heads maybe in part). Up to SKV_WS_HEADS consecutive heads of one
  // kv group with the same d range run together: per t, one load of a piece of
  // v's row feeds every head of the tile (accumulators stay in registers), so
  // v comes from memory once per group instead of once per head and per
  // 2 * SKV_W columns. Each output element still sums t = 0..T-1 in order
  // with one accumulator (acc += p[h, t] * v[t, d]; the scalar tail alike),
  // whichever tile computes it: the result does not depend on the split.
  if (eb >= ee) return;
  const int64_t hb = eb / D, he = (ee - 1) / D;
  for (int64_t h = hb; h <= he;) {
    const int64_t d0 = h == hb ? eb - hb * D : 0, d1 = h == he ? ee - he * D : D;
    int64_t nh = 1;
    while (nh < SKV_WS_HEADS && h + nh <= he && (h + nh) / group == h / group &&
           (h + nh == he ? ee - he * D : D) == d1 && d0 == 0)
      ++nh;
    const float* ph = p + h * T;
    const float* vh = v + (h / group) * D;
    float* oh = o + h * D;
    switch (nh) {
      case 4: sk_wsum_tile<4>(ph, T, vh, KVH * D, oh, D, d0, d1); break;
      case 3: sk_wsum_tile<3>(ph, T, vh, KVH * D, oh, D, d0, d1); break;
      case 2: sk_wsum_tile<2>(ph, T, vh, KVH * D, oh, D, d0, d1); break;
      default: sk_wsum_tile<1>(ph, T, vh, KVH * D, oh, D, d0, d1); break;
    }
    h += nh;
  }
#else
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t h = e / D, d = e - h * D;
    const float* ph = p + h * T;
    const float* vd = v + (h / group) * D + d;
    float acc = 0.0f;
    for (int64_t t = 0; t < T; ++t) acc += ph[t] * vd[t * KVH * D];
    o[e] = acc;
  }
#endif
}
