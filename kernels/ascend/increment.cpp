// increment_i64: x[i] += delta over n int64 elements, in place (a decode loop's position counter).
// Split: SkBlockRange(n): x "block". Compile-time: SK_N, SK_DELTA.
#include "sk_ascend_kernel.h"
#if !defined(SK_N) || !defined(SK_DELTA)
#error "increment_i64 (ascend): n, delta are compile-time (-DSK_<NAME>)"
#endif

extern "C" __global__ __aicore__ void sk_increment_i64(GM_ADDR x) {
  __gm__ int64_t* xs = SK_ASCEND_GM(int64_t, x);
  const int64_t delta = SK_DELTA;
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  // Wrapping two's complement addition, as on cpu.
  for (int64_t i = b; i < e; ++i) xs[i] = (int64_t)((uint64_t)xs[i] + (uint64_t)delta);
}
