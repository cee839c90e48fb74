// scale_f32: y = x * alpha over n floats, in the Ascend C vector style (docs/ASCEND.md "Writing a
// sub-kernel"): the block's elements in tiles of at most kTile floats through double-buffered queues:
// DataCopy GM -> UB (MTE2), Muls (V), DataCopy UB -> GM (MTE3). x and y may be the same buffer: each tile
// is read before it is written, by the block that owns it.
// Split: SkBlockRange(n): x, y "block". Compile-time: SK_N, SK_ALPHA.
#include "sk_ascend_kernel.h"
#if !defined(SK_N) || !defined(SK_ALPHA)
#error "scale_f32 (ascend): scalars n, alpha are compile-time: -DSK_N -DSK_ALPHA"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTile = 8192;  // floats: 2 queues x 2 buffers x 32 KiB of the 192 KiB UB

class SkScaleF32 {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y) {
    tiles_ = SkBlockTiles(SK_N, kTile);
    if (tiles_.count == 0) return;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + tiles_.begin, tiles_.length);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + tiles_.begin, tiles_.length);
    pipe_.InitBuffer(inX_, kBufferNum, tiles_.tile * sizeof(float));
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
    LocalTensor<float> x = inX_.AllocTensor<float>();
    SkCopyIn(x, xGm_[i * tiles_.tile], tiles_.Len(i));
    inX_.EnQue(x);
  }
  __aicore__ inline void Compute(uint32_t i) {
    LocalTensor<float> x = inX_.DeQue<float>();
    LocalTensor<float> y = outY_.AllocTensor<float>();
    Muls(y, x, static_cast<float>(SK_ALPHA), tiles_.Len(i));
    outY_.EnQue(y);
    inX_.FreeTensor(x);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    LocalTensor<float> y = outY_.DeQue<float>();
    SkCopyOut(yGm_[i * tiles_.tile], y, tiles_.Len(i));
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inX_;
  TQue<QuePosition::VECOUT, kBufferNum> outY_;
  GlobalTensor<float> xGm_, yGm_;
  SkTiles tiles_;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_scale_f32(GM_ADDR x, GM_ADDR y) {
  SkScaleF32 op;
  op.Init(x, y);
  op.Process();
}
