// Ascend port of tests/session/data/kernels/scale.cpp: y = alpha * x (block split). A cube-core kernel in
// the ascend scenarios, so they cross core types. Compile-time: SK_ALPHA, SK_N.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void fx_scale(GM_ADDR x, GM_ADDR y) {
  const int64_t blocks = AscendC::GetBlockNum(), b = AscendC::GetBlockIdx(), per = (SK_N) / blocks;
  const int64_t begin = per * b, end = b + 1 == blocks ? (SK_N) : begin + per;
  for (int64_t i = begin; i < end; ++i)
    reinterpret_cast<__gm__ float*>(y)[i] = (SK_ALPHA) * reinterpret_cast<__gm__ float*>(x)[i];
}
