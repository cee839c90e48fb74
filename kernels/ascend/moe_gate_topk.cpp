// moe_gate_topk_f32: per token row, the top `topk` of `experts` logits (ties: lower index) and their
// weights (softmax, or logistic sigmoid when sigmoid != 0; normalize != 0 rescales them to sum 1), in the
// Ascend C vector style (docs/ASCEND.md "Writing a sub-kernel"). Tiles of whole rows go GM -> UB (MTE2; one
// strided DataCopyPad, a burst per row) through a double-buffered VECIN queue. Per row the vector unit does
// what is elementwise or a reduction: ReduceMax (V) gives the max, which the scalar unit reads (V_S);
// softmax: Adds(-max), Exp, ReduceSum (V) the exponentials and their sum; sigmoid: Muls(-1), Exp, Adds(1),
// Reciprocal (V) the scores (the cpu builtin's exp(v - max), sum, and 1 / (1 + exp(-v)), the same bits).
// After V_S the scalar unit does the tiny top-k selection on the logits (GetValue; the vector unit's DeQue
// ordered it after the copy-in, and V_S carries that) and writes the indices and weights into UB tiles;
// S_V before the next row's vector instructions overwrite what it read, S_MTE3 before the tiles go
// UB -> GM (MTE3, DataCopyPad), MTE3_S before the scalar unit writes them again. ReduceSum adds in
// 64-element repeats: the softmax sum is the cpu builtin's (e = 0..experts-1 in order) up to 64 experts and
// may differ in the last bits past that. A row lives in UB whole: experts past kMaxExperts fail the launch.
// logits [rows, experts], idx [rows, topk] i32, weights [rows, topk]. Split: whole rows: all "all".
// Compile-time: SK_ROWS, SK_EXPERTS, SK_TOPK, SK_SIGMOID, SK_NORMALIZE (1 <= topk <= experts, else the
// launch fails).
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_EXPERTS) || !defined(SK_TOPK) || !defined(SK_SIGMOID) || !defined(SK_NORMALIZE)
#error "moe_gate_topk_f32 (ascend): rows, experts, topk, sigmoid, normalize are compile-time (-DSK_<NAME>)"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTile = 4096;        // logits per tile (whole rows)
constexpr uint32_t kMaxExperts = kTile;  // a row in one tile
// 2 logits tiles, the scores of a row, the index and weight tiles (at most a tile each), the scratch.
static_assert(5 * kTile * sizeof(float) + 1024 <= kSkUbBytes, "moe_gate_topk_f32: the tiles fit the UB");

