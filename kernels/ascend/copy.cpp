// copy_f32: y = x over n floats, in the Ascend C vector style (docs/ASCEND.md "Writing a sub-kernel"):
// the block's elements in tiles of at most kTile floats through one double-buffered TQueBind<VECIN,
// VECOUT>: DataCopy GM -> UB (MTE2), EnQue / DeQue (MTE2 -> MTE3), DataCopy UB -> GM (MTE3); no vector
// instruction touches the data.
// Split: SkBlockRange(n): x, y "block". Compile-time: SK_N.
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "copy_f32 (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTile = 16384;  // floats: 2 buffers x 64 KiB of the 192 KiB UB

class SkCopyF32 {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y) {
    tiles_ = SkBlockTiles(SK_N, kTile);
    if (tiles_.count == 0) return;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + tiles_.begin, tiles_.length);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + tiles_.begin, tiles_.length);
    pipe_.InitBuffer(queue_, kBufferNum, tiles_.tile * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tiles_.count; ++i) {
      CopyIn(i);
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i) {
    LocalTensor<float> t = queue_.AllocTensor<float>();
    SkCopyIn(t, xGm_[i * tiles_.tile], tiles_.Len(i));
    queue_.EnQue(t);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    LocalTensor<float> t = queue_.DeQue<float>();
    SkCopyOut(yGm_[i * tiles_.tile], t, tiles_.Len(i));
    queue_.FreeTensor(t);
  }

  TPipe pipe_;
  TQueBind<QuePosition::VECIN, QuePosition::VECOUT, kBufferNum> queue_;
  GlobalTensor<float> xGm_, yGm_;
  SkTiles tiles_;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_copy_f32(GM_ADDR x, GM_ADDR y) {
  SkCopyF32 op;
  op.Init(x, y);
  op.Process();
}
