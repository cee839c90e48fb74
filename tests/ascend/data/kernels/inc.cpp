// Ascend port of tests/session/data/kernels/inc.cpp: x = x * 1.5 + 1 in place. Compile-time: SK_N.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void fx_inc(GM_ADDR x) {
  const int64_t blocks = AscendC::GetBlockNum(), b = AscendC::GetBlockIdx(), per = (SK_N) / blocks;
  const int64_t begin = per * b, end = b + 1 == blocks ? (SK_N) : begin + per;
  __gm__ float* v = reinterpret_cast<__gm__ float*>(x);
  for (int64_t i = begin; i < end; ++i) v[i] = v[i] * 1.5f + 1.0f;
}
