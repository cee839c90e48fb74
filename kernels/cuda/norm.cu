// rms_norm and add_rms_norm (issue 40 item 3: 16-byte loads): block b owns its sk_block_range rows; the CTA
// reduces one row at a time.
//
// Loads: a row is split at the first 16-byte boundary of its x row: the head
// (fewer than 4 floats before it) and the tail (after the last whole vector) are scalar, the body 16-byte loads
// and stores (sk_ld_global_v4 / sk_st_global_v4) where every buffer the pass touches is 16-byte aligned at the
// body's start, else the same elements with scalar loads. Thread t of the first NT = min(blockDim.x, 256)
// threads takes body vectors t, t+NT, ..., four per step with their loads issued first, then head element t and
// tail element t; threads from NT on take nothing. Its sum of squares is in that order, then sk_cta_sum (a fixed
// shuffle tree; the idle threads add +0.0f, which changes no sum). So the order is a function of cols, the x
// row's address modulo 16 and NT, which is 256 in every run of a builtin (the declared threads; a fused step
// runs at least that): fused equals unfused bit for bit, and the load path never changes a result.
#include "superkernel/cuda/kernel.cuh"

#define SK_NORM_NT 256

// y[c] = x[c] * inv * w[c] over the row's elements of this thread (the same elements as the reduction).
static __device__ __forceinline__ void sk_norm_scale(const float* xr, const float* w, float* yr, int64_t cols,
                                                     float inv, int64_t t, int64_t nt) {
  const int64_t head = sk_head_f32(xr, cols), nv = (cols - head) / 4;
  const bool vec = sk_aligned16(xr + head) && sk_aligned16(w + head) && sk_aligned16(yr + head);
  const float* xb = xr + head;
  const float* wb = w + head;
  float* yb = yr + head;
  int64_t v = t;
  for (; v + 3 * nt < nv; v += 4 * nt) {
    float a[4][4], b[4][4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      sk_ld4_f32(xb + 4 * (v + u * nt), vec, 4, a[u]);
      sk_ld4_f32(wb + 4 * (v + u * nt), vec, 4, b[u]);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a[u][i] = a[u][i] * inv * b[u][i];
      sk_st4_f32(yb + 4 * (v + u * nt), vec, a[u]);
    }
  }
  for (; v < nv; v += nt) {
    float a[4], b[4];
    sk_ld4_f32(xb + 4 * v, vec, 4, a);
    sk_ld4_f32(wb + 4 * v, vec, 4, b);
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = a[i] * inv * b[i];
    sk_st4_f32(yb + 4 * v, vec, a);
  }
  if (t < head) yr[t] = xr[t] * inv * w[t];
  const int64_t c = head + 4 * nv + t;
  if (c < cols) yr[c] = xr[c] * inv * w[c];
}

