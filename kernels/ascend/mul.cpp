// mul_f32: z = x * y over n floats (DESIGN section 9 contract in sk_ascend_kernel.h), in the Ascend C
// vector style (docs/ASCEND.md "Writing a sub-kernel"): Mul on the vector unit, tile by tile.
// Split: SkBlockRange(n): all "block". Compile-time: SK_N. The tile pipeline is SkBinaryTilesF32
// (sk_ascend_kernel.h); examples/ascend_add spells the same pipeline out as a kernel author writes it.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "mul_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

namespace {

struct SkMulCompute {
  __aicore__ inline void operator()(const AscendC::LocalTensor<float>& z, const AscendC::LocalTensor<float>& x,
                                    const AscendC::LocalTensor<float>& y, uint32_t n) const {
    AscendC::Mul(z, x, y, n);
  }
};

}  // namespace

extern "C" __global__ __aicore__ void sk_mul_f32(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  SkBinaryTilesF32<SkMulCompute> op;
  op.Init(a, b, c, SK_N);
  op.Process();
}
