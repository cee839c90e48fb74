// Ascend port of tests/session/data/kernels/add.cpp: z = x + y (block split). Compile-time: SK_N.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void fx_add(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  const int64_t blocks = AscendC::GetBlockNum(), b = AscendC::GetBlockIdx(), per = (SK_N) / blocks;
  const int64_t begin = per * b, end = b + 1 == blocks ? (SK_N) : begin + per;
  for (int64_t i = begin; i < end; ++i)
    reinterpret_cast<__gm__ float*>(z)[i] = reinterpret_cast<__gm__ float*>(x)[i] + reinterpret_cast<__gm__ float*>(y)[i];
}
