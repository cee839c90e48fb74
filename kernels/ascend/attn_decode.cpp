// attn_decode_f32 (decode attention for one query token over cache rows 0..pos):
//   s[h, t] = scale * q[h, :] . k_cache[t, g(h), :] (t <= pos), p = softmax_t(s) (max subtracted),
//   out[h, :] = sum_t p[h, t] * v_cache[t, g(h), :],  g(h) = h / (heads / kv_heads).
// q, out [heads, dim]; caches [cap, kv_heads, dim]; rows above pos are never read.
// Split: whole heads SkBlockRange(heads): all buffers "all". The cpu builtin's baseline order operation
// for operation (online softmax over chunks of SK_AD_CHUNK positions), so the bits agree; the
// accumulator is the block's own out row (no stack array). Fails the launch, writing nothing, for
// pos outside [0, cap), kv_heads not dividing heads, dim outside [0, 1024].
// Compile-time: SK_HEADS, SK_KV_HEADS, SK_DIM, SK_CAP, SK_POS, SK_SCALE (pos is "runtime": SK_POS may
// expand to a value read at run time, so it is used only in ordinary expressions).
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_KV_HEADS) || !defined(SK_DIM) || !defined(SK_CAP) || !defined(SK_POS) || \
    !defined(SK_SCALE)
#error "attn_decode_f32 (ascend): heads, kv_heads, dim, cap, pos, scale are compile-time (-DSK_<NAME>)"
#endif

#define SK_AD_MAX_DIM 1024
#define SK_AD_CHUNK 128

extern "C" __global__ __aicore__ void sk_attn_decode_f32(GM_ADDR q, GM_ADDR k_cache, GM_ADDR v_cache, GM_ADDR out) {
  __gm__ const float* qs = SK_ASCEND_GM(const float, q);
  __gm__ const float* kc = SK_ASCEND_GM(const float, k_cache);
  __gm__ const float* vc = SK_ASCEND_GM(const float, v_cache);
  __gm__ float* os = SK_ASCEND_GM(float, out);
  const int64_t H = SK_HEADS, KVH = SK_KV_HEADS, D = SK_DIM, C = SK_CAP;
  const int64_t P = SK_POS;
  const float scale = (float)(SK_SCALE);
  if (P < 0 || P >= C) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("attn_decode_f32: pos out of range [0, cap)");
    return;
  }
  if (KVH < 1 || H % KVH != 0) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("attn_decode_f32: kv_heads must divide heads");
    return;
  }
  if (D < 0 || D > SK_AD_MAX_DIM) {
    if (AscendC::GetBlockIdx() == 0) SkReportError("attn_decode_f32: dim out of range [0, 1024]");
    return;
  }
  const int64_t group = H / KVH, stride = KVH * D;
  float sc[SK_AD_CHUNK];
  int64_t hb, he;
  SkBlockRange(H, &hb, &he);
  for (int64_t h = hb; h < he; ++h) {
    __gm__ const float* qh = qs + h * D;
    __gm__ const float* kh = kc + (h / group) * D;
    __gm__ const float* vh = vc + (h / group) * D;
    __gm__ float* acc = os + h * D;
    float m = -__builtin_inff(), l = 0.0f;
    for (int64_t d = 0; d < D; ++d) acc[d] = 0.0f;
    for (int64_t t0 = 0; t0 <= P; t0 += SK_AD_CHUNK) {
      const int64_t n = P + 1 - t0 < SK_AD_CHUNK ? P + 1 - t0 : SK_AD_CHUNK;
      float cm = -__builtin_inff();
      for (int64_t i = 0; i < n; ++i) {
        __gm__ const float* kt = kh + (t0 + i) * stride;
        float s = 0.0f;
        for (int64_t d = 0; d < D; ++d) s += qh[d] * kt[d];
        sc[i] = s * scale;
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
      for (int64_t d = 0; d < D; ++d) {
        float a = acc[d];
        for (int64_t i = 0; i < n; ++i) a += sc[i] * vh[(t0 + i) * stride + d];
        acc[d] = a;
      }
    }
    const float inv = 1.0f / l;
    for (int64_t d = 0; d < D; ++d) acc[d] *= inv;
  }
}
