// Ascend port of tests/session/data/kernels/ks_sum.cpp (kernel_sync, "sync_all_calls": 1): phase 1, block b
// stores the sum of its slice of x in partial[b]; AscendC::SyncAll, a barrier over every vector core of the
// launch (inside a SuperKernel wider than the op, feed-sync-all makes the other cores call it too); phase 2,
// every block adds the total of all partials to its slice: y[i] = x[i] + total. Compile-time: SK_N.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void fx_ks_sum(GM_ADDR x, GM_ADDR partial, GM_ADDR y) {
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
  dcci(ps, ENTIRE_DATA_CACHE, CACHELINE_OUT);  // and other cores' partials must not come from it
  float total = 0.0f;
  for (int64_t k = 0; k < blocks; ++k) total += ps[k];  // same order in every block
  for (int64_t i = begin; i < end; ++i) ys[i] = xs[i] + total;
}
