// x[i] += delta over n int64 elements, in place (a decode loop's position
// counter: one increment_i64 op at the end of a step moves every runtime
// "pos" read from x to the next token).
// Split: sk_block_range(n): x "block".
// Static shape: -DSK_N, -DSK_DELTA.
#include "superkernel/cpu/kernel.h"

#ifdef SK_N
#define SKV_N ((int64_t)(SK_N))
#else
#define SKV_N n
#endif
#ifdef SK_DELTA
#define SKV_DELTA ((int64_t)(SK_DELTA))
#else
#define SKV_DELTA delta
#endif

SK_KERNEL void sk_increment_i64(const sk_ctx* ctx, int64_t* x, int64_t n, int64_t delta) {
  (void)n;
  (void)delta;
  int64_t b, e;
  sk_block_range(ctx, SKV_N, &b, &e);
  // Wrapping two's complement addition (no signed-overflow UB).
  for (int64_t i = b; i < e; ++i) x[i] = (int64_t)((uint64_t)x[i] + (uint64_t)SKV_DELTA);
}
