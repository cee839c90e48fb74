// Decode attention pieces for one query position (bs = 1), layouts as on cpu:
// q [heads, dim], k / v [seq, kv_heads, dim], s / p [heads, seq], o [heads, dim];
// grouped-query attention maps head h to kv head h / (heads / kv_heads).
// The KV-cache pair of a decode loop: kv_append_f32 writes a token's k and v
// rows at row pos of [cap, kv_heads * dim] caches, attn_decode_f32 attends
// over rows 0..pos (pos a runtime scalar on both).
#include "superkernel/cuda/kernel.cuh"

// Loads (issue 40 item 3): 16-byte ones where a row's floats are 16-byte aligned (dim % 4 == 0 and the buffer's
// rows aligned), else the same elements one by one; each result is summed in an order that depends only on the
// shape (and softmax's row address modulo 16 and NT = min(blockDim.x, 256), 256 in every run of a builtin), never
// on the load path, the CTA or how many CTAs run the op: fused equals unfused bit for bit.
#if defined(SK_ATTN_SCORES)
// s[h, t] = scale * q_h . k_t,g(h): one warp per (h, t) of the block's slice, four of them at a time (their rows'
// loads issued together); lane l takes the row's vectors l, l+32, ... (each in column order), then its element of
// the tail (dim % 4), then a fixed shuffle tree: one output is one warp's, whichever warp.
SK_KERNEL void sk_attn_scores_f32(const sk_ctx* ctx, const float* q, const float* k, float* s, int64_t heads,
                                  int64_t kv_heads, int64_t seq, int64_t dim, float scale) {
  if (kv_heads < 1 || heads % kv_heads != 0) return;  // the declaration check on cpu reports it
  const int64_t group = heads / kv_heads, nvec = dim / 4;
  const bool vec = dim % 4 == 0 && sk_aligned16(q) && sk_aligned16(k);
  int64_t eb, ee;
  sk_block_range(ctx, heads * seq, &eb, &ee);
  const int64_t warps = blockDim.x >> 5, lane = threadIdx.x & 31u;
  for (int64_t o = eb + (threadIdx.x >> 5); o < ee; o += 4 * warps) {
    const float* qh[4];
    const float* kt[4];
    bool ok[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int64_t ou = o + u * warps, h = ou / seq, t = ou - h * seq;
      ok[u] = ou < ee;
      qh[u] = q + (ok[u] ? h : 0) * dim;
      kt[u] = k + (ok[u] ? t * kv_heads + h / group : 0) * dim;
    }
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t v = lane; v < nvec; v += 32) {
      float qf[4][4], kf[4][4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (ok[u]) {
          sk_ld4_f32(kt[u] + 4 * v, vec, 4, kf[u]);
          sk_ld4_f32(qh[u] + 4 * v, vec, 4, qf[u]);
        }
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (ok[u])
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[u] += kf[u][e] * qf[u][e];
    }
    const int64_t d = 4 * nvec + lane;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (ok[u] && d < dim) acc[u] += kt[u][d] * qh[u][d];
      for (int off = 16; off > 0; off >>= 1) acc[u] += __shfl_xor_sync(0xffffffffu, acc[u], off);
      if (lane == 0 && ok[u]) s[o + u * warps] = acc[u] * scale;
    }
  }
}
#elif defined(SK_ATTN_WEIGHTED_SUM)
// o[h, d] = sum_t p[h, t] * v[t, g(h), d]: each output element sums t = 0..seq-1 in order with one accumulator (as on
// cpu). A thread takes 4 consecutive elements of the block's slice (unit j: eb + 4j ..), loaded as one 16-byte v
// vector per t where the four are in one head and 16-byte aligned in v, else one by one; 4 rows in flight.
SK_KERNEL void sk_attn_weighted_sum_f32(const sk_ctx* ctx, const float* p, const float* v, float* o,
                                        int64_t heads, int64_t kv_heads, int64_t seq, int64_t dim) {
  if (kv_heads < 1 || heads % kv_heads != 0) return;
  const int64_t group = heads / kv_heads, stride = kv_heads * dim;
  int64_t eb, ee;
  sk_block_range(ctx, heads * dim, &eb, &ee);
  for (int64_t e = eb + 4 * (int64_t)threadIdx.x; e < ee; e += 4 * (int64_t)blockDim.x) {
    const int64_t h = e / dim, d = e - h * dim;
    const int64_t n = ee - e < 4 ? ee - e : 4;
    const float* ph = p + h * seq;
    const float* vd = v + (h / group) * dim + d;
    if (n == 4 && d + 4 <= dim && dim % 4 == 0 && sk_aligned16(vd)) {
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      int64_t t = 0;
      for (; t + 4 <= seq; t += 4) {
        float vf[4][4];
#pragma unroll
        for (int u = 0; u < 4; ++u) sk_u4_to_f4(sk_ld_global_v4(vd + (t + u) * stride), vf[u]);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const float pt = ph[t + u];
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[i] += pt * vf[u][i];
        }
      }
      for (; t < seq; ++t) {
        float vf[4];
        sk_u4_to_f4(sk_ld_global_v4(vd + t * stride), vf);
        const float pt = ph[t];
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i] += pt * vf[i];
      }
      if (sk_aligned16(o + e)) {
        sk_st_global_v4(o + e, sk_f4_to_u4(acc));
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) o[e + i] = acc[i];
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t hi = (e + i) / dim, di = e + i - hi * dim;
        const float* pi = p + hi * seq;
        const float* vi = v + (hi / group) * dim + di;
        float acc = 0.0f;
        for (int64_t t = 0; t < seq; ++t) acc += pi[t] * vi[t * stride];
        o[e + i] = acc;
      }
    }
  }
}
#elif defined(SK_SOFTMAX)
// Row softmax: block b owns its rows. The row is split at the first 16-byte boundary of its x row (as norm.cu):
// thread t < NT takes the body's vectors t, t+NT, ... (16-byte loads and stores where x and y are aligned there,
// else scalar), then head and tail element t. The max over the CTA (exact in any order); each thread's exp sum in
// that order, then sk_cta_sum (idle threads add +0.0f); y *= 1 / sum over the thread's own elements.
#define SK_SM_NT 256
template <class F>
static __device__ __forceinline__ void sk_sm_each(const float* xr, float* yr, int64_t cols, int64_t t, int64_t nt,
                                                  F f) {
  const int64_t head = sk_head_f32(xr, cols), nv = (cols - head) / 4;
  const bool vec = sk_aligned16(xr + head) && sk_aligned16(yr + head);
  int64_t v = t;
  for (; v + 3 * nt < nv; v += 4 * nt) {
    float a[4][4];
#pragma unroll
    for (int u = 0; u < 4; ++u) sk_ld4_f32(xr + head + 4 * (v + u * nt), vec, 4, a[u]);
#pragma unroll
    for (int u = 0; u < 4; ++u) f(a[u], 4, yr + head + 4 * (v + u * nt), vec);
  }
  for (; v < nv; v += nt) {
    float a[4];
    sk_ld4_f32(xr + head + 4 * v, vec, 4, a);
    f(a, 4, yr + head + 4 * v, vec);
  }
  if (t < head) {
    float a[4] = {xr[t], 0.0f, 0.0f, 0.0f};
    f(a, 1, yr + t, false);
  }
  const int64_t c = head + 4 * nv + t;
  if (c < cols) {
    float a[4] = {xr[c], 0.0f, 0.0f, 0.0f};
    f(a, 1, yr + c, false);
  }
}

