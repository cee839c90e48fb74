// Never signals its consumer in time: block 0 sleeps longer than the test's
// wait timeout, so a consumer's flag/counter wait times out. (A real hang is
// impossible to plan; this is a slow producer, which the timeout catches.)
#include <superkernel/cpu/kernel.h>
#include <time.h>

SK_KERNEL void fx_slow(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  if (ctx->block_idx == 0) {
    struct timespec ts = {1, 500000000};
    nanosleep(&ts, nullptr);
  }
  int64_t begin, end;
  sk_block_range(ctx, n, &begin, &end);
  for (int64_t i = begin; i < end; ++i) y[i] = x[i];
}
