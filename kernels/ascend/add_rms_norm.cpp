// add_rms_norm_f32: sum = x + residual; y = sum / sqrt(mean(sum^2) + eps) * w, rows x cols, in the Ascend C
// vector style (docs/ASCEND.md "Writing a sub-kernel"): w is copied into UB once per block; each row of the
// block: x and residual GM -> UB (MTE2) through VECIN queues, Add (V) gives the sum row, Mul + ReduceSum (V)
// its sum of squares, which the scalar unit reads (V_S) to compute 1 / sqrt(ss / cols + eps), Muls + Mul
// (V) give y (the cpu builtin's sum * inv * w, the same bits), and sum and y go UB -> GM (MTE3) through
// VECOUT queues. ReduceSum adds in 64-element repeats, so the sum of squares may differ from the cpu
// builtin's in the last bits. A row lives in UB whole (double-buffered up to kMaxColsDouble columns,
// single-buffered up to kMaxCols); more fails the launch. sum may alias x or residual: a row is read whole
// before it is written.
// Split: whole rows: every buffer "all". Compile-time: SK_ROWS, SK_COLS, SK_EPS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS) || !defined(SK_EPS)
#error "add_rms_norm_f32 (ascend): rows, cols, eps are compile-time: -DSK_ROWS -DSK_COLS -DSK_EPS"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
// w and one row each of x, residual, sum, y per buffer, and the reduction's scratch.
constexpr uint32_t kMaxColsDouble = 5120, kMaxCols = 8192;
static_assert(9 * kMaxColsDouble * sizeof(float) + 1024 <= kSkUbBytes, "add_rms_norm_f32: double-buffered rows fit");
static_assert(5 * kMaxCols * sizeof(float) + 1024 <= kSkUbBytes, "add_rms_norm_f32: single-buffered rows fit");

class SkAddRmsNormF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR x, GM_ADDR residual, GM_ADDR w, GM_ADDR sum, GM_ADDR y) {
    if (static_cast<int64_t>(SK_COLS) > kMaxCols) {
      if (GetBlockIdx() == 0) SkReportError("sk_add_rms_norm_f32: cols past 8192 (a row lives in one vector core's UB)");
      return false;
    }
    int64_t rb, re;
    SkBlockRange(SK_ROWS, &rb, &re);
    rows_ = static_cast<uint32_t>(re - rb);
    if (rows_ == 0 || kCols == 0) return false;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + rb * kCols, rows_ * kCols);
    rGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(residual) + rb * kCols, rows_ * kCols);
    sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(sum) + rb * kCols, rows_ * kCols);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + rb * kCols, rows_ * kCols);
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w), kCols);
    const uint8_t bufs = kCols <= kMaxColsDouble ? kBufferNum : 1;
    pipe_.InitBuffer(inW_, 1, kCols * sizeof(float));
    pipe_.InitBuffer(inX_, bufs, kCols * sizeof(float));
    pipe_.InitBuffer(inR_, bufs, kCols * sizeof(float));
    pipe_.InitBuffer(outS_, bufs, kCols * sizeof(float));
    pipe_.InitBuffer(outY_, bufs, kCols * sizeof(float));
    pipe_.InitBuffer(work_, SkAlignElems<float>((kCols + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    pipe_.InitBuffer(sq_, 32);
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
    LocalTensor<float> res = inR_.AllocTensor<float>();
    SkCopyIn(x, xGm_[r * kCols], kCols);
    SkCopyIn(res, rGm_[r * kCols], kCols);
    inX_.EnQue(x);
    inR_.EnQue(res);
  }
  __aicore__ inline void Compute(const LocalTensor<float>& w) {
    LocalTensor<float> x = inX_.DeQue<float>();
    LocalTensor<float> res = inR_.DeQue<float>();
    LocalTensor<float> s = outS_.AllocTensor<float>();
    LocalTensor<float> y = outY_.AllocTensor<float>();
    LocalTensor<float> ss = sq_.Get<float>();
    Add(s, x, res, kCols);
    Mul(y, s, s, kCols);
    ReduceSum(ss, y, work_.Get<float>(), kCols);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    const float total = ss.GetValue(0);
    SetFlag<HardEvent::S_V>(EVENT_ID0);  // the next row's ReduceSum overwrites what the scalar unit read
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
    const float inv = 1.0f / __builtin_sqrtf(total / static_cast<float>(kCols) + static_cast<float>(SK_EPS));
    Muls(y, s, inv, kCols);
    Mul(y, y, w, kCols);
    outS_.EnQue(s);
    outY_.EnQue(y);
    inX_.FreeTensor(x);
    inR_.FreeTensor(res);
  }
  __aicore__ inline void CopyOut(uint32_t r) {
    LocalTensor<float> s = outS_.DeQue<float>();
    LocalTensor<float> y = outY_.DeQue<float>();
    SkCopyOut(sGm_[r * kCols], s, kCols);
    SkCopyOut(yGm_[r * kCols], y, kCols);
    outS_.FreeTensor(s);
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, 1> inW_;
  TQue<QuePosition::VECIN, kBufferNum> inX_, inR_;
  TQue<QuePosition::VECOUT, kBufferNum> outS_, outY_;
  TBuf<QuePosition::VECCALC> work_, sq_;
  GlobalTensor<float> xGm_, rGm_, sGm_, yGm_, wGm_;
  uint32_t rows_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_add_rms_norm_f32(GM_ADDR x, GM_ADDR residual, GM_ADDR w, GM_ADDR sum,
                                                          GM_ADDR y) {
  SkAddRmsNormF32 op;
  if (op.Init(x, residual, w, sum, y)) op.Process();
}
