// concat_f32: y[r, 0:ca] = a[r, :], y[r, ca:ca+cb] = b[r, :]; a [rows, ca],
// b [rows, cb], y [rows, ca + cb] (rows = 1: a flat concat). In the Ascend C vector style (docs/ASCEND.md
// "Writing a sub-kernel"): pure data movement through one double-buffered TQueBind<VECIN, VECOUT>, no
// vector instruction. The block's elements of y are runs of a's and b's columns: whole rows move as
// strided DataCopyPads (GM -> UB (MTE2): one burst per row of a (or b), each 32-byte aligned in UB;
// UB -> GM (MTE3): the same bursts with the other input's columns skipped in y), as many rows per
// transfer as fill a kTileBytes buffer; a row the block holds only part of, or one wider than a buffer,
// moves in contiguous pieces.
// Split: SkBlockRange(rows * (ca + cb)) over y's elements: y "block"; a, b "all".
// Compile-time: SK_ROWS, SK_CA, SK_CB.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_CA) || !defined(SK_CB)
#error "concat_f32 (ascend): rows, ca, cb are compile-time: -DSK_ROWS -DSK_CA -DSK_CB"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTileBytes = 64 * 1024;  // per buffer: 2 of them
constexpr uint32_t kTile = kTileBytes / sizeof(float);

class SkConcatF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
    SkBlockRange(static_cast<int64_t>(SK_ROWS) * kW, &begin_, &end_);
    if (end_ <= begin_) return false;
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(a), static_cast<uint64_t>(SK_ROWS) * kCa);
    bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(b), static_cast<uint64_t>(SK_ROWS) * kCb);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), static_cast<uint64_t>(SK_ROWS) * kW);
    pipe_.InitBuffer(queue_, kBufferNum, kTileBytes);
    return true;
  }
  __aicore__ inline void Process() {
    int64_t e = begin_;
    while (e < end_) {
      const int64_t r = e / kW, c0 = e - r * kW;
      if (c0 == 0 && end_ - e >= kW) {  // whole rows [r, r + n)
        const int64_t n = (end_ - e) / kW;
        if (kCa > 0) MoveRows(aGm_[r * kCa], kCa, yGm_[r * kW], kW, kCa, n);
        if (kCb > 0) MoveRows(bGm_[r * kCb], kCb, yGm_[r * kW + kCa], kW, kCb, n);
        e += n * kW;
        continue;
      }
      const int64_t c1 = end_ - r * kW < kW ? end_ - r * kW : kW;  // part of row r: columns [c0, c1)
      if (c0 < kCa) {
        const int64_t to = c1 < kCa ? c1 : kCa;
        MoveRows(aGm_[r * kCa + c0], kCa, yGm_[r * kW + c0], kW, to - c0, 1);
      }
      if (c1 > kCa) {
        const int64_t from = c0 > kCa ? c0 : kCa;
        MoveRows(bGm_[r * kCb + (from - kCa)], kCb, yGm_[r * kW + from], kW, c1 - from, 1);
      }
      e = r * kW + c1;
    }
  }

 private:
  static constexpr int64_t kCa = SK_CA, kCb = SK_CB, kW = kCa + kCb;

  // rows x len floats from src (rows srcPitch apart) to dst (rows dstPitch apart).
  __aicore__ inline void MoveRows(const GlobalTensor<float>& src, int64_t srcPitch, const GlobalTensor<float>& dst,
                                  int64_t dstPitch, int64_t len, int64_t rows) {
    const uint32_t rowElems = SkAlignElems<float>(static_cast<uint32_t>(len < kTile ? len : kTile));
    if (len <= kTile) {  // rows per transfer: as many as fill a buffer
      const int64_t per = kTile / rowElems < 4095 ? kTile / rowElems : 4095;
      for (int64_t r = 0; r < rows; r += per) {
        const int64_t n = rows - r < per ? rows - r : per;
        Burst(src[r * srcPitch], dst[r * dstPitch], static_cast<uint16_t>(n), static_cast<uint32_t>(len),
              static_cast<uint32_t>(srcPitch - len), static_cast<uint32_t>(dstPitch - len));
      }
      return;
    }
    for (int64_t r = 0; r < rows; ++r)  // a row wider than a buffer: in pieces
      for (int64_t c = 0; c < len; c += kTile)
        Burst(src[r * srcPitch + c], dst[r * dstPitch + c], 1, static_cast<uint32_t>(len - c < kTile ? len - c : kTile), 0, 0);
  }
  // n bursts of len floats, srcGap / dstGap floats skipped between them in GM; GM -> UB -> GM.
  __aicore__ inline void Burst(const GlobalTensor<float>& src, const GlobalTensor<float>& dst, uint16_t n, uint32_t len,
                               uint32_t srcGap, uint32_t dstGap) {
    LocalTensor<float> t = queue_.AllocTensor<float>();
    DataCopyPad(t, src, DataCopyExtParams(n, len * sizeof(float), srcGap * sizeof(float), 0, 0),
                DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    queue_.EnQue(t);
    t = queue_.DeQue<float>();
    DataCopyPad(dst, t, DataCopyExtParams(n, len * sizeof(float), 0, dstGap * sizeof(float), 0));
    queue_.FreeTensor(t);
  }

  TPipe pipe_;
  TQueBind<QuePosition::VECIN, QuePosition::VECOUT, kBufferNum> queue_;
  GlobalTensor<float> aGm_, bGm_, yGm_;
  int64_t begin_ = 0, end_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_concat_f32(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
  SkConcatF32 op;
  if (op.Init(a, b, y)) op.Process();
}
