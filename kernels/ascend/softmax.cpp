// softmax_f32: y[r, :] = exp(x[r, :] - max) / sum, rows x cols (y may alias x), in the Ascend C vector
// style (docs/ASCEND.md "Writing a sub-kernel"): each row of the block goes GM -> UB (MTE2) through a
// double-buffered VECIN queue; ReduceMax (V) gives its max, which the scalar unit reads (V_S); Adds(-max),
// Exp (V) give the exponentials (the cpu builtin's exp(x - max), the same bits), ReduceSum (V) their sum,
// read by the scalar unit for 1 / sum; Muls (V) normalises, and the row goes UB -> GM (MTE3) through a
// VECOUT queue. ReduceSum adds in 64-element repeats, so the sum may differ from the cpu builtin's in the
// last bits. A row lives in UB whole: cols past kMaxCols fail the launch. A row is read whole before it is
// written, so y may alias x.
// Split: whole rows: x, y "all". Compile-time: SK_ROWS, SK_COLS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "softmax_f32 (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kMaxCols = 8192;  // 2 x rows and 2 y rows of f32, and the reductions' scratch
static_assert(4 * kMaxCols * sizeof(float) + 1024 <= kSkUbBytes, "softmax_f32: the rows fit the UB");

class SkSoftmaxF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR x, GM_ADDR y) {
    if (static_cast<int64_t>(SK_COLS) > kMaxCols) {
      if (GetBlockIdx() == 0) SkReportError("sk_softmax_f32: cols past 8192 (a row lives in one vector core's UB)");
      return false;
    }
    int64_t rb, re;
    SkBlockRange(SK_ROWS, &rb, &re);
    rows_ = static_cast<uint32_t>(re - rb);
    if (rows_ == 0 || kCols == 0) return false;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + rb * kCols, rows_ * kCols);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + rb * kCols, rows_ * kCols);
    pipe_.InitBuffer(inX_, kBufferNum, kCols * sizeof(float));
    pipe_.InitBuffer(outY_, kBufferNum, kCols * sizeof(float));
    pipe_.InitBuffer(work_, SkAlignElems<float>((kCols + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    pipe_.InitBuffer(red_, 32);
    return true;
  }
  __aicore__ inline void Process() {
    for (uint32_t r = 0; r < rows_; ++r) {
      CopyIn(r);
      Compute();
      CopyOut(r);
    }
  }

 private:
  static constexpr uint32_t kCols = static_cast<uint32_t>(SK_COLS);

  // The scalar unit reads the reduction's result (V_S); the next reduction may then overwrite it (S_V).
  __aicore__ inline float ReadBack(const LocalTensor<float>& t) {
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    const float v = t.GetValue(0);
    SetFlag<HardEvent::S_V>(EVENT_ID0);
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
    return v;
  }
  __aicore__ inline void CopyIn(uint32_t r) {
    LocalTensor<float> x = inX_.AllocTensor<float>();
    SkCopyIn(x, xGm_[r * kCols], kCols);
    inX_.EnQue(x);
  }
  __aicore__ inline void Compute() {
    LocalTensor<float> x = inX_.DeQue<float>();
    LocalTensor<float> y = outY_.AllocTensor<float>();
    LocalTensor<float> red = red_.Get<float>();
    LocalTensor<float> work = work_.Get<float>();
    ReduceMax(red, x, work, kCols);
    const float m = ReadBack(red);
    Adds(y, x, -m, kCols);  // x - max
    Exp(y, y, kCols);
    ReduceSum(red, y, work, kCols);
    const float inv = 1.0f / ReadBack(red);
    Muls(y, y, inv, kCols);
    outY_.EnQue(y);
    inX_.FreeTensor(x);
  }
  __aicore__ inline void CopyOut(uint32_t r) {
    LocalTensor<float> y = outY_.DeQue<float>();
    SkCopyOut(yGm_[r * kCols], y, kCols);
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inX_;
  TQue<QuePosition::VECOUT, kBufferNum> outY_;
  TBuf<QuePosition::VECCALC> work_, red_;
  GlobalTensor<float> xGm_, yGm_;
  uint32_t rows_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_softmax_f32(GM_ADDR x, GM_ADDR y) {
  SkSoftmaxF32 op;
  if (op.Init(x, y)) op.Process();
}
