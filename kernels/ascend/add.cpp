// add_f32: z = x + y over n floats (DESIGN section 9 contract in sk_ascend_kernel.h), in the Ascend C
// vector style (docs/ASCEND.md "Writing a sub-kernel"): the block's elements (SkBlockRange(n)) in tiles
// of at most kTile floats through double-buffered queues: DataCopy GM -> UB (MTE2), Add (V), DataCopy
// UB -> GM (MTE3); a tile that is not whole 32-byte blocks moves with DataCopyPad.
// Split: SkBlockRange(n): x, y, z "block". Compile-time: SK_N.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "add_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;  // double buffering: copy-in of tile i+1 overlaps Add of tile i
constexpr uint32_t kTile = 4096;   // floats: 3 queues x 2 buffers x 16 KiB of the 192 KiB UB

class SkAddF32 {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    tiles_ = SkBlockTiles(SK_N, kTile);
    if (tiles_.count == 0) return;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + tiles_.begin, tiles_.length);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + tiles_.begin, tiles_.length);
    zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z) + tiles_.begin, tiles_.length);
    pipe_.InitBuffer(inX_, kBufferNum, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(inY_, kBufferNum, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(outZ_, kBufferNum, tiles_.tile * sizeof(float));
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
    LocalTensor<float> y = inY_.AllocTensor<float>();
    SkCopyIn(x, xGm_[i * tiles_.tile], tiles_.Len(i));
    SkCopyIn(y, yGm_[i * tiles_.tile], tiles_.Len(i));
    inX_.EnQue(x);
    inY_.EnQue(y);
  }
  __aicore__ inline void Compute(uint32_t i) {
    LocalTensor<float> x = inX_.DeQue<float>();
    LocalTensor<float> y = inY_.DeQue<float>();
    LocalTensor<float> z = outZ_.AllocTensor<float>();
    Add(z, x, y, tiles_.Len(i));
    outZ_.EnQue(z);
    inX_.FreeTensor(x);
    inY_.FreeTensor(y);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    LocalTensor<float> z = outZ_.DeQue<float>();
    SkCopyOut(zGm_[i * tiles_.tile], z, tiles_.Len(i));
    outZ_.FreeTensor(z);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inX_, inY_;
  TQue<QuePosition::VECOUT, kBufferNum> outZ_;
  GlobalTensor<float> xGm_, yGm_, zGm_;
  SkTiles tiles_;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_add_f32(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  SkAddF32 op;
  op.Init(x, y, z);
  op.Process();
}
