// attn_scores_f32 (decode attention, part 1): s[h, t] = scale * q[h, :] . k[t, h / (heads / kv_heads), :]
// q [heads, dim], k [seq, kv_heads, dim], s [heads, seq]. In the Ascend C vector style (docs/ASCEND.md
// "Writing a sub-kernel"): the block's elements of s, head by head (a block may start or end inside a
// head: positions [t0, t1) of it); per head q[h] goes GM -> UB (MTE2) once, and the k rows of up to
// kChunk positions in one strided DataCopyPad (one burst per position, each 32-byte aligned in UB)
// through a double-buffered VECIN queue; per position Mul and ReduceSum (V) give the dot product, which
// the scalar unit collects (V_S, then S_V); Muls by scale (V) gives the chunk's scores (the cpu builtin's
// dot * scale), which go UB -> GM (MTE3) through a VECOUT queue. ReduceSum adds in 64-element repeats, so
// for dim > 64 a score may differ from the cpu builtin's in the last bits.
// Split: SkBlockRange(heads * seq): s "block"; q, k "all". Compile-time: SK_HEADS, SK_KV_HEADS, SK_SEQ,
// SK_DIM, SK_SCALE. kv_heads not dividing heads, or dim past kMaxDim, fails the launch.
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_KV_HEADS) || !defined(SK_SEQ) || !defined(SK_DIM) || !defined(SK_SCALE)
#error "attn_scores_f32 (ascend): heads, kv_heads, seq, dim, scale are compile-time (-DSK_<NAME>)"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kChunkBytes = 48 * 1024;  // k rows per copy-in buffer (2 of them)
constexpr uint32_t kMaxChunk = 4096;         // positions per chunk: their dot products and scores
constexpr uint32_t kMaxDim = 4096;           // q, the product and a k row
static_assert(2 * kChunkBytes + 2 * kMaxDim * sizeof(float) + 2 * kMaxChunk * sizeof(float) + 1024 <= kSkUbBytes,
              "attn_scores_f32: the tiles fit the UB");

