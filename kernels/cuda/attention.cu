// Decode attention pieces for one query position (bs = 1), layouts as on cpu:
// q [heads, dim], k / v [seq, kv_heads, dim], s / p [heads, seq], o [heads, dim];
// grouped-query attention maps head h to kv head h / (heads / kv_heads).
#include "superkernel/cuda/kernel.cuh"

#if defined(SK_ATTN_SCORES)
// s[h, t] = scale * q_h . k_t,g(h): one warp per (h, t) of the block's slice.
SK_KERNEL void sk_attn_scores_f32(const sk_ctx* ctx, const float* q, const float* k, float* s, int64_t heads,
                                  int64_t kv_heads, int64_t seq, int64_t dim, float scale) {
  if (kv_heads < 1 || heads % kv_heads != 0) return;  // the declaration check on cpu reports it
  const int64_t group = heads / kv_heads;
  int64_t eb, ee;
  sk_block_range(ctx, heads * seq, &eb, &ee);
  const int64_t warps = blockDim.x >> 5;
  const unsigned lane = threadIdx.x & 31u;
  for (int64_t o = eb + (threadIdx.x >> 5); o < ee; o += warps) {
    const int64_t h = o / seq, t = o - h * seq;
    const float* qh = q + h * dim;
    const float* kt = k + (t * kv_heads + h / group) * dim;
    float acc = 0.0f;
    for (int64_t d = lane; d < dim; d += 32) acc += kt[d] * qh[d];
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) s[o] = acc * scale;
  }
}
#elif defined(SK_ATTN_WEIGHTED_SUM)
// o[h, d] = sum_t p[h, t] * v[t, g(h), d]: one thread per output element.
SK_KERNEL void sk_attn_weighted_sum_f32(const sk_ctx* ctx, const float* p, const float* v, float* o,
                                        int64_t heads, int64_t kv_heads, int64_t seq, int64_t dim) {
  if (kv_heads < 1 || heads % kv_heads != 0) return;
  const int64_t group = heads / kv_heads;
  int64_t eb, ee;
  sk_block_range(ctx, heads * dim, &eb, &ee);
  for (int64_t e = eb + threadIdx.x; e < ee; e += blockDim.x) {
    const int64_t h = e / dim, d = e - h * dim;
    const float* ph = p + h * seq;
    const float* vd = v + (h / group) * dim + d;
    float acc = 0.0f;
    for (int64_t t = 0; t < seq; ++t) acc += ph[t] * vd[t * kv_heads * dim];
    o[e] = acc;
  }
}
#elif defined(SK_SOFTMAX)
// Row softmax: block b owns its rows; max and sum across the CTA.
SK_KERNEL void sk_softmax_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  __shared__ float scratch[32];
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -__int_as_float(0x7f800000);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = sk_cta_max(m, scratch);
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = expf(xr[c] - m);
      yr[c] = v;
      s += v;
    }
    s = sk_cta_sum(s, scratch);
    const float inv = 1.0f / s;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] *= inv;
  }
}
#elif defined(SK_ROPE)
// Rotary embedding of pairs (2i, 2i+1) at position pos; angles in double as on cpu.
SK_KERNEL void sk_rope_f32(const sk_ctx* ctx, const float* x, float* y, int64_t heads, int64_t dim, int64_t pos,
                           float theta) {
  if (dim % 2 != 0) return;
  int64_t hb, he;
  sk_block_range(ctx, heads, &hb, &he);
  const int64_t pairs = dim / 2;
  for (int64_t e = hb * pairs + threadIdx.x; e < he * pairs; e += blockDim.x) {
    const int64_t h = e / pairs, i = e - h * pairs;
    const double freq = pow((double)theta, -2.0 * (double)i / (double)dim);
    const double ang = (double)pos * freq;
    const float c = (float)cos(ang), s = (float)sin(ang);
    const float a = x[h * dim + 2 * i], b = x[h * dim + 2 * i + 1];
    y[h * dim + 2 * i] = a * c - b * s;
    y[h * dim + 2 * i + 1] = a * s + b * c;
  }
}
#else
#error "attention.cu: define SK_ATTN_SCORES, SK_ATTN_WEIGHTED_SUM, SK_SOFTMAX or SK_ROPE (the kernel's macros do)"
#endif