SK_KERNEL void sk_softmax_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  __shared__ float scratch[32];
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  const int64_t nt = blockDim.x < SK_SM_NT ? (int64_t)blockDim.x : SK_SM_NT, t = threadIdx.x;
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -__int_as_float(0x7f800000);
    if (t < nt)
      sk_sm_each(xr, yr, cols, t, nt, [&](float* a, int n, float*, bool) {
        for (int i = 0; i < n; ++i) m = fmaxf(m, a[i]);
      });
    m = sk_cta_max(m, scratch);
    float s = 0.0f;
    if (t < nt)
      sk_sm_each(xr, yr, cols, t, nt, [&](float* a, int n, float* out, bool vec) {
        for (int i = 0; i < n; ++i) {
          a[i] = expf(a[i] - m);
          s += a[i];
        }
        if (n == 4 && vec) {
          sk_st_global_v4(out, sk_f4_to_u4(a));
        } else {
          for (int i = 0; i < n; ++i) out[i] = a[i];
        }
      });
    s = sk_cta_sum(s, scratch);
    const float inv = 1.0f / s;
    // y may alias x. The last pass reads y: the elements this thread wrote when y is at x's offset modulo 16, else
    // others' too, which sk_cta_sum's barriers have ordered before.
    if (t < nt)
      sk_sm_each(yr, yr, cols, t, nt, [&](float* a, int n, float* out, bool vec) {
        for (int i = 0; i < n; ++i) a[i] *= inv;
        if (n == 4 && vec) {
          sk_st_global_v4(out, sk_f4_to_u4(a));
        } else {
          for (int i = 0; i < n; ++i) out[i] = a[i];
        }
      });
  }
}
#elif defined(SK_ROPE)
// Rotary embedding of pairs (2i, 2i+1) at position pos (issue 40 item 3). The angle of pair i depends on i and pos
// only, never on the head, so the CTA computes each pair's (cos, sin) once per call: a shared table of up to
// SK_ROPE_PAIRS pairs, pair i's entry filled by thread i % NT in double exactly as cpu does (pow, cos and sin, one
// sincos on a GPU, then rounded to float), then every head of the block's range rotates with it; a dim above 2 * SK_ROPE_PAIRS is done in
// passes of SK_ROPE_PAIRS pairs. The rotation is elementwise (a * c - b * s, a * s + b * c in f32, as on cpu), so the
// result depends on nothing but x, pos and theta: not the load path, the CTA or the block count. Units of the block's
// [heads x pass pairs]: two pairs (16-byte loads and stores) where dim % 4 == 0 and the block's x and y rows are
// 16-byte aligned, one pair (8-byte) where they are 8-byte aligned, else one pair as two floats; four units per
// thread in flight. y may be x (in place): a unit is read whole before it is written.
#define SK_ROPE_PAIRS 256

