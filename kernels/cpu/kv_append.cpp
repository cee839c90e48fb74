// KV-cache append for one token, in place: k_cache[pos, :] = k and
// v_cache[pos, :] = v, where k and v are one row of `row` floats (e.g.
// kv_heads * dim) and the caches are [cap, row] floats.
// Split: sk_block_range(row) over the row's elements -> k, v "block";
// k_cache, v_cache "all" (block b writes its slice of row pos, which is not
// the b-th slice of the cache).
// pos is a run-time scalar in a decode loop ("runtime": true): pos outside
// [0, cap) is reported (sk_report_error, block 0) and no block writes.
// Static shape: -DSK_ROW, -DSK_CAP, -DSK_POS.
#include "sk_range_error.h"

#ifdef SK_ROW
#define SKV_ROW ((int64_t)(SK_ROW))
#else
#define SKV_ROW row
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

SK_KERNEL void sk_kv_append_f32(const sk_ctx* ctx, const float* k, const float* v, float* k_cache, float* v_cache,
                                int64_t row, int64_t cap, int64_t pos) {
  (void)row;
  (void)cap;
  (void)pos;
  const int64_t R = SKV_ROW, C = SKV_CAP, P = SKV_POS;
  if (P < 0 || P >= C) {
    if (ctx->block_idx == 0) sk_report_range_error(ctx, "kv_append_f32", "pos", P, 0, C, ")");
    return;
  }
  int64_t b, e;
  sk_block_range(ctx, R, &b, &e);
  float* kr = k_cache + P * R;
  float* vr = v_cache + P * R;
  for (int64_t i = b; i < e; ++i) kr[i] = k[i];
  for (int64_t i = b; i < e; ++i) vr[i] = v[i];
}
