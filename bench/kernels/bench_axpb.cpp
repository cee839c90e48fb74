// The benchmarks' chain kernel: y[i] = x[j] * alpha + beta over n floats,
// j = i (reverse = 0) or j = n - 1 - i (reverse = 1).
//
// One FMA per element keeps an op's duration proportional to n (the op-size
// sweep scales n), and the kernel is declared twice by bench/gen_sweep.py:
// with x "partition": "block" (chains whose edges are local or flag) and with
// x "partition": "all" plus reverse = 1 (each block really reads another
// block's slice, so every consumer block needs every producer block: counter
// edges, like the gemv -> gemv edges of a decode layer).
#include "superkernel/cpu/kernel.h"

SK_KERNEL void bench_axpb(const sk_ctx* ctx, const float* x, float* y, float alpha, float beta, int64_t n,
                          int32_t reverse) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  if (reverse) {
    for (int64_t i = b; i < e; ++i) y[i] = x[n - 1 - i] * alpha + beta;
  } else {
    for (int64_t i = b; i < e; ++i) y[i] = x[i] * alpha + beta;
  }
}
