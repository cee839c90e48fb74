// attn_weighted_sum_f32 (decode attention, part 2): o[h, d] = sum_t p[h, t] * v[t, h / (heads / kv_heads), d]
// p [heads, seq], v [seq, kv_heads, dim], o [heads, dim]. In the Ascend C vector style (docs/ASCEND.md
// "Writing a sub-kernel"): the block's elements of o, head by head (a block may start or end inside a
// head: a segment [d0, d1) of it); per segment the accumulator starts at 0 (Duplicate), the segment's v
// rows of up to kChunk positions go GM -> UB (MTE2) in one strided DataCopyPad (one burst per position,
// each 32-byte aligned in UB) through a double-buffered VECIN queue, and each row is scaled by p[h, t]
// (read by the scalar unit) with Muls and added with Add (V), t in order (the cpu builtin's
// acc += p * v, the same bits); the segment goes UB -> GM (MTE3) through a VECOUT queue.
// Split: SkBlockRange(heads * dim): o "block"; p, v "all". Compile-time: SK_HEADS, SK_KV_HEADS, SK_SEQ,
// SK_DIM. kv_heads not dividing heads, or dim past kMaxDim, fails the launch.
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_KV_HEADS) || !defined(SK_SEQ) || !defined(SK_DIM)
#error "attn_weighted_sum_f32 (ascend): heads, kv_heads, seq, dim are compile-time (-DSK_<NAME>)"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kChunkBytes = 64 * 1024;  // v rows per copy-in buffer (2 of them)
constexpr uint32_t kMaxDim = 8192;           // a row fits a buffer; the accumulator and the product beside
static_assert(2 * kChunkBytes + 2 * kMaxDim * sizeof(float) <= kSkUbBytes, "attn_weighted_sum_f32: the tiles fit");

class SkAttnWeightedSumF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR p, GM_ADDR v, GM_ADDR o) {
    if (kKvHeads < 1 || kHeads % kKvHeads != 0) {
      if (GetBlockIdx() == 0) SkReportError("sk_attn_weighted_sum_f32: kv_heads must divide heads");
      return false;
    }
    if (static_cast<int64_t>(SK_DIM) > kMaxDim) {
      if (GetBlockIdx() == 0) SkReportError("sk_attn_weighted_sum_f32: dim past 8192");
      return false;
    }
    int64_t eb, ee;
    SkBlockRange(static_cast<int64_t>(kHeads) * kDim, &eb, &ee);
    if (ee <= eb || kSeq == 0) {
      if (ee > eb) zeroOnly_ = true;  // no positions: o = 0, as the cpu builtin
      else return false;
    }
    begin_ = eb;
    end_ = ee;
    pGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(p), static_cast<uint64_t>(kHeads) * kSeq);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(v), static_cast<uint64_t>(kSeq) * kKvHeads * kDim);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(o) + eb, static_cast<uint64_t>(ee - eb));
    rowElems_ = SkAlignElems<float>(kDim);
    chunk_ = kChunkBytes / (rowElems_ * sizeof(float));
    if (chunk_ > kSeq) chunk_ = kSeq;
    if (!zeroOnly_) pipe_.InitBuffer(inV_, kBufferNum, chunk_ * rowElems_ * sizeof(float));
    pipe_.InitBuffer(outO_, 1, rowElems_ * sizeof(float));
    pipe_.InitBuffer(prod_, rowElems_ * sizeof(float));
    return true;
  }
  __aicore__ inline void Process() {
    for (int64_t e = begin_; e < end_;) {
      const int64_t h = e / kDim, d0 = e - h * kDim;
      const int64_t d1 = end_ - h * kDim < kDim ? end_ - h * kDim : kDim;
      const uint32_t n = static_cast<uint32_t>(d1 - d0);
      LocalTensor<float> acc = outO_.AllocTensor<float>();
      Duplicate(acc, 0.0f, n);
      const uint32_t g = static_cast<uint32_t>(h) / (kHeads / kKvHeads);
      for (uint32_t t0 = 0; !zeroOnly_ && t0 < kSeq; t0 += chunk_) {
        const uint32_t cnt = kSeq - t0 < chunk_ ? kSeq - t0 : chunk_;
        CopyIn(g, static_cast<uint32_t>(d0), n, t0, cnt);
        Accumulate(acc, static_cast<uint32_t>(h), n, t0, cnt);
      }
      outO_.EnQue(acc);
      CopyOut(e - begin_, n);
      e += n;
    }
  }

 private:
  static constexpr uint32_t kHeads = static_cast<uint32_t>(SK_HEADS), kKvHeads = static_cast<uint32_t>(SK_KV_HEADS);
  static constexpr uint32_t kSeq = static_cast<uint32_t>(SK_SEQ), kDim = static_cast<uint32_t>(SK_DIM);

  // v[t0 .. t0 + cnt, g, d0 .. d0 + n): cnt bursts of n floats, kv_heads * dim floats apart in GM.
  __aicore__ inline void CopyIn(uint32_t g, uint32_t d0, uint32_t n, uint32_t t0, uint32_t cnt) {
    LocalTensor<float> v = inV_.AllocTensor<float>();
    const uint64_t at = (static_cast<uint64_t>(t0) * kKvHeads + g) * kDim + d0;
    DataCopyPad(v, vGm_[at],
                DataCopyExtParams(static_cast<uint16_t>(cnt), n * sizeof(float), (kKvHeads * kDim - n) * sizeof(float), 0, 0),
                DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    inV_.EnQue(v);
  }
  __aicore__ inline void Accumulate(const LocalTensor<float>& acc, uint32_t h, uint32_t n, uint32_t t0, uint32_t cnt) {
    LocalTensor<float> v = inV_.DeQue<float>();
    LocalTensor<float> prod = prod_.Get<float>();
    const uint32_t pitch = SkAlignElems<float>(n);  // each burst lands 32-byte aligned
    for (uint32_t j = 0; j < cnt; ++j) {
      Muls(prod, v[j * pitch], pGm_.GetValue(static_cast<uint64_t>(h) * kSeq + t0 + j), n);
      Add(acc, acc, prod, n);
    }
    inV_.FreeTensor(v);
  }
  __aicore__ inline void CopyOut(int64_t at, uint32_t n) {
    LocalTensor<float> o = outO_.DeQue<float>();
    SkCopyOut(oGm_[at], o, n);
    outO_.FreeTensor(o);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inV_;
  TQue<QuePosition::VECOUT, 1> outO_;
  TBuf<QuePosition::VECCALC> prod_;
  GlobalTensor<float> pGm_, vGm_, oGm_;
  int64_t begin_ = 0, end_ = 0;
  uint32_t rowElems_ = 0, chunk_ = 0;
  bool zeroOnly_ = false;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_attn_weighted_sum_f32(GM_ADDR p, GM_ADDR v, GM_ADDR o) {
  SkAttnWeightedSumF32 op;
  if (op.Init(p, v, o)) op.Process();
}
