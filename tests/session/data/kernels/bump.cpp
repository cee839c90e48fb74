// s[0] += 1: a decode loop's position counter (one block writes it).
#include <superkernel/cpu/kernel.h>

SK_KERNEL void fx_bump(const sk_ctx* ctx, int64_t* s) {
  if (ctx->block_idx == 0) s[0] += 1;
}
