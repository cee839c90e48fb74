// The memory-bandwidth reference of the kernel benchmark: a streaming read.
// Block b sums its slice sk_block_range(n) of x and writes the sum to
// out[b] (out has block_dim elements, "partition": "block"). Compiled by the
// same driver with the same flags as the builtins, and vectorized the same
// way (templates/kernels/sk_simd.h's width: 16 floats with AVX-512), with 8
// independent accumulators so that the loop is bound by loads, not adds.
#include "superkernel/cpu/kernel.h"

#if defined(__AVX512F__)
#define BS_W 16
#elif defined(__AVX__)
#define BS_W 8
#else
#define BS_W 4
#endif
typedef float bs_f __attribute__((vector_size(BS_W * 4)));

SK_KERNEL void bench_stream(const sk_ctx* ctx, const float* x, float* out, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  bs_f a[8] = {{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}};
  int64_t i = b;
  for (; i + 8 * BS_W <= e; i += 8 * BS_W)
    for (int k = 0; k < 8; ++k) {
      bs_f v;
      __builtin_memcpy(&v, x + i + k * BS_W, sizeof v);
      a[k] += v;
    }
  float s = 0.0f;
  for (; i < e; ++i) s += x[i];
  for (int k = 0; k < 8; ++k)
    for (int l = 0; l < BS_W; ++l) s += a[k][l];
  out[ctx->block_idx] = s;
}
