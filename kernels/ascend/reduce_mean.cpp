// reduce_mean_f32: y[r] = mean(x[r, :]); x [rows, cols], y [rows], in the Ascend C vector style
// (docs/ASCEND.md "Writing a sub-kernel"): each row of the block goes GM -> UB (MTE2) through a
// double-buffered VECIN queue and ReduceSum (V) sums it; the scalar unit collects the sums (V_S, then
// S_V) for up to kChunk rows, Div (V) by cols gives the means (the cpu builtin's sum / cols), and they go
// UB -> GM (MTE3) through a VECOUT queue. ReduceSum adds in 64-element repeats, the repeats in order: for
// cols <= 64 that is the cpu builtin's order (c = 0..cols-1), past it the last bits may differ. A row lives
// in UB whole: cols past kMaxCols fail the launch.
// Split: SkBlockRange(rows) = y's element split: y "block"; x read by whole rows: "all".
// Compile-time: SK_ROWS, SK_COLS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "reduce_mean_f32 (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kMaxCols = 16384;  // 2 x rows of f32
constexpr uint32_t kChunk = 1024;     // means per copy-out
static_assert(2 * kMaxCols * sizeof(float) + 4 * kChunk * sizeof(float) + 2048 <= kSkUbBytes,
              "reduce_mean_f32: the tiles fit the UB");

class SkReduceMeanF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR x, GM_ADDR y) {
    if (static_cast<int64_t>(SK_COLS) > kMaxCols) {
      if (GetBlockIdx() == 0) SkReportError("sk_reduce_mean_f32: cols past 16384 (a row lives in one vector core's UB)");
      return false;
    }
    int64_t rb, re;
    SkBlockRange(SK_ROWS, &rb, &re);
    rows_ = static_cast<uint32_t>(re - rb);
    if (rows_ == 0) return false;
    chunk_ = rows_ < kChunk ? rows_ : kChunk;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + rb * kCols, rows_ * kCols);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + rb, rows_);
    if (kCols > 0) {
      pipe_.InitBuffer(inX_, kBufferNum, kCols * sizeof(float));
      pipe_.InitBuffer(work_, SkAlignElems<float>((kCols + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    }
    pipe_.InitBuffer(red_, 32);
    pipe_.InitBuffer(sums_, chunk_ * sizeof(float));
    pipe_.InitBuffer(cols_, chunk_ * sizeof(float));
    pipe_.InitBuffer(outY_, 1, chunk_ * sizeof(float));
    return true;
  }
  __aicore__ inline void Process() {
    LocalTensor<float> cols = cols_.Get<float>();
    Duplicate(cols, static_cast<float>(kCols), chunk_);
    for (uint32_t first = 0; first < rows_; first += chunk_) {
      const uint32_t n = rows_ - first < chunk_ ? rows_ - first : chunk_;
      LocalTensor<float> sums = sums_.Get<float>();
      for (uint32_t j = 0; j < n; ++j) {
        if (kCols == 0) break;
        CopyIn(first + j);
        Sum(sums, j);
      }
      LocalTensor<float> y = outY_.AllocTensor<float>();
      if (kCols == 0) {
        Duplicate(y, 0.0f, n);  // the mean of nothing: 0, as the cpu builtin
      } else {
        Div(y, sums, cols, n);
      }
      outY_.EnQue(y);
      y = outY_.DeQue<float>();
      SkCopyOut(yGm_[first], y, n);
      outY_.FreeTensor(y);
    }
  }

 private:
  static constexpr uint32_t kCols = static_cast<uint32_t>(SK_COLS);

  __aicore__ inline void CopyIn(uint32_t r) {
    LocalTensor<float> x = inX_.AllocTensor<float>();
    SkCopyIn(x, xGm_[r * kCols], kCols);
    inX_.EnQue(x);
  }
  // sums[j] = the row's sum: ReduceSum (V), read and stored by the scalar unit.
  __aicore__ inline void Sum(const LocalTensor<float>& sums, uint32_t j) {
    LocalTensor<float> x = inX_.DeQue<float>();
    LocalTensor<float> red = red_.Get<float>();
    ReduceSum(red, x, work_.Get<float>(), kCols);
    inX_.FreeTensor(x);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    sums.SetValue(j, red.GetValue(0));
    SetFlag<HardEvent::S_V>(EVENT_ID0);  // the vector unit reads sums[j], and overwrites red next row
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inX_;
  TQue<QuePosition::VECOUT, 1> outY_;
  TBuf<QuePosition::VECCALC> work_, red_, sums_, cols_;
  GlobalTensor<float> xGm_, yGm_;
  uint32_t rows_ = 0, chunk_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_reduce_mean_f32(GM_ADDR x, GM_ADDR y) {
  SkReduceMeanF32 op;
  if (op.Init(x, y)) op.Process();
}
