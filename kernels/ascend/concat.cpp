// concat_f32: y[r, 0:ca] = a[r, :], y[r, ca:ca+cb] = b[r, :]; a [rows, ca],
// b [rows, cb], y [rows, ca + cb] (rows = 1: a flat concat).
// Split: SkBlockRange(rows * (ca + cb)) over y's elements: y "block"; a, b "all".
// Compile-time: SK_ROWS, SK_CA, SK_CB.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_CA) || !defined(SK_CB)
#error "concat_f32 (ascend): rows, ca, cb are compile-time: -DSK_ROWS -DSK_CA -DSK_CB"
#endif

extern "C" __global__ __aicore__ void sk_concat_f32(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
  __gm__ const float* as = SK_ASCEND_GM(const float, a);
  __gm__ const float* bs = SK_ASCEND_GM(const float, b);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t CA = SK_CA, CB = SK_CB, W = CA + CB;
  int64_t eb, ee;
  SkBlockRange(static_cast<int64_t>(SK_ROWS) * W, &eb, &ee);
  for (int64_t e = eb; e < ee; ++e) {
    const int64_t r = e / W, c = e - r * W;
    ys[e] = c < CA ? as[r * CA + c] : bs[r * CB + (c - CA)];
  }
}
