// y[r] = sum_c W[r, c] * x[c]: W is [rows, cols], x [cols], y [rows].
// Two builtins from this source: gemv_f32 (f32 weights, entry sk_gemv_f32)
// and gemv_bf16w (-DSK_WEIGHT_BF16: bf16 weights as uint16_t, entry
// sk_gemv_bf16w); activations and accumulation are f32.
// Split: sk_block_range(rows) = the element split of y -> y "block";
// W (row slices, not its element split) and x are "all".
// Static shape: -DSK_ROWS, -DSK_COLS.
#include "superkernel/cpu/kernel.h"
#include "sk_weight.h"

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

#ifdef SK_WEIGHT_BF16
#define SK_GEMV_ENTRY sk_gemv_bf16w
#else
#define SK_GEMV_ENTRY sk_gemv_f32
#endif

SK_KERNEL void SK_GEMV_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, float* y, int64_t rows,
                             int64_t cols) {
  (void)rows;
  (void)cols;
  const int64_t C = SKV_COLS;
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    y[r] = sk_dot_w(w + r * C, x, C);
  }
}
