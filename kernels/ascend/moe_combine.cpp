// moe_combine_f32: y[r] = sum_s weights[s] * expert_out[s, r], expert_out [topk, rows], in the Ascend C
// vector style (docs/ASCEND.md "Writing a sub-kernel"): the block's rows in tiles of at most kTile; per
// tile the accumulator starts at 0 (Duplicate), and for each slot s the slot's rows go GM -> UB (MTE2)
// through a double-buffered VECIN queue, Muls by weights[s] (read by the scalar unit) and Add (V)
// accumulate them in slot order (the cpu builtin's acc += w * e, the same bits); the tile goes UB -> GM
// (MTE3) through a VECOUT queue.
// Split: SkBlockRange(rows): y "block"; weights, expert_out "all". Compile-time: SK_TOPK, SK_ROWS.
#include "sk_ascend_kernel.h"
#if !defined(SK_TOPK) || !defined(SK_ROWS)
#error "moe_combine_f32 (ascend): topk, rows are compile-time: -DSK_TOPK -DSK_ROWS"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTile = 8192;  // floats: 2 expert tiles, the accumulator and the product: 4 x 32 KiB

class SkMoeCombineF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR weights, GM_ADDR expertOut, GM_ADDR y) {
    tiles_ = SkBlockTiles(SK_ROWS, kTile);
    if (tiles_.count == 0) return false;
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weights), kTopk);
    eGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(expertOut), kTopk * static_cast<uint64_t>(SK_ROWS));
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + tiles_.begin, tiles_.length);
    pipe_.InitBuffer(inE_, kBufferNum, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(outY_, 1, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(prod_, tiles_.tile * sizeof(float));
    return true;
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tiles_.count; ++i) {
      const uint32_t n = tiles_.Len(i);
      LocalTensor<float> acc = outY_.AllocTensor<float>();
      Duplicate(acc, 0.0f, n);
      for (uint32_t s = 0; s < kTopk; ++s) {
        CopyIn(s, i, n);
        Accumulate(acc, wGm_.GetValue(s), n);
      }
      outY_.EnQue(acc);
      CopyOut(i, n);
    }
  }

 private:
  static constexpr uint32_t kTopk = static_cast<uint32_t>(SK_TOPK);

  __aicore__ inline void CopyIn(uint32_t s, uint32_t i, uint32_t n) {
    LocalTensor<float> e = inE_.AllocTensor<float>();
    SkCopyIn(e, eGm_[s * static_cast<uint64_t>(SK_ROWS) + tiles_.begin + i * tiles_.tile], n);
    inE_.EnQue(e);
  }
  __aicore__ inline void Accumulate(const LocalTensor<float>& acc, float w, uint32_t n) {
    LocalTensor<float> e = inE_.DeQue<float>();
    LocalTensor<float> p = prod_.Get<float>();
    Muls(p, e, w, n);
    Add(acc, acc, p, n);
    inE_.FreeTensor(e);
  }
  __aicore__ inline void CopyOut(uint32_t i, uint32_t n) {
    LocalTensor<float> y = outY_.DeQue<float>();
    SkCopyOut(yGm_[i * tiles_.tile], y, n);
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inE_;
  TQue<QuePosition::VECOUT, 1> outY_;
  TBuf<QuePosition::VECCALC> prod_;
  GlobalTensor<float> wGm_, eGm_, yGm_;
  SkTiles tiles_;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_moe_combine_f32(GM_ADDR weights, GM_ADDR expert_out, GM_ADDR y) {
  SkMoeCombineF32 op;
  if (op.Init(weights, expert_out, y)) op.Process();
}
