// reduce_mean_f32: y[r] = mean(x[r, :]); x [rows, cols], y [rows].
// Split: SkBlockRange(rows) = y's element split: y "block"; x read by whole rows: "all".
// Each row is summed c = 0..cols-1 in order (the cpu builtin's order).
// Compile-time: SK_ROWS, SK_COLS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "reduce_mean_f32 (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

extern "C" __global__ __aicore__ void sk_reduce_mean_f32(GM_ADDR x, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t C = SK_COLS;
  int64_t rb, re;
  SkBlockRange(SK_ROWS, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) s += xs[r * C + c];
    ys[r] = C > 0 ? s / static_cast<float>(C) : 0.0f;
  }
}
