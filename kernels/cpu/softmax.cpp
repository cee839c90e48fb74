// Row softmax: y[r, :] = exp(x[r, :] - max) / sum, rows x cols floats
// (y may alias x). Split: whole rows sk_block_range(rows) -> x, y "all".
// Static shape: -DSK_ROWS, -DSK_COLS.
#include "superkernel/cpu/kernel.h"
#include "sk_simd.h"

#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif
#ifdef SK_COLS
#define SKV_COLS ((int64_t)(SK_COLS))
#else
#define SKV_COLS cols
#endif

SK_KERNEL void sk_softmax_f32(const sk_ctx* ctx, const float* x, float* y, int64_t rows, int64_t cols) {
  (void)rows;
  (void)cols;
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    float m = -__builtin_inff();
    float s = 0.0f;
    int64_t c = 0;
#ifndef SK_KERNELS_BASELINE
    // Vectorized max, exp (sk_simd.h skv_exp, < 2e-7 relative) and sum.
    skv_f vm = skv_splat(m);
    for (; c + SKV_W <= C; c += SKV_W) vm = skv_max(vm, skv_load(xr + c));
    m = skv_hmax(vm);
#endif
    for (; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    c = 0;
#ifndef SK_KERNELS_BASELINE
    const skv_f vmax = skv_splat(m);
    skv_f vs = {0};
    for (; c + SKV_W <= C; c += SKV_W) {
      const skv_f v = skv_exp(skv_load(xr + c) - vmax);
      skv_store(yr + c, v);
      vs += v;
    }
    s = skv_hsum(vs);
#endif
    for (; c < C; ++c) {
      const float v = __builtin_expf(xr[c] - m);
      yr[c] = v;
      s += v;
    }
    const float inv = 1.0f / s;
    c = 0;
#ifndef SK_KERNELS_BASELINE
    const skv_f vinv = skv_splat(inv);
    for (; c + SKV_W <= C; c += SKV_W) skv_store(yr + c, skv_load(yr + c) * vinv);
#endif
    for (; c < C; ++c) yr[c] *= inv;
  }
}
