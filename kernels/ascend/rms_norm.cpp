// rms_norm_f32: y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w[:], rows x cols, in the Ascend C
// vector style (docs/ASCEND.md "Writing a sub-kernel"): w is copied into UB once per block; each row of
// the block goes GM -> UB (MTE2) through a double-buffered VECIN queue, Mul + ReduceSum (V) give its sum
// of squares, the scalar unit reads it (V_S) and computes 1 / sqrt(ss / cols + eps), Muls + Mul (V) scale
// the row (the cpu builtin's x * inv * w, the same bits), and it goes UB -> GM (MTE3) through a VECOUT
// queue. ReduceSum adds in 64-element repeats, so the sum of squares may differ from the cpu builtin's in
// the last bits. A row lives in UB whole: cols past kMaxCols fail the launch.
// Split: whole rows SkBlockRange(rows): x, y, w "all". Compile-time: SK_ROWS, SK_COLS, SK_EPS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS) || !defined(SK_EPS)
#error "rms_norm_f32 (ascend): rows, cols, eps are compile-time: -DSK_ROWS -DSK_COLS -DSK_EPS"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
// w, 2 x rows, 2 y rows (y also holds the squares): 5 rows of f32 and the reduction's scratch.
constexpr uint32_t kMaxCols = 8192;
static_assert(5 * kMaxCols * sizeof(float) + 1024 <= kSkUbBytes, "rms_norm_f32: the tiles fit the UB");

class SkRmsNormF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
    if (static_cast<int64_t>(SK_COLS) > kMaxCols) {
      if (GetBlockIdx() == 0) SkReportError("sk_rms_norm_f32: cols past 8192 (a row lives in one vector core's UB)");
      return false;
    }
    int64_t rb, re;
    SkBlockRange(SK_ROWS, &rb, &re);
    rows_ = static_cast<uint32_t>(re - rb);
    if (rows_ == 0 || kCols == 0) return false;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + rb * kCols, rows_ * kCols);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + rb * kCols, rows_ * kCols);
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w), kCols);
    pipe_.InitBuffer(inW_, 1, kCols * sizeof(float));
    pipe_.InitBuffer(inX_, kBufferNum, kCols * sizeof(float));
    pipe_.InitBuffer(outY_, kBufferNum, kCols * sizeof(float));
    pipe_.InitBuffer(work_, SkAlignElems<float>((kCols + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    pipe_.InitBuffer(sum_, 32);
    return true;
  }
  __aicore__ inline void Process() {
    LocalTensor<float> w = inW_.AllocTensor<float>();
    SkCopyIn(w, wGm_, kCols);
    inW_.EnQue(w);
    w = inW_.DeQue<float>();
    for (uint32_t r = 0; r < rows_; ++r) {
      CopyIn(r);
      Compute(w);
      CopyOut(r);
    }
    inW_.FreeTensor(w);
  }

 private:
  static constexpr uint32_t kCols = static_cast<uint32_t>(SK_COLS);

  __aicore__ inline void CopyIn(uint32_t r) {
    LocalTensor<float> x = inX_.AllocTensor<float>();
    SkCopyIn(x, xGm_[r * kCols], kCols);
    inX_.EnQue(x);
  }
  __aicore__ inline void Compute(const LocalTensor<float>& w) {
    LocalTensor<float> x = inX_.DeQue<float>();
    LocalTensor<float> y = outY_.AllocTensor<float>();
    LocalTensor<float> s = sum_.Get<float>();
    Mul(y, x, x, kCols);
    ReduceSum(s, y, work_.Get<float>(), kCols);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    const float ss = s.GetValue(0);
    SetFlag<HardEvent::S_V>(EVENT_ID0);  // the next row's ReduceSum overwrites what the scalar unit read
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
    const float inv = 1.0f / __builtin_sqrtf(ss / static_cast<float>(kCols) + static_cast<float>(SK_EPS));
    Muls(y, x, inv, kCols);
    Mul(y, y, w, kCols);
    outY_.EnQue(y);
    inX_.FreeTensor(x);
  }
  __aicore__ inline void CopyOut(uint32_t r) {
    LocalTensor<float> y = outY_.DeQue<float>();
    SkCopyOut(yGm_[r * kCols], y, kCols);
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, 1> inW_;
  TQue<QuePosition::VECIN, kBufferNum> inX_;
  TQue<QuePosition::VECOUT, kBufferNum> outY_;
  TBuf<QuePosition::VECCALC> work_, sum_;
  GlobalTensor<float> xGm_, yGm_, wGm_;
  uint32_t rows_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_rms_norm_f32(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
  SkRmsNormF32 op;
  if (op.Init(x, w, y)) op.Process();
}
