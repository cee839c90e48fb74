// swiglu_f32: y = silu(gate) * up = gate / (1 + exp(-gate)) * up over n floats, in the Ascend C vector
// style (docs/ASCEND.md "Writing a sub-kernel"): the block's elements in tiles of at most kTile floats
// through double-buffered queues: DataCopy GM -> UB (MTE2); Muls(-1), Exp, Adds(1), Div, Mul (V), each
// the cpu builtin's operation in its order (the same bits); DataCopy UB -> GM (MTE3).
// Split: SkBlockRange(n): all "block". Compile-time: SK_N.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "swiglu_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTile = 4096;  // floats: 3 queues x 2 buffers x 16 KiB of the 192 KiB UB

class SkSwigluF32 {
 public:
  __aicore__ inline void Init(GM_ADDR gate, GM_ADDR up, GM_ADDR y) {
    tiles_ = SkBlockTiles(SK_N, kTile);
    if (tiles_.count == 0) return;
    gGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gate) + tiles_.begin, tiles_.length);
    uGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(up) + tiles_.begin, tiles_.length);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + tiles_.begin, tiles_.length);
    pipe_.InitBuffer(inG_, kBufferNum, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(inU_, kBufferNum, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(outY_, kBufferNum, tiles_.tile * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tiles_.count; ++i) {
      CopyIn(i);
      Compute(i);
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i) {
    LocalTensor<float> g = inG_.AllocTensor<float>();
    LocalTensor<float> u = inU_.AllocTensor<float>();
    SkCopyIn(g, gGm_[i * tiles_.tile], tiles_.Len(i));
    SkCopyIn(u, uGm_[i * tiles_.tile], tiles_.Len(i));
    inG_.EnQue(g);
    inU_.EnQue(u);
  }
  __aicore__ inline void Compute(uint32_t i) {
    const uint32_t n = tiles_.Len(i);
    LocalTensor<float> g = inG_.DeQue<float>();
    LocalTensor<float> u = inU_.DeQue<float>();
    LocalTensor<float> y = outY_.AllocTensor<float>();
    Muls(y, g, -1.0f, n);  // -g (exact)
    Exp(y, y, n);
    Adds(y, y, 1.0f, n);
    Div(y, g, y, n);  // silu(g)
    Mul(y, y, u, n);
    outY_.EnQue(y);
    inG_.FreeTensor(g);
    inU_.FreeTensor(u);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    LocalTensor<float> y = outY_.DeQue<float>();
    SkCopyOut(yGm_[i * tiles_.tile], y, tiles_.Len(i));
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inG_, inU_;
  TQue<QuePosition::VECOUT, kBufferNum> outY_;
  GlobalTensor<float> gGm_, uGm_, yGm_;
  SkTiles tiles_;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_swiglu_f32(GM_ADDR gate, GM_ADDR up, GM_ADDR y) {
  SkSwigluF32 op;
  op.Init(gate, up, y);
  op.Process();
}
