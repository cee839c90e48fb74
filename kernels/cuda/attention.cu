// Decode attention pieces for one query position (bs = 1), layouts as on cpu:
// q [heads, dim], k / v [seq, kv_heads, dim], s / p [heads, seq], o [heads, dim];
// grouped-query attention maps head h to kv head h / (heads / kv_heads).
// The KV-cache pair of a decode loop: kv_append_f32 writes a token's k and v
// rows at row pos of [cap, kv_heads * dim] caches, attn_decode_f32 attends
// over rows 0..pos (pos a runtime scalar on both).
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
#elif defined(SK_KV_APPEND)
// k_cache[pos, :] = k, v_cache[pos, :] = v (rows of `row` floats, caches [cap, row]); block b copies its
// sk_block_range(row) slice, the CTA's threads stride over it.
SK_KERNEL void sk_kv_append_f32(const sk_ctx* ctx, const float* k, const float* v, float* k_cache, float* v_cache,
                                int64_t row, int64_t cap, int64_t pos) {
  // pos outside [0, cap): nothing is written (cuda has no sk_report_error yet; cpu and ascend fail the launch).
  if (pos < 0 || pos >= cap) return;
  int64_t b, e;
  sk_block_range(ctx, row, &b, &e);
  float* kr = k_cache + pos * row;
  float* vr = v_cache + pos * row;
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) {
    kr[i] = k[i];
    vr[i] = v[i];
  }
}
#elif defined(SK_ATTN_DECODE)
// Decode attention over cache rows 0..pos (never a row above pos): block b owns whole heads
// sk_block_range(heads); per head an online softmax over chunks of SK_AD_CHUNK positions: one warp per
// position's score, the chunk max over the CTA, p = exp(s - max) in shared memory, the sum of a chunk
// added in position order by every thread alike, each thread accumulating its columns
// d = threadIdx.x + j * blockDim.x (j < SK_AD_PER_THREAD) in position order. m and l are the same in
// every thread, so every branch on them is uniform.
#define SK_AD_CHUNK 256
#define SK_AD_PER_THREAD 4
SK_KERNEL void sk_attn_decode_f32(const sk_ctx* ctx, const float* q, const float* k_cache, const float* v_cache,
                                  float* out, int64_t heads, int64_t kv_heads, int64_t dim, int64_t cap, int64_t pos,
                                  float scale) {
  // Bad shapes (pos outside [0, cap), kv_heads not dividing heads, dim outside [0, 1024]): nothing is
  // written (cuda has no sk_report_error yet; cpu and ascend fail the launch).
  if (pos < 0 || pos >= cap || kv_heads < 1 || heads % kv_heads != 0 || dim < 0 || dim > 1024 ||
      dim > SK_AD_PER_THREAD * (int64_t)blockDim.x)
    return;
  __shared__ float sc[SK_AD_CHUNK];
  __shared__ float scratch[32];
  const int64_t group = heads / kv_heads, stride = kv_heads * dim;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int64_t hb, he;
  sk_block_range(ctx, heads, &hb, &he);
  for (int64_t h = hb; h < he; ++h) {
    const float* qh = q + h * dim;
    const float* kh = k_cache + (h / group) * dim;
    const float* vh = v_cache + (h / group) * dim;
    float m = -__int_as_float(0x7f800000), l = 0.0f;
    float acc[SK_AD_PER_THREAD];
    for (int j = 0; j < SK_AD_PER_THREAD; ++j) acc[j] = 0.0f;
    for (int64_t t0 = 0; t0 <= pos; t0 += SK_AD_CHUNK) {
      const int64_t n = pos + 1 - t0 < SK_AD_CHUNK ? pos + 1 - t0 : SK_AD_CHUNK;
      for (int64_t i = warp; i < n; i += warps) {
        const float* kt = kh + (t0 + i) * stride;
        float s = 0.0f;
        for (int64_t d = lane; d < dim; d += 32) s += kt[d] * qh[d];
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        if (lane == 0) sc[i] = s * scale;
      }
      __syncthreads();
      float cm = -__int_as_float(0x7f800000);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) cm = fmaxf(cm, sc[i]);
      cm = sk_cta_max(cm, scratch);  // its barriers also order the reads of sc above before the writes below
      if (cm > m) {
        const float r = expf(m - cm);
        l *= r;
        for (int j = 0; j < SK_AD_PER_THREAD; ++j) acc[j] *= r;
        m = cm;
      }
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sc[i] = expf(sc[i] - m);
      __syncthreads();
      for (int64_t i = 0; i < n; ++i) l += sc[i];
      for (int j = 0; j < SK_AD_PER_THREAD; ++j) {
        const int64_t d = threadIdx.x + (int64_t)j * blockDim.x;
        if (d >= dim) break;
        const float* vd = vh + t0 * stride + d;
        float a = acc[j];
        for (int64_t i = 0; i < n; ++i) a += sc[i] * vd[i * stride];
        acc[j] = a;
      }
      __syncthreads();  // sc is rewritten by the next chunk or head
    }
    const float inv = 1.0f / l;
    for (int j = 0; j < SK_AD_PER_THREAD; ++j) {
      const int64_t d = threadIdx.x + (int64_t)j * blockDim.x;
      if (d < dim) out[h * dim + d] = acc[j] * inv;
    }
  }
}
#else
#error "attention.cu: define SK_ATTN_SCORES, SK_ATTN_WEIGHTED_SUM, SK_SOFTMAX, SK_ROPE, SK_KV_APPEND or SK_ATTN_DECODE (the kernel's macros do)"
#endif
