// y = x + pos over n floats, pos a runtime scalar (read at the call); block b its sk_block_range slice.
#include <superkernel/cpu/kernel.h>

SK_KERNEL void fx_shift(const sk_ctx* ctx, const float* x, float* y, int64_t n, int64_t pos) {
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] + static_cast<float>(pos);
}
