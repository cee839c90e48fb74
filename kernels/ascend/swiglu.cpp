// swiglu_f32: y = silu(gate) * up = gate / (1 + exp(-gate)) * up over n floats, in the Ascend C vector
// style (docs/ASCEND.md "Writing a sub-kernel"): Muls(-1), Exp, Adds(1), Div, Mul on the vector unit,
// each the cpu builtin's operation in its order (the same bits), tile by tile (x = gate, y = up).
// Split: SkBlockRange(n): all "block". Compile-time: SK_N. The tile pipeline is SkBinaryTilesF32
// (sk_ascend_kernel.h); examples/ascend_add spells the same pipeline out as a kernel author writes it.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "swiglu_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

namespace {

struct SkSwigluCompute {
  __aicore__ inline void operator()(const AscendC::LocalTensor<float>& z, const AscendC::LocalTensor<float>& x,
                                    const AscendC::LocalTensor<float>& y, uint32_t n) const {
    AscendC::Muls(z, x, -1.0f, n);  // -gate (exact)
    AscendC::Exp(z, z, n);
    AscendC::Adds(z, z, 1.0f, n);
    AscendC::Div(z, x, z, n);  // silu(gate)
    AscendC::Mul(z, z, y, n);
  }
};

}  // namespace

extern "C" __global__ __aicore__ void sk_swiglu_f32(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  SkBinaryTilesF32<SkSwigluCompute> op;
  op.Init(a, b, c, SK_N);
  op.Process();
}