#if defined(SK_NORM_RMS)
SK_KERNEL void sk_rms_norm_f32(const sk_ctx* ctx, const float* x, const float* w, float* y, int64_t rows,
                               int64_t cols, float eps) {
  __shared__ float scratch[32];
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  const int64_t nt = blockDim.x < SK_NORM_NT ? (int64_t)blockDim.x : SK_NORM_NT, t = threadIdx.x;
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const int64_t head = sk_head_f32(xr, cols), nv = (cols - head) / 4;
    const float* xb = xr + head;
    const bool vec = sk_aligned16(xb);
    float ss = 0.0f;
    if (t < nt) {
      int64_t v = t;
      for (; v + 3 * nt < nv; v += 4 * nt) {
        float a[4][4];
#pragma unroll
        for (int u = 0; u < 4; ++u) sk_ld4_f32(xb + 4 * (v + u * nt), vec, 4, a[u]);
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int i = 0; i < 4; ++i) ss += a[u][i] * a[u][i];
      }
      for (; v < nv; v += nt) {
        float a[4];
        sk_ld4_f32(xb + 4 * v, vec, 4, a);
#pragma unroll
        for (int i = 0; i < 4; ++i) ss += a[i] * a[i];
      }
      if (t < head) ss += xr[t] * xr[t];
      const int64_t c = head + 4 * nv + t;
      if (c < cols) ss += xr[c] * xr[c];
    }
    ss = sk_cta_sum(ss, scratch);
    const float inv = 1.0f / sqrtf(ss / (float)cols + eps);
    if (t < nt) sk_norm_scale(xr, w, yr, cols, inv, t, nt);
  }
}
#elif defined(SK_NORM_ADD_RMS)
// sum may alias x or residual: each thread reads back only the sum elements it wrote itself (the same elements
// in both passes), and reads x and residual of an element before writing its sum.
SK_KERNEL void sk_add_rms_norm_f32(const sk_ctx* ctx, const float* x, const float* residual, const float* w,
                                   float* sum, float* y, int64_t rows, int64_t cols, float eps) {
  __shared__ float scratch[32];
  int64_t rb, re;
  sk_block_range(ctx, rows, &rb, &re);
  const int64_t nt = blockDim.x < SK_NORM_NT ? (int64_t)blockDim.x : SK_NORM_NT, t = threadIdx.x;
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * cols;
    const float* rr = residual + r * cols;
    float* sr = sum + r * cols;
    const int64_t head = sk_head_f32(xr, cols), nv = (cols - head) / 4;
    const bool vec = sk_aligned16(xr + head) && sk_aligned16(rr + head) && sk_aligned16(sr + head);
    float ss = 0.0f;
    if (t < nt) {
      int64_t v = t;
      for (; v + 3 * nt < nv; v += 4 * nt) {
        float a[4][4], b[4][4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          sk_ld4_f32(xr + head + 4 * (v + u * nt), vec, 4, a[u]);
          sk_ld4_f32(rr + head + 4 * (v + u * nt), vec, 4, b[u]);
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            a[u][i] += b[u][i];
            ss += a[u][i] * a[u][i];
          }
          sk_st4_f32(sr + head + 4 * (v + u * nt), vec, a[u]);
        }
      }
      for (; v < nv; v += nt) {
        float a[4], b[4];
        sk_ld4_f32(xr + head + 4 * v, vec, 4, a);
        sk_ld4_f32(rr + head + 4 * v, vec, 4, b);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          a[i] += b[i];
          ss += a[i] * a[i];
        }
        sk_st4_f32(sr + head + 4 * v, vec, a);
      }
      if (t < head) {
        const float s = xr[t] + rr[t];
        sr[t] = s;
        ss += s * s;
      }
      const int64_t c = head + 4 * nv + t;
      if (c < cols) {
        const float s = xr[c] + rr[c];
        sr[c] = s;
        ss += s * s;
      }
    }
    ss = sk_cta_sum(ss, scratch);
    const float inv = 1.0f / sqrtf(ss / (float)cols + eps);
    // The same split as above (taken from the x row), so each thread reads back its own sum elements.
    if (t < nt) {
      const int64_t hs = sk_head_f32(sr, cols);
      if (hs == head) {
        sk_norm_scale(sr, w, y + r * cols, cols, inv, t, nt);
      } else {  // sum at another offset modulo 16 than x: scalar, over the elements this thread wrote
        float* yr = y + r * cols;
        for (int64_t v = t; v < nv; v += nt)
          for (int i = 0; i < 4; ++i) {
            const int64_t c = head + 4 * v + i;
            yr[c] = sr[c] * inv * w[c];
          }
        if (t < head) yr[t] = sr[t] * inv * w[t];
        const int64_t c = head + 4 * nv + t;
        if (c < cols) yr[c] = sr[c] * inv * w[c];
      }
    }
  }
}
#else
#error "norm.cu: define SK_NORM_RMS or SK_NORM_ADD_RMS (the kernel's macros do)"
#endif
