// z[b] = 1 when the u64 scalar arrived as 2^64 - 1, else -1.
#include <superkernel/cpu/kernel.h>

SK_KERNEL void u64_is_max(const sk_ctx* ctx, float* z, uint64_t n) {
  z[ctx->block_idx] = n == UINT64_MAX ? 1.0f : -1.0f;
}
