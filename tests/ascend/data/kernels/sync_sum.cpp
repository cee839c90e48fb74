// A two-phase vector reduction that syncs its own blocks twice per launch (kernel_sync, "sync_all_calls": 2),
// for the feed-sync-all goldens and runs: phase 1, block b stores the sum of its slice of x in partial[b];
// SyncAll; phase 2, block 0 adds the partials in block order into partial[blocks]; SyncAll; phase 3, every
// block writes y[i] = x[i] + total over its slice. partial holds at least blocks + 1 floats. AscendC::SyncAll
// is a barrier over every vector core of the launch: alone (AIV_ONLY) those are the op's blocks, inside a
// wider SuperKernel the other vector cores must call it as often (feed-sync-all). Compile-time: SK_N.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void fx_sync_sum(GM_ADDR x, GM_ADDR partial, GM_ADDR y) {
  __gm__ float* xs = reinterpret_cast<__gm__ float*>(x);
  __gm__ float* ps = reinterpret_cast<__gm__ float*>(partial);
  __gm__ float* ys = reinterpret_cast<__gm__ float*>(y);
  const int64_t blocks = AscendC::GetBlockNum(), b = AscendC::GetBlockIdx(), per = (SK_N) / blocks;
  const int64_t begin = per * b, end = b + 1 == blocks ? (SK_N) : begin + per;
  float s = 0.0f;
  for (int64_t i = begin; i < end; ++i) s += xs[i];
  ps[b] = s;
  dcci(ps + b, SINGLE_CACHE_LINE, CACHELINE_OUT);  // scalar GM writes go through the data cache
  AscendC::SyncAll<true>();
  if (b == 0) {
    dcci(ps, ENTIRE_DATA_CACHE, CACHELINE_OUT);  // other cores' partials must not come from the cache
    float total = 0.0f;
    for (int64_t k = 0; k < blocks; ++k) total += ps[k];
    ps[blocks] = total;
    dcci(ps + blocks, SINGLE_CACHE_LINE, CACHELINE_OUT);
  }
  AscendC::SyncAll<true>();
  dcci(ps + blocks, SINGLE_CACHE_LINE, CACHELINE_OUT);
  const float total = ps[blocks];
  for (int64_t i = begin; i < end; ++i) ys[i] = xs[i] + total;
}
