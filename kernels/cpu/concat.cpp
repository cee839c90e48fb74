// Concatenate two float tensors along the last axis:
//   y[r, 0:ca] = a[r, :], y[r, ca:ca+cb] = b[r, :]
// a [rows, ca], b [rows, cb], y [rows, ca + cb]; rows = 1 is a flat concat.
// Split: sk_block_range(rows * (ca + cb)) over y's elements -> y "block";
// a and b "all". Static shape: -DSK_ROWS, -DSK_CA, -DSK_CB.
#include "superkernel/cpu/kernel.h"

#ifdef SK_ROWS
#define SKV_ROWS ((int64_t)(SK_ROWS))
#else
#define SKV_ROWS rows
#endif
#ifdef SK_CA
#define SKV_CA ((int64_t)(SK_CA))
#else
#define SKV_CA ca
#endif
#ifdef SK_CB
#define SKV_CB ((int64_t)(SK_CB))
#else
#define SKV_CB cb
#endif

SK_KERNEL void sk_concat_f32(const sk_ctx* ctx, const float* a, const float* b, float* y, int64_t rows, int64_t ca,
                             int64_t cb) {
  (void)rows;
  (void)ca;
  (void)cb;
  const int64_t CA = SKV_CA, CB = SKV_CB, W = SKV_CA + SKV_CB;
  int64_t eb, ee;
  sk_block_range(ctx, SKV_ROWS * W, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t r = e / W, c = e - r * W;
    y[e] = c < CA ? a[r * CA + c] : b[r * CB + (c - CA)];
  }
}
