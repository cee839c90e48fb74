// kv_append_f32: KV-cache append for one token, in place: k_cache[pos, :] = k, v_cache[pos, :] = v;
// k, v [row], caches [cap, row]. Split: SkBlockRange(row): k, v "block"; caches "all".
// pos outside [0, cap) fails the launch and nothing is written.
// Compile-time: SK_ROW, SK_CAP, SK_POS (pos is "runtime": SK_POS may expand to a value read at run
// time, so it is used only in ordinary expressions).
#include "sk_ascend_kernel.h"
#if !defined(SK_ROW) || !defined(SK_CAP) || !defined(SK_POS)
#error "kv_append_f32 (ascend): row, cap, pos are compile-time (-DSK_<NAME>)"
#endif

extern "C" __global__ __aicore__ void sk_kv_append_f32(GM_ADDR k, GM_ADDR v, GM_ADDR k_cache, GM_ADDR v_cache) {
  __gm__ const float* ks = SK_ASCEND_GM(const float, k);
  __gm__ const float* vs = SK_ASCEND_GM(const float, v);
  __gm__ float* kc = SK_ASCEND_GM(float, k_cache);
  __gm__ float* vc = SK_ASCEND_GM(float, v_cache);
  const int64_t R = SK_ROW, C = SK_CAP;
  const int64_t P = SK_POS;
  if (P < 0 || P >= C) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("kv_append_f32: pos out of range [0, cap)");
    return;
  }
  int64_t b, e;
  SkBlockRange(R, &b, &e);
  for (int64_t i = b; i < e; ++i) kc[P * R + i] = ks[i];
  for (int64_t i = b; i < e; ++i) vc[P * R + i] = vs[i];
}
