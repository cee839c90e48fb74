// Elementwise builtins (add, mul, scale, copy, swiglu, increment_i64): block b owns its sk_block_range
// slice of n elements; the CTA's threads stride over it (blockDim.x may exceed
// the declared threads in a fused SuperKernel, kernel.cuh).
#include "superkernel/cuda/kernel.cuh"

// The f32 kernels (issue 40 item 3: 16-byte loads): the slice is split at the first 16-byte boundary of the
// output's slice; the head (fewer than 4 elements before it) and the tail are scalar, the body 16-byte loads and
// stores (four vectors per thread per step, their loads issued first) where every input is 16-byte aligned there
// too, else scalar loads. Each element is computed alone, so the load path never changes a result.
#if !defined(SK_ELT_INCREMENT_I64)

// z[i] = f(x[i], y[i]) over [b, e) (Two: y is read; else f(x[i], 0)).
template <bool Two, class F>
static __device__ __forceinline__ void sk_elt_map(const float* x, const float* y, float* z, int64_t b, int64_t e,
                                                  F f) {
  const int64_t n = e - b, t = threadIdx.x, nt = blockDim.x;
  if (n <= 0) return;
  x += b;
  z += b;
  if (Two) y += b;
  const int64_t head = sk_head_f32(z, n), nv = (n - head) / 4;
  const bool vec = sk_aligned16(x + head) && (!Two || sk_aligned16(y + head));
  if (vec) {
    const float* xb = x + head;
    const float* yb = Two ? y + head : xb;
    float* zb = z + head;
    int64_t v = t;
    for (; v + 3 * nt < nv; v += 4 * nt) {
      float a[4][4], c[4][4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        sk_u4_to_f4(sk_ld_global_v4(xb + 4 * (v + u * nt)), a[u]);
        if (Two) sk_u4_to_f4(sk_ld_global_v4(yb + 4 * (v + u * nt)), c[u]);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
#pragma unroll
        for (int i = 0; i < 4; ++i) a[u][i] = f(a[u][i], Two ? c[u][i] : 0.0f);
        sk_st_global_v4(zb + 4 * (v + u * nt), sk_f4_to_u4(a[u]));
      }
    }
    for (; v < nv; v += nt) {
      float a[4], c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      sk_u4_to_f4(sk_ld_global_v4(xb + 4 * v), a);
      if (Two) sk_u4_to_f4(sk_ld_global_v4(yb + 4 * v), c);
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = f(a[i], c[i]);
      sk_st_global_v4(zb + 4 * v, sk_f4_to_u4(a));
    }
    if (t < head) z[t] = f(x[t], Two ? y[t] : 0.0f);
    for (int64_t i = head + 4 * nv + t; i < n; i += nt) z[i] = f(x[i], Two ? y[i] : 0.0f);
  } else {
    for (int64_t i = t; i < n; i += nt) z[i] = f(x[i], Two ? y[i] : 0.0f);
  }
}

#endif

#if defined(SK_ELT_ADD)
SK_KERNEL void sk_add_f32(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  sk_elt_map<true>(x, y, z, b, e, [](float a, float c) { return a + c; });
}
#elif defined(SK_ELT_MUL)
// z[i] = x[i] * y[i]: one rounding, as on cpu (exact).
SK_KERNEL void sk_mul_f32(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  sk_elt_map<true>(x, y, z, b, e, [](float a, float c) { return a * c; });
}
#elif defined(SK_ELT_SCALE)
// y[i] = x[i] * alpha, as on cpu (the same one rounding: exact).
SK_KERNEL void sk_scale_f32(const sk_ctx* ctx, const float* x, float* y, float alpha, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  sk_elt_map<false>(x, x, y, b, e, [alpha](float a, float) { return a * alpha; });
}
#elif defined(SK_ELT_COPY)
SK_KERNEL void sk_copy_f32(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  sk_elt_map<false>(x, x, y, b, e, [](float a, float) { return a; });
}
#elif defined(SK_ELT_SWIGLU)
SK_KERNEL void sk_swiglu_f32(const sk_ctx* ctx, const float* gate, const float* up, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  sk_elt_map<true>(gate, up, y, b, e, [](float g, float u) { return g / (1.0f + expf(-g)) * u; });
}
#elif defined(SK_ELT_INCREMENT_I64)
// x[i] += delta over n int64 elements (wrapping, as on cpu).
SK_KERNEL void sk_increment_i64(const sk_ctx* ctx, int64_t* x, int64_t n, int64_t delta) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) x[i] = (int64_t)((uint64_t)x[i] + (uint64_t)delta);
}
#else
#error "elementwise.cu: define SK_ELT_ADD, SK_ELT_MUL, SK_ELT_SCALE, SK_ELT_COPY, SK_ELT_SWIGLU or SK_ELT_INCREMENT_I64"
#endif
