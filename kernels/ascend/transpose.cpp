// transpose_f32: y[c, r] = x[r, c]; x [rows, cols], y [cols, rows]. In the Ascend C vector style
// (docs/ASCEND.md "Writing a sub-kernel"): x moves GM -> UB (MTE2) in chunks of whole rows (up to
// kTileBytes) through a double-buffered VECIN queue; for each y row c the block holds, Gather (V) picks
// x[r, c] for the chunk's rows (byte offsets r * cols * 4 from base c * 4, written once by the scalar
// unit), and the piece of y row c goes UB -> GM (MTE3) through a VECOUT queue.
// Split: SkBlockRange(rows * cols) over y's elements: y "block"; x "all".
// Compile-time: SK_ROWS, SK_COLS. cols past kTileBytes / 4 (one x row per chunk) fails the launch.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "transpose_f32 (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTileBytes = 64 * 1024;  // x rows per copy-in buffer (2 of them)
constexpr uint32_t kMaxCols = kTileBytes / sizeof(float);

class SkTransposeF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR x, GM_ADDR y) {
    if (kCols > kMaxCols) {
      if (GetBlockIdx() == 0) SkReportError("sk_transpose_f32: cols past 16384 (an x row per UB chunk)");
      return false;
    }
    SkBlockRange(kRows * kCols, &begin_, &end_);
    if (end_ <= begin_) return false;
    // x rows the block reads: those of its y elements' r, over every y row it touches.
    const int64_t c0 = begin_ / kRows, c1 = (end_ - 1) / kRows;
    rLo_ = c0 == c1 ? begin_ - c0 * kRows : 0;
    rHi_ = c0 == c1 ? end_ - c0 * kRows : kRows;
    chunk_ = static_cast<uint32_t>(kMaxCols / kCols);
    if (chunk_ > static_cast<uint32_t>(rHi_ - rLo_)) chunk_ = static_cast<uint32_t>(rHi_ - rLo_);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), static_cast<uint64_t>(kRows * kCols));
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), static_cast<uint64_t>(kRows * kCols));
    pipe_.InitBuffer(inX_, kBufferNum, chunk_ * kCols * sizeof(float));
    pipe_.InitBuffer(outY_, kBufferNum, chunk_ * sizeof(float));
    pipe_.InitBuffer(offsets_, chunk_ * sizeof(uint32_t));
    return true;
  }
  __aicore__ inline void Process() {
    LocalTensor<uint32_t> off = offsets_.Get<uint32_t>();
    for (uint32_t k = 0; k < chunk_; ++k) off.SetValue(k, k * static_cast<uint32_t>(kCols * sizeof(float)));
    SetFlag<HardEvent::S_V>(EVENT_ID0);  // the vector unit reads the offsets the scalar unit wrote
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
    for (int64_t r0 = rLo_; r0 < rHi_; r0 += chunk_) {
      const int64_t r1 = rHi_ - r0 < chunk_ ? rHi_ : r0 + chunk_;
      LocalTensor<float> x = inX_.AllocTensor<float>();
      SkCopyIn(x, xGm_[r0 * kCols], static_cast<uint32_t>((r1 - r0) * kCols));
      inX_.EnQue(x);
      x = inX_.DeQue<float>();
      // y[c, r] for r in [r0, r1) and y index in [begin_, end_).
      const int64_t cFirst = begin_ / kRows, cLast = (end_ - 1) / kRows;
      for (int64_t c = cFirst; c <= cLast; ++c) {
        const int64_t lo = c * kRows + r0 > begin_ ? r0 : begin_ - c * kRows;
        const int64_t hi = c * kRows + r1 < end_ ? r1 : end_ - c * kRows;
        if (hi <= lo) continue;
        LocalTensor<float> y = outY_.AllocTensor<float>();
        Gather(y, x, off, static_cast<uint32_t>(((lo - r0) * kCols + c) * sizeof(float)), static_cast<uint32_t>(hi - lo));
        outY_.EnQue(y);
        y = outY_.DeQue<float>();
        SkCopyOut(yGm_[c * kRows + lo], y, static_cast<uint32_t>(hi - lo));
        outY_.FreeTensor(y);
      }
      inX_.FreeTensor(x);
    }
  }

 private:
  static constexpr int64_t kRows = SK_ROWS, kCols = SK_COLS;

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inX_;
  TQue<QuePosition::VECOUT, kBufferNum> outY_;
  TBuf<QuePosition::VECCALC> offsets_;
  GlobalTensor<float> xGm_, yGm_;
  int64_t begin_ = 0, end_ = 0, rLo_ = 0, rHi_ = 0;
  uint32_t chunk_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_transpose_f32(GM_ADDR x, GM_ADDR y) {
  SkTransposeF32 op;
  if (op.Init(x, y)) op.Process();
}
