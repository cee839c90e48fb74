// y[r] = sum_c W[r, c] * x[c]: W is [rows, cols], x [cols], y [rows].
// Five builtins from this source (weight formats in sk_weight.h):
// gemv_f32 (sk_gemv_f32), gemv_bf16w (-DSK_WEIGHT_BF16, sk_gemv_bf16w),
// gemv_f16w (-DSK_WEIGHT_F16, sk_gemv_f16w), gemv_q8_0 (-DSK_WEIGHT_Q8_0,
// sk_gemv_q8_0: W is rows x cols/32 q8_0 blocks, cols a multiple of 32, else
// sk_report_error) and gemv_q4_0 (-DSK_WEIGHT_Q4_0, sk_gemv_q4_0: the same
// with ggml's q4_0 blocks); activations and accumulation are f32. Each row
// is one vectorized dot product (sk_simd.h), so y[r] does not depend on the
// block split.
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

#if defined(SK_WEIGHT_BF16)
#define SK_GEMV_ENTRY sk_gemv_bf16w
#elif defined(SK_WEIGHT_F16)
#define SK_GEMV_ENTRY sk_gemv_f16w
#elif defined(SK_WEIGHT_Q8_0)
#define SK_GEMV_ENTRY sk_gemv_q8_0
#elif defined(SK_WEIGHT_Q4_0)
#define SK_GEMV_ENTRY sk_gemv_q4_0
#else
#define SK_GEMV_ENTRY sk_gemv_f32
#endif

SK_KERNEL void SK_GEMV_ENTRY(const sk_ctx* ctx, const sk_weight_t* w, const float* x, float* y, int64_t rows,
                             int64_t cols) {
  (void)rows;
  (void)cols;
  const int64_t C = SKV_COLS;
  if (!sk_w_cols_ok(C)) {
    if (ctx->block_idx == 0) sk_report_error(ctx, "sk_gemv: " SK_W_NAME " weights need cols to be a multiple of 32");
    return;
  }
  int64_t rb, re;
  sk_block_range(ctx, SKV_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    y[r] = sk_dot_w(sk_w_row(w, r, C), x, C);
  }
}
