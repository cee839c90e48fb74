// A deliberately WRONG kernel: it declares its input "partition": "block"
// but block b reads the slice of block (b + 1) % B. The planner trusts the
// declaration and syncs the edge from slow_fill as "local" (program order on
// one core), so inside a SuperKernel block 0 reads block 1's slice before
// slow_fill's (sleeping) block 1 wrote it; unfused, slow_fill has finished
// first. Fused and unfused therefore differ: what `sk-compile --run` exists
// to catch.
#include <superkernel/cpu/kernel.h>

SK_KERNEL void neighbour_copy(const sk_ctx* ctx, const float* t, float* out, int64_t n) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  const int64_t per = n / (int64_t)ctx->block_dim;
  const int64_t shift = (ctx->block_idx + 1 == ctx->block_dim) ? -begin : per;
  for (int64_t i = begin; i < end; ++i) out[i] = t[i + shift];
}
