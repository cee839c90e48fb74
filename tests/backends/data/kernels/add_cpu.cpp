// The cpu version of add_testbe.cpp (the same kernel under one op-list entry).
#include "superkernel/cpu/kernel.h"
SK_KERNEL void add(const sk_ctx* ctx, const float* x, const float* y, float* z, int64_t n) {
  int64_t per = n / ctx->block_dim, lo = per * ctx->block_idx;
  int64_t hi = ctx->block_idx + 1 == ctx->block_dim ? n : lo + per;
  for (int64_t i = lo; i < hi; ++i) z[i] = x[i] + y[i];
}