// One 8-byte load / store of global memory (two floats); p must be 8-byte aligned. Ordinary coherent accesses, as
// kernel.cuh's 16-byte ones; the simulator traps on a misaligned one, as a GPU faults.
static __device__ __forceinline__ void sk_rope_ld2(const float* p, float* f) {
#ifdef SK_CUDA_SIM
  if (((uintptr_t)p & 7u) != 0) sk_cuda_sim_module_ops->trap(sk_cuda_sim_self, "misaligned 8-byte load (a GPU faults)");
  memcpy(f, p, 8);
#else
  asm("{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %2;\n\tld.global.v2.f32 {%0, %1}, [g];\n\t}"
      : "=f"(f[0]), "=f"(f[1])
      : "l"(p)
      : "memory");
#endif
}
static __device__ __forceinline__ void sk_rope_st2(float* p, const float* f) {
#ifdef SK_CUDA_SIM
  if (((uintptr_t)p & 7u) != 0) sk_cuda_sim_module_ops->trap(sk_cuda_sim_self, "misaligned 8-byte store (a GPU faults)");
  memcpy(p, f, 8);
#else
  asm volatile("{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %0;\n\tst.global.v2.f32 [g], {%1, %2};\n\t}"
               :
               : "l"(p), "f"(f[0]), "f"(f[1])
               : "memory");
#endif
}

