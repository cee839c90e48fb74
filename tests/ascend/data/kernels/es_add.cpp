// Ascend port of tests/session/data/kernels/es_add.cpp (early start): the table is built before
// WaitPreTaskEnd, outputs are final at SetNextTaskStart. z = x + y * table[i % 16]. Compile-time: SK_N.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void fx_es_add(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  float table[16];
  for (int k = 0; k < 16; ++k) table[k] = 1.0f + 0.125f * static_cast<float>(k);  // overlaps the producer
  AscendC::WaitPreTaskEnd();
  const int64_t blocks = AscendC::GetBlockNum(), b = AscendC::GetBlockIdx(), per = (SK_N) / blocks;
  const int64_t begin = per * b, end = b + 1 == blocks ? (SK_N) : begin + per;
  for (int64_t i = begin; i < end; ++i)
    reinterpret_cast<__gm__ float*>(z)[i] =
        reinterpret_cast<__gm__ float*>(x)[i] + reinterpret_cast<__gm__ float*>(y)[i] * table[i % 16];
  AscendC::SetNextTaskStart();
}
