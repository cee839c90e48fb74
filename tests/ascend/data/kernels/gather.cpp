// Ascend port of tests/session/data/kernels/gather.cpp: y[i] = x[(7 i + 3) mod n] * 0.5 + x[i] (reads all of
// x). Compile-time: SK_N.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void fx_gather(GM_ADDR x, GM_ADDR y) {
  const int64_t blocks = AscendC::GetBlockNum(), b = AscendC::GetBlockIdx(), per = (SK_N) / blocks;
  const int64_t begin = per * b, end = b + 1 == blocks ? (SK_N) : begin + per;
  __gm__ const float* xs = reinterpret_cast<__gm__ const float*>(x);
  for (int64_t i = begin; i < end; ++i) reinterpret_cast<__gm__ float*>(y)[i] = xs[(7 * i + 3) % (SK_N)] * 0.5f + xs[i];
}