// The unit loop of one pass at width W floats per unit (4: 16-byte, 2: 8-byte, 0: one pair as two floats): units
// u = t, t + nt, ... of nh heads x (np pairs / pairs per unit), rows dim floats apart from xb / yb (the pass's first
// pair of the block's first head); c / s the pass's table.
template <int W>
static __device__ __forceinline__ void sk_rope_pass(const float* xb, float* yb, int64_t nh, int64_t np, int64_t dim,
                                                    const float* c, const float* s) {
  constexpr int P = W == 4 ? 2 : 1;  // pairs per unit
  constexpr int N = 2 * P;           // floats per unit
  const int64_t uph = np / P, nt = blockDim.x;
  // Unit u = h * uph + j, stepped by nt without a division in the loop.
  const int64_t dh = nt / uph, dj = nt - dh * uph;
  int64_t h = (int64_t)threadIdx.x / uph, j = (int64_t)threadIdx.x - h * uph;
  while (h < nh) {
    float v[4][N];
    int64_t hu[4], ju[4];
    int n = 0;
    for (; n < 4 && h < nh; ++n) {
      hu[n] = h;
      ju[n] = j;
      h += dh;
      j += dj;
      if (j >= uph) {
        j -= uph;
        ++h;
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (k < n) {
        const float* p = xb + hu[k] * dim + N * ju[k];
        if (W == 4) {
          sk_u4_to_f4(sk_ld_global_v4(p), v[k]);
        } else if (W == 2) {
          sk_rope_ld2(p, v[k]);
        } else {
#pragma unroll
          for (int e = 0; e < N; ++e) v[k][e] = p[e];
        }
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (k < n) {
        float r[N];
#pragma unroll
        for (int q = 0; q < P; ++q) {
          const float cq = c[P * ju[k] + q], sq = s[P * ju[k] + q], a = v[k][2 * q], b = v[k][2 * q + 1];
          r[2 * q] = a * cq - b * sq;
          r[2 * q + 1] = a * sq + b * cq;
        }
        float* p = yb + hu[k] * dim + N * ju[k];
        if (W == 4) {
          sk_st_global_v4(p, sk_f4_to_u4(r));
        } else if (W == 2) {
          sk_rope_st2(p, r);
        } else {
#pragma unroll
          for (int e = 0; e < N; ++e) p[e] = r[e];
        }
      }
    }
  }
}

SK_KERNEL void sk_rope_f32(const sk_ctx* ctx, const float* x, float* y, int64_t heads, int64_t dim, int64_t pos,
                           float theta) {
  // An odd or negative dim: nothing is written (cuda has no sk_report_error yet; cpu fails the launch).
  if (dim % 2 != 0 || dim < 0) return;
  __shared__ float cs_c[SK_ROPE_PAIRS];
  __shared__ float cs_s[SK_ROPE_PAIRS];
  int64_t hb, he;
  sk_block_range(ctx, heads, &hb, &he);
  if (he <= hb || dim == 0) return;  // uniform over the CTA
  const int64_t pairs = dim / 2, nh = he - hb, t = threadIdx.x, nt = blockDim.x;
  const float* xh = x + hb * dim;
  float* yh = y + hb * dim;
  const int W = dim % 4 == 0 && sk_aligned16(xh) && sk_aligned16(yh) ? 4
                : ((uintptr_t)xh & 7u) == 0 && ((uintptr_t)yh & 7u) == 0 ? 2
                                                                          : 0;
  for (int64_t p0 = 0; p0 < pairs; p0 += SK_ROPE_PAIRS) {
    const int64_t np = pairs - p0 < SK_ROPE_PAIRS ? pairs - p0 : SK_ROPE_PAIRS;
    if (p0 > 0) __syncthreads();  // the previous pass's reads of the table are done
    for (int64_t i = t; i < np; i += nt) {
      // Angles in double, as on cpu: pos * freq loses too much in float at long positions.
      const double freq = pow((double)theta, -2.0 * (double)(p0 + i) / (double)dim);
      const double ang = (double)pos * freq;
#ifdef SK_CUDA_SIM
      cs_c[i] = (float)cos(ang);  // the host's libm, as the cpu kernel
      cs_s[i] = (float)sin(ang);
#else
      double sd, cd;
      sincos(ang, &sd, &cd);  // one argument reduction for both (CUDA's sin and cos, same results)
      cs_c[i] = (float)cd;
      cs_s[i] = (float)sd;
#endif
    }
    __syncthreads();
    // np is even on the 16-byte path: dim % 4 == 0 makes pairs even, and SK_ROPE_PAIRS is even.
    if (W == 4)
      sk_rope_pass<4>(xh + 2 * p0, yh + 2 * p0, nh, np, dim, cs_c, cs_s);
    else if (W == 2)
      sk_rope_pass<2>(xh + 2 * p0, yh + 2 * p0, nh, np, dim, cs_c, cs_s);
    else
      sk_rope_pass<0>(xh + 2 * p0, yh + 2 * p0, nh, np, dim, cs_c, cs_s);
  }
}
#elif defined(SK_KV_APPEND)
// k_cache[pos, :] = k, v_cache[pos, :] = v (rows of `row` floats, caches [cap, row]); block b copies its
// sk_block_range(row) slice with the CTA (kernel.cuh's sk_cta_copy_f32: 16-byte loads and stores where source and
// cache row agree modulo 16, else one float at a time).
SK_KERNEL void sk_kv_append_f32(const sk_ctx* ctx, const float* k, const float* v, float* k_cache, float* v_cache,
                                int64_t row, int64_t cap, int64_t pos) {
  // pos outside [0, cap): nothing is written (cuda has no sk_report_error yet; cpu and ascend fail the launch).
  if (pos < 0 || pos >= cap) return;
  int64_t b, e;
  sk_block_range(ctx, row, &b, &e);
  if (e <= b) return;
  sk_cta_copy_f32(k + b, k_cache + pos * row + b, e - b);
  sk_cta_copy_f32(v + b, v_cache + pos * row + b, e - b);
}
#elif defined(SK_ATTN_DECODE)
// Decode attention over cache rows 0..pos (never a row above pos): block b owns whole heads sk_block_range(heads);
// per head an online softmax over chunks of SK_AD_CHUNK positions (issue 40 item 3: 16-byte loads, several rows in
// flight). NT = min(blockDim.x, 256) threads take part, the rest only meet the barriers; NT is 256 in every run of
// the builtin (its declared threads; a fused step runs at least that), and nothing below depends on more than NT.
//  - scores: logical warp w < NT/32 takes the chunk's positions w, w + NT/32, ..., four at a time (their k rows'
//    loads issued together); lane l the row's 16-byte vectors l, l+32, ... (each in column order), then its
//    element of the tail (dim % 4), then a fixed shuffle tree; q . k of one position is one warp's, so no score
//    depends on which warp computed it;
//  - the chunk max over the CTA (exact in any order); p = exp(s - max) in shared memory;
//  - values: thread t < G*S (G = ceil(dim/4) column groups of 4, S = NT / G position slices) owns group t % G and
//    slice t / G: it adds p[i] * v[i, group] for the chunk's positions i = slice, slice + S, ... in order, four
//    rows' loads in flight, and the slice's sum of p in the same order; a raised max rescales both;
//  - per head: the S slices' partial outputs and sums added in slice order, out = acc * (1 / l) as on cpu.
// Loads are 16-byte ones where dim % 4 == 0 and the head's q, k and v rows are 16-byte aligned (then every row
// is), else the same elements one by one: the summation order is a function of dim, pos and NT only, so fused
// equals unfused bit for bit. m is the same in every thread, so every branch on it is uniform.
// Why a head is one CTA's (issue 40 item 3): splitting its positions over CTAs (flash-decoding: per chunk a partial
// max, sum and accumulator, combined in chunk order) needs global memory for the partials and a way to combine
// after the last chunk; a builtin has neither (its buffers are cpu's q, caches and out; no workspace parameter
// kind; kernel_sync is cpu's declaration, false). Either a workspace kind or a partial + combine pair of builtins.
#define SK_AD_CHUNK 256
#define SK_AD_NT 256

SK_KERNEL void sk_attn_decode_f32(const sk_ctx* ctx, const float* q, const float* k_cache, const float* v_cache,
                                  float* out, int64_t heads, int64_t kv_heads, int64_t dim, int64_t cap, int64_t pos,
                                  float scale) {
  const int64_t nt = blockDim.x < SK_AD_NT ? (int64_t)blockDim.x : SK_AD_NT;
  // Bad shapes (pos outside [0, cap), kv_heads not dividing heads, dim outside [0, 1024]): nothing is
  // written (cuda has no sk_report_error yet; cpu and ascend fail the launch).
  if (pos < 0 || pos >= cap || kv_heads < 1 || heads % kv_heads != 0 || dim < 0 || dim > 1024 || dim > 4 * nt)
    return;
  __shared__ float sc[SK_AD_CHUNK];
  __shared__ float part[4 * SK_AD_NT];  // S slices x 4G columns, S * G <= NT
  __shared__ float lpart[SK_AD_NT];
  __shared__ float scratch[32];
  const int64_t group = heads / kv_heads, stride = kv_heads * dim;
  const int64_t t = threadIdx.x, lane = t & 31, warp = t >> 5, nw = nt >> 5;
  const int64_t nvec = dim / 4, G = (dim + 3) / 4, S = G > 0 ? nt / G : 0, g = G > 0 ? t % G : 0,
                sl = G > 0 ? t / G : 0;
  const bool vthread = t < G * S;
  int64_t hb, he;
  sk_block_range(ctx, heads, &hb, &he);
  for (int64_t h = hb; h < he; ++h) {
    const float* qh = q + h * dim;
    const float* kh = k_cache + (h / group) * dim;
    const float* vh = v_cache + (h / group) * dim;
    const bool kvec = dim % 4 == 0 && sk_aligned16(qh) && sk_aligned16(kh), vvec = dim % 4 == 0 && sk_aligned16(vh);
    float m = -__int_as_float(0x7f800000), l = 0.0f;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t t0 = 0; t0 <= pos; t0 += SK_AD_CHUNK) {
      const int64_t n = pos + 1 - t0 < SK_AD_CHUNK ? pos + 1 - t0 : SK_AD_CHUNK;
      if (warp < nw) {
        for (int64_t i = warp; i < n; i += 4 * nw) {
          const float* kt = kh + (t0 + i) * stride;
          float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          for (int64_t v = lane; v < nvec; v += 32) {
            float qf[4], kf[4][4];
#pragma unroll
            for (int u = 0; u < 4; ++u)
              if (i + u * nw < n) sk_ld4_f32(kt + u * nw * stride + 4 * v, kvec, 4, kf[u]);
            sk_ld4_f32(qh + 4 * v, kvec, 4, qf);
#pragma unroll
            for (int u = 0; u < 4; ++u)
              if (i + u * nw < n)
#pragma unroll
                for (int e = 0; e < 4; ++e) s[u] += kf[u][e] * qf[e];
          }
          const int64_t d = 4 * nvec + lane;
          if (d < dim) {
#pragma unroll
            for (int u = 0; u < 4; ++u)
              if (i + u * nw < n) s[u] += kt[u * nw * stride + d] * qh[d];
          }
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            for (int off = 16; off > 0; off >>= 1) s[u] += __shfl_xor_sync(0xffffffffu, s[u], off);
            if (lane == 0 && i + u * nw < n) sc[i + u * nw] = s[u] * scale;
          }
        }
      }
      __syncthreads();
      float cm = -__int_as_float(0x7f800000);
      for (int64_t i = t; i < n && t < nt; i += nt) cm = fmaxf(cm, sc[i]);
      cm = sk_cta_max(cm, scratch);  // its barriers also order the reads of sc above before the writes below
      if (cm > m) {
        const float r = expf(m - cm);
        l *= r;
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[e] *= r;
        m = cm;
      }
      for (int64_t i = t; i < n && t < nt; i += nt) sc[i] = expf(sc[i] - m);
      __syncthreads();
      if (vthread) {
        const float* vg = vh + t0 * stride + 4 * g;
        const int64_t left = dim - 4 * g;
        int64_t i = sl;
        for (; i + 3 * S < n; i += 4 * S) {
          float vf[4][4];
#pragma unroll
          for (int u = 0; u < 4; ++u) sk_ld4_f32(vg + (i + u * S) * stride, vvec, left, vf[u]);
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            const float p = sc[i + u * S];
            l += p;
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[e] += p * vf[u][e];
          }
        }
        for (; i < n; i += S) {
          float vf[4];
          sk_ld4_f32(vg + i * stride, vvec, left, vf);
          const float p = sc[i];
          l += p;
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[e] += p * vf[e];
        }
      }
      __syncthreads();  // sc is rewritten by the next chunk
    }
    if (vthread) {
#pragma unroll
      for (int e = 0; e < 4; ++e) part[sl * 4 * G + 4 * g + e] = acc[e];
      if (g == 0) lpart[sl] = l;
    }
    __syncthreads();
    if (t < nt) {
      float lsum = 0.0f;
      for (int64_t s = 0; s < S; ++s) lsum += lpart[s];
      const float inv = 1.0f / lsum;
      for (int64_t d = t; d < dim; d += nt) {
        float o = 0.0f;
        for (int64_t s = 0; s < S; ++s) o += part[s * 4 * G + d];
        out[h * dim + d] = o * inv;
      }
    }
    __syncthreads();  // part and lpart are rewritten by the next head
  }
}
#else
#error "attention.cu: define SK_ATTN_SCORES, SK_ATTN_WEIGHTED_SUM, SK_SOFTMAX, SK_ROPE, SK_KV_APPEND or SK_ATTN_DECODE (the kernel's macros do)"
#endif