class SkMoeGateTopkF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR logits, GM_ADDR idx, GM_ADDR weights) {
    if (kTopk < 1 || kTopk > kExperts || kExperts > kMaxExperts) {
      if (GetBlockIdx() == 0) {
        SkReportError(kExperts > kMaxExperts ? "sk_moe_gate_topk_f32: experts past 4096 (a row lives in one vector core's UB)"
                                             : "sk_moe_gate_topk_f32: need 1 <= topk <= experts");
      }
      return false;
    }
    int64_t rb, re;
    SkBlockRange(SK_ROWS, &rb, &re);
    rows_ = static_cast<uint32_t>(re - rb);
    if (rows_ == 0) return false;
    tileRows_ = kTile / kPitch < rows_ ? kTile / kPitch : rows_;
    lGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(logits) + rb * kExperts, rows_ * kExperts);
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(idx) + rb * kTopk, rows_ * kTopk);
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weights) + rb * kTopk, rows_ * kTopk);
    pipe_.InitBuffer(inL_, kBufferNum, tileRows_ * kPitch * sizeof(float));
    pipe_.InitBuffer(score_, kPitch * sizeof(float));
    pipe_.InitBuffer(idxOut_, tileRows_ * kTopk * sizeof(int32_t));
    pipe_.InitBuffer(wOut_, tileRows_ * kTopk * sizeof(float));
    pipe_.InitBuffer(work_, SkAlignElems<float>((kExperts + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    pipe_.InitBuffer(red_, 32);
    return true;
  }
  __aicore__ inline void Process() {
    for (uint32_t r = 0; r < rows_; r += tileRows_) {
      const uint32_t m = rows_ - r < tileRows_ ? rows_ - r : tileRows_;
      CopyIn(r, m);
      Compute(m);
      CopyOut(r, m);
    }
  }

 private:
  static constexpr uint32_t kExperts = static_cast<uint32_t>(SK_EXPERTS);
  static constexpr uint32_t kTopk = static_cast<uint32_t>(SK_TOPK);
  static constexpr uint32_t kPitch = (kExperts + 7) / 8 * 8;  // a row's floats in UB: 32-byte aligned rows

  __aicore__ inline void CopyIn(uint32_t r, uint32_t m) {
    LocalTensor<float> l = inL_.AllocTensor<float>();
    DataCopyPad(l, lGm_[r * kExperts], DataCopyExtParams(static_cast<uint16_t>(m), kExperts * sizeof(float), 0, 0, 0),
                DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    inL_.EnQue(l);
  }
  // The scalar unit reads what the vector unit wrote (and, through it, what MTE2 copied in).
  __aicore__ inline void VectorToScalar() {
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
  }
  __aicore__ inline void Compute(uint32_t m) {
    LocalTensor<float> tile = inL_.DeQue<float>();
    LocalTensor<float> t = score_.Get<float>(), red = red_.Get<float>(), work = work_.Get<float>();
    LocalTensor<int32_t> io = idxOut_.Get<int32_t>();
    LocalTensor<float> wo = wOut_.Get<float>();
    for (uint32_t i = 0; i < m; ++i) {
      const LocalTensor<float> l = tile[i * kPitch];
      ReduceMax(red, l, work, kExperts);
      VectorToScalar();
      const float mx = red.GetValue(0);  // the cpu builtin's l[idx[0]]: the first largest logit
      SetFlag<HardEvent::S_V>(EVENT_ID0);  // ReduceSum below overwrites what the scalar unit read
      WaitFlag<HardEvent::S_V>(EVENT_ID0);
      if (!(SK_SIGMOID)) {
        Adds(t, l, -mx, kExperts);  // l - max
        Exp(t, t, kExperts);
        ReduceSum(red, t, work, kExperts);
      } else {
        Muls(t, l, -1.0f, kExperts);
        Exp(t, t, kExperts);
        Adds(t, t, 1.0f, kExperts);
        Reciprocal(t, t, kExperts);
      }
      VectorToScalar();
      PickTopK(l, t, (SK_SIGMOID) ? 1.0f : red.GetValue(0), io[i * kTopk], wo[i * kTopk]);
      SetFlag<HardEvent::S_V>(EVENT_ID0);  // the next row's vector instructions overwrite t and red
      WaitFlag<HardEvent::S_V>(EVENT_ID0);
    }
    inL_.FreeTensor(tile);
  }
  // The scalar unit's part of one row: the top k of l (ties: the lower index; an expert is taken once) into
  // io, their scores t / denom into wo, normalized to sum 1 when asked.
  __aicore__ inline void PickTopK(const LocalTensor<float>& l, const LocalTensor<float>& t, float denom,
                                const LocalTensor<int32_t>& io, const LocalTensor<float>& wo) {
    for (uint32_t j = 0; j < kTopk; ++j) {
      int64_t best = -1;
      float bestValue = 0.0f;
      for (uint32_t e = 0; e < kExperts; ++e) {
        bool taken = false;
        for (uint32_t p = 0; p < j && !taken; ++p) taken = io.GetValue(p) == static_cast<int32_t>(e);
        if (taken) continue;
        const float v = l.GetValue(e);
        if (best < 0 || v > bestValue) {
          best = e;
          bestValue = v;
        }
      }
      io.SetValue(j, static_cast<int32_t>(best));
    }
    float sel = 0.0f;
    for (uint32_t j = 0; j < kTopk; ++j) {
      const float w = t.GetValue(static_cast<uint32_t>(io.GetValue(j))) / denom;
      wo.SetValue(j, w);
      sel += w;
    }
    if ((SK_NORMALIZE) && sel > 0.0f)
      for (uint32_t j = 0; j < kTopk; ++j) wo.SetValue(j, wo.GetValue(j) / sel);
  }
  __aicore__ inline void CopyOut(uint32_t r, uint32_t m) {
    SetFlag<HardEvent::S_MTE3>(EVENT_ID0);  // MTE3 copies out what the scalar unit wrote
    WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
    SkCopyOut(iGm_[r * kTopk], idxOut_.Get<int32_t>(), m * kTopk);
    SkCopyOut(wGm_[r * kTopk], wOut_.Get<float>(), m * kTopk);
    SetFlag<HardEvent::MTE3_S>(EVENT_ID0);  // the scalar unit writes the next tile's over what MTE3 read
    WaitFlag<HardEvent::MTE3_S>(EVENT_ID0);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inL_;
  TBuf<QuePosition::VECCALC> score_, idxOut_, wOut_, work_, red_;
  GlobalTensor<float> lGm_, wGm_;
  GlobalTensor<int32_t> iGm_;
  uint32_t rows_ = 0, tileRows_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_moe_gate_topk_f32(GM_ADDR logits, GM_ADDR idx, GM_ADDR weights) {
  SkMoeGateTopkF32 op;
  if (op.Init(logits, idx, weights)) op.Process();
}