class SkAttnScoresF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR q, GM_ADDR k, GM_ADDR s) {
    if (kKvHeads < 1 || kHeads % kKvHeads != 0) {
      if (GetBlockIdx() == 0) SkReportError("sk_attn_scores_f32: kv_heads must divide heads");
      return false;
    }
    if (static_cast<int64_t>(SK_DIM) > kMaxDim) {
      if (GetBlockIdx() == 0) SkReportError("sk_attn_scores_f32: dim past 4096");
      return false;
    }
    int64_t eb, ee;
    SkBlockRange(static_cast<int64_t>(kHeads) * kSeq, &eb, &ee);
    if (ee <= eb) return false;
    begin_ = eb;
    end_ = ee;
    qGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(q), static_cast<uint64_t>(kHeads) * kDim);
    kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(k), static_cast<uint64_t>(kSeq) * kKvHeads * kDim);
    sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(s) + eb, static_cast<uint64_t>(ee - eb));
    const uint32_t rowElems = SkAlignElems<float>(kDim > 0 ? kDim : 1);
    chunk_ = kChunkBytes / (rowElems * sizeof(float));
    if (chunk_ > kMaxChunk) chunk_ = kMaxChunk;
    pipe_.InitBuffer(inQ_, 1, rowElems * sizeof(float));
    pipe_.InitBuffer(inK_, kBufferNum, chunk_ * rowElems * sizeof(float));
    pipe_.InitBuffer(outS_, 1, chunk_ * sizeof(float));
    pipe_.InitBuffer(prod_, rowElems * sizeof(float));
    pipe_.InitBuffer(dots_, chunk_ * sizeof(float));
    pipe_.InitBuffer(work_, SkAlignElems<float>((rowElems + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    pipe_.InitBuffer(red_, 32);
    return true;
  }
  __aicore__ inline void Process() {
    for (int64_t e = begin_; e < end_;) {
      const uint32_t h = static_cast<uint32_t>(e / kSeq);
      const uint32_t t0 = static_cast<uint32_t>(e - static_cast<int64_t>(h) * kSeq);
      const uint32_t t1 = end_ - static_cast<int64_t>(h) * kSeq < kSeq ? static_cast<uint32_t>(end_ - static_cast<int64_t>(h) * kSeq) : kSeq;
      LocalTensor<float> qh = inQ_.AllocTensor<float>();
      SkCopyIn(qh, qGm_[static_cast<uint64_t>(h) * kDim], kDim);
      inQ_.EnQue(qh);
      qh = inQ_.DeQue<float>();
      const uint32_t g = h / (kHeads / kKvHeads);
      for (uint32_t t = t0; t < t1; t += chunk_) {
        const uint32_t cnt = t1 - t < chunk_ ? t1 - t : chunk_;
        CopyIn(g, t, cnt);
        Compute(qh, cnt);
        CopyOut(e - begin_ + (t - t0), cnt);
      }
      inQ_.FreeTensor(qh);
      e += t1 - t0;
    }
  }

 private:
  static constexpr uint32_t kHeads = static_cast<uint32_t>(SK_HEADS), kKvHeads = static_cast<uint32_t>(SK_KV_HEADS);
  static constexpr uint32_t kSeq = static_cast<uint32_t>(SK_SEQ), kDim = static_cast<uint32_t>(SK_DIM);

  // k[t .. t + cnt, g, :]: cnt bursts of dim floats, kv_heads * dim floats apart in GM.
  __aicore__ inline void CopyIn(uint32_t g, uint32_t t, uint32_t cnt) {
    LocalTensor<float> k = inK_.AllocTensor<float>();
    const uint64_t at = (static_cast<uint64_t>(t) * kKvHeads + g) * kDim;
    DataCopyPad(k, kGm_[at],
                DataCopyExtParams(static_cast<uint16_t>(cnt), kDim * sizeof(float), (kKvHeads - 1) * kDim * sizeof(float), 0, 0),
                DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    inK_.EnQue(k);
  }
  __aicore__ inline void Compute(const LocalTensor<float>& qh, uint32_t cnt) {
    LocalTensor<float> k = inK_.DeQue<float>();
    LocalTensor<float> prod = prod_.Get<float>(), dots = dots_.Get<float>(), red = red_.Get<float>();
    LocalTensor<float> work = work_.Get<float>();
    const uint32_t pitch = SkAlignElems<float>(kDim);  // each burst lands 32-byte aligned
    for (uint32_t j = 0; j < cnt; ++j) {
      Mul(prod, qh, k[j * pitch], kDim);
      ReduceSum(red, prod, work, kDim);
      SetFlag<HardEvent::V_S>(EVENT_ID0);
      WaitFlag<HardEvent::V_S>(EVENT_ID0);
      dots.SetValue(j, red.GetValue(0));
      SetFlag<HardEvent::S_V>(EVENT_ID0);  // the vector unit reads dots[j], and overwrites red next
      WaitFlag<HardEvent::S_V>(EVENT_ID0);
    }
    inK_.FreeTensor(k);
    LocalTensor<float> s = outS_.AllocTensor<float>();
    Muls(s, dots, static_cast<float>(SK_SCALE), cnt);
    outS_.EnQue(s);
  }
  __aicore__ inline void CopyOut(int64_t at, uint32_t cnt) {
    LocalTensor<float> s = outS_.DeQue<float>();
    SkCopyOut(sGm_[at], s, cnt);
    outS_.FreeTensor(s);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, 1> inQ_;
  TQue<QuePosition::VECIN, kBufferNum> inK_;
  TQue<QuePosition::VECOUT, 1> outS_;
  TBuf<QuePosition::VECCALC> prod_, dots_, work_, red_;
  GlobalTensor<float> qGm_, kGm_, sGm_;
  int64_t begin_ = 0, end_ = 0;
  uint32_t chunk_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_attn_scores_f32(GM_ADDR q, GM_ADDR k, GM_ADDR s) {
  SkAttnScoresF32 op;
  if (op.Init(q, k, s)) op.Process();
}
