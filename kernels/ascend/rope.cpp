// rope_f32: rotary embedding of one token, x/y [heads, dim] (y may alias x); pairs (x[2i], x[2i+1]),
// angle pos * theta^(-2i/dim), in the Ascend C vector style (docs/ASCEND.md "Writing a sub-kernel").
// The scalar unit computes the angles (pow, cos, sin in double, as the cpu builtin) and writes, for one
// tile of whole heads, the tables cos[k] = c_i and sin[k] = -s_i (k = 2i) / +s_i (k = 2i + 1), and the
// Gather offsets that swap each pair (S_V before the vector unit reads them). Each tile of the block's
// heads then goes GM -> UB (MTE2) through a double-buffered VECIN queue; Gather (V) swaps the pairs, Mul,
// Mul, Add (V) give y[2i] = a*c + b*(-s) = a*c - b*s and y[2i+1] = b*c + a*s (the cpu builtin's
// a*c - b*s and a*s + b*c, the same bits), and the tile goes UB -> GM (MTE3) through a VECOUT queue. A
// tile is read whole before it is written, so y may alias x.
// Split: whole heads: x, y "all". Compile-time: SK_HEADS, SK_DIM, SK_THETA; SK_POS compile-time or a
// runtime scalar (read when the tables are built). An odd dim, or one past kTile, fails the launch.
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_DIM) || !defined(SK_POS) || !defined(SK_THETA)
#error "rope_f32 (ascend): heads, dim, pos, theta are compile-time: -DSK_HEADS -DSK_DIM -DSK_POS -DSK_THETA"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
// Elements per tile: 2 x, 2 y, the swapped pairs, cos, sin and the offsets: 8 x 16 KiB of the 192 KiB UB.
constexpr uint32_t kTile = 4096;
static_assert(8 * kTile * sizeof(float) <= kSkUbBytes, "rope_f32: the tiles fit the UB");

class SkRopeF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR x, GM_ADDR y) {
    if (kDim % 2 != 0 || static_cast<int64_t>(SK_DIM) > kTile) {
      if (GetBlockIdx() == 0) {
        SkReportError(kDim % 2 != 0 ? "sk_rope_f32: dim must be even" : "sk_rope_f32: dim past 4096 (one head per UB tile)");
      }
      return false;
    }
    int64_t hb, he;
    SkBlockRange(SK_HEADS, &hb, &he);
    heads_ = static_cast<uint32_t>(he - hb);
    if (heads_ == 0 || kDim == 0) return false;
    tileHeads_ = kTile / kDim < heads_ ? kTile / kDim : heads_;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + hb * kDim, heads_ * kDim);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + hb * kDim, heads_ * kDim);
    const uint32_t bytes = tileHeads_ * kDim * sizeof(float);
    pipe_.InitBuffer(inX_, kBufferNum, bytes);
    pipe_.InitBuffer(outY_, kBufferNum, bytes);
    pipe_.InitBuffer(swapped_, bytes);
    pipe_.InitBuffer(cos_, bytes);
    pipe_.InitBuffer(sin_, bytes);
    pipe_.InitBuffer(offsets_, bytes);
    return true;
  }
  __aicore__ inline void Process() {
    BuildTables();
    for (uint32_t h = 0; h < heads_; h += tileHeads_) {
      const uint32_t n = (heads_ - h < tileHeads_ ? heads_ - h : tileHeads_) * kDim;
      CopyIn(h, n);
      Compute(n);
      CopyOut(h, n);
    }
  }

 private:
  static constexpr uint32_t kDim = static_cast<uint32_t>(SK_DIM);

  // The angle tables and the pair-swapping offsets of one tile, on the scalar unit.
  __aicore__ inline void BuildTables() {
    LocalTensor<float> c = cos_.Get<float>(), s = sin_.Get<float>();
    LocalTensor<uint32_t> off = offsets_.Get<uint32_t>();
    const double pos = static_cast<double>(SK_POS);
    for (uint32_t i = 0; i < kDim / 2; ++i) {
      const double freq = __builtin_pow(static_cast<double>(SK_THETA), -2.0 * static_cast<double>(i) / static_cast<double>(kDim));
      const double ang = pos * freq;
      const float ci = static_cast<float>(__builtin_cos(ang)), si = static_cast<float>(__builtin_sin(ang));
      for (uint32_t h = 0; h < tileHeads_; ++h) {
        const uint32_t k = h * kDim + 2 * i;
        c.SetValue(k, ci);
        c.SetValue(k + 1, ci);
        s.SetValue(k, -si);
        s.SetValue(k + 1, si);
        off.SetValue(k, (k + 1) * sizeof(float));
        off.SetValue(k + 1, k * sizeof(float));
      }
    }
    SetFlag<HardEvent::S_V>(EVENT_ID0);  // the vector unit reads the tables the scalar unit wrote
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
  }
  __aicore__ inline void CopyIn(uint32_t h, uint32_t n) {
    LocalTensor<float> x = inX_.AllocTensor<float>();
    SkCopyIn(x, xGm_[h * kDim], n);
    inX_.EnQue(x);
  }
  __aicore__ inline void Compute(uint32_t n) {
    LocalTensor<float> x = inX_.DeQue<float>();
    LocalTensor<float> y = outY_.AllocTensor<float>();
    LocalTensor<float> t = swapped_.Get<float>();
    Gather(t, x, offsets_.Get<uint32_t>(), 0u, n);  // t[2i] = x[2i + 1], t[2i + 1] = x[2i]
    Mul(y, x, cos_.Get<float>(), n);
    Mul(t, t, sin_.Get<float>(), n);
    Add(y, y, t, n);
    outY_.EnQue(y);
    inX_.FreeTensor(x);
  }
  __aicore__ inline void CopyOut(uint32_t h, uint32_t n) {
    LocalTensor<float> y = outY_.DeQue<float>();
    SkCopyOut(yGm_[h * kDim], y, n);
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inX_;
  TQue<QuePosition::VECOUT, kBufferNum> outY_;
  TBuf<QuePosition::VECCALC> swapped_, cos_, sin_, offsets_;
  GlobalTensor<float> xGm_, yGm_;
  uint32_t heads_ = 0, tileHeads_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_rope_f32(GM_ADDR x, GM_ADDR y) {
  SkRopeF32 op;
  if (op.Init(x, y)) op.Process();
}
