// moe_combine_f32: y[r] = sum_s weights[s] * expert_out[s, r], expert_out [topk, rows].
// Split: SkBlockRange(rows): y "block"; weights, expert_out "all". Compile-time: SK_TOPK, SK_ROWS.
#include "sk_ascend_kernel.h"
#if !defined(SK_TOPK) || !defined(SK_ROWS)
#error "moe_combine_f32 (ascend): topk, rows are compile-time: -DSK_TOPK -DSK_ROWS"
#endif

extern "C" __global__ __aicore__ void sk_moe_combine_f32(GM_ADDR weights, GM_ADDR expert_out, GM_ADDR y) {
  __gm__ const float* ws = SK_ASCEND_GM(const float, weights);
  __gm__ const float* eo = SK_ASCEND_GM(const float, expert_out);
  __gm__ float* ys = SK_ASCEND_GM(float, y);
  const int64_t R = SK_ROWS;
  int64_t rb, re;
  SkBlockRange(R, &rb, &re);
  for (int64_t r = rb; r < re; ++r) {
    float acc = 0.0f;
    for (int64_t s = 0; s < (int64_t)(SK_TOPK); ++s) acc += ws[s] * eo[s * R + r];
    ys[r] = acc;
  }
}
