// t = x + 1 over "block" slices; block 1 first sleeps (SLOW_MS), so that
// inside a SuperKernel its slice is written well after block 0 finished.
#include <superkernel/cpu/kernel.h>
#include <time.h>

#ifndef SLOW_MS
#define SLOW_MS 300
#endif

SK_KERNEL void slow_fill(const sk_ctx* ctx, const float* x, float* t, int64_t n) {
  if (ctx->block_idx == 1) {
    struct timespec ts = {SLOW_MS / 1000, (SLOW_MS % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
  }
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin; i < end; ++i) t[i] = x[i] + 1.0f;
}
