// attn_decode_f32 (decode attention for one query token over cache rows 0..pos):
//   s[h, t] = scale * q[h, :] . k_cache[t, g(h), :] (t <= pos), p = softmax_t(s) (max subtracted),
//   out[h, :] = sum_t p[h, t] * v_cache[t, g(h), :],  g(h) = h / (heads / kv_heads).
// q, out [heads, dim]; caches [cap, kv_heads, dim]; rows above pos are never read.
// In the Ascend C vector style (docs/ASCEND.md "Writing a sub-kernel"), the cpu builtin's baseline order
// operation for operation (online softmax over chunks of SK_AD_CHUNK positions), so the bits agree
// (the dot products through ReduceSum: in order for dim <= 64, one 256-byte repeat). Per head of the
// block: q[h] goes GM -> UB (MTE2) once; the accumulator (dim floats) starts at 0 (Duplicate). Per chunk,
// k rows go GM -> UB in strided DataCopyPads of up to kLoadRows rows (one burst per position, 32-byte
// aligned in UB) through a double-buffered VECIN queue; Mul + ReduceSum (V) give each dot product, the
// scalar unit scales it and keeps the chunk's max (V_S / S_V); when the max grows, the scalar unit
// computes exp(m - cm) and Muls (V) rescales the accumulator; Adds(-m), Exp (V) give the chunk's
// weights, which the scalar unit adds to l in order (V_S); the v rows come in the same way and Muls + Add
// (V) accumulate weight * v[t] in t order. Muls by 1 / l (V) and the head goes UB -> GM (MTE3) through a
// VECOUT queue. Fails the launch, writing nothing, for pos outside [0, cap), kv_heads not dividing heads,
// dim outside [0, 1024].
// Split: whole heads SkBlockRange(heads): all buffers "all".
// Compile-time: SK_HEADS, SK_KV_HEADS, SK_DIM, SK_CAP, SK_POS, SK_SCALE (pos is "runtime": SK_POS may
// expand to a value read at run time, so it is used only in ordinary expressions).
#include "sk_ascend_kernel.h"
#if !defined(SK_HEADS) || !defined(SK_KV_HEADS) || !defined(SK_DIM) || !defined(SK_CAP) || !defined(SK_POS) || \
    !defined(SK_SCALE)
#error "attn_decode_f32 (ascend): heads, kv_heads, dim, cap, pos, scale are compile-time (-DSK_<NAME>)"
#endif

#define SK_AD_MAX_DIM 1024
#define SK_AD_CHUNK 128

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kLoadBytes = 32 * 1024;  // k or v rows per copy-in buffer (2 of them)
static_assert(2 * kLoadBytes + 4 * SK_AD_MAX_DIM * sizeof(float) + SK_AD_CHUNK * sizeof(float) + 1024 <= kSkUbBytes,
              "attn_decode_f32: the tiles fit the UB");

class SkAttnDecodeF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR q, GM_ADDR kCache, GM_ADDR vCache, GM_ADDR out) {
    pos_ = SK_POS;
    if (pos_ < 0 || pos_ >= static_cast<int64_t>(SK_CAP)) {
      if (GetBlockIdx() == 0) SkReportError("attn_decode_f32: pos out of range [0, cap)");
      return false;
    }
    if (kKvHeads < 1 || kHeads % kKvHeads != 0) {
      if (GetBlockIdx() == 0) SkReportError("attn_decode_f32: kv_heads must divide heads");
      return false;
    }
    if (static_cast<int64_t>(SK_DIM) < 0 || static_cast<int64_t>(SK_DIM) > SK_AD_MAX_DIM) {
      if (GetBlockIdx() == 0) SkReportError("attn_decode_f32: dim out of range [0, 1024]");
      return false;
    }
    int64_t hb, he;
    SkBlockRange(kHeads, &hb, &he);
    if (he <= hb || kDim == 0) return false;
    hb_ = static_cast<uint32_t>(hb);
    he_ = static_cast<uint32_t>(he);
    const uint64_t cacheElems = static_cast<uint64_t>(SK_CAP) * kKvHeads * kDim;
    qGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(q), static_cast<uint64_t>(kHeads) * kDim);
    kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(kCache), cacheElems);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(vCache), cacheElems);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), static_cast<uint64_t>(kHeads) * kDim);
    pitch_ = SkAlignElems<float>(kDim);
    loadRows_ = kLoadBytes / (pitch_ * sizeof(float));
    if (loadRows_ > SK_AD_CHUNK) loadRows_ = SK_AD_CHUNK;
    pipe_.InitBuffer(inQ_, 1, pitch_ * sizeof(float));
    pipe_.InitBuffer(inRows_, kBufferNum, loadRows_ * pitch_ * sizeof(float));
    pipe_.InitBuffer(outAcc_, 1, pitch_ * sizeof(float));
    pipe_.InitBuffer(prod_, pitch_ * sizeof(float));
    pipe_.InitBuffer(scores_, SK_AD_CHUNK * sizeof(float));
    pipe_.InitBuffer(work_, SkAlignElems<float>((pitch_ + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    pipe_.InitBuffer(red_, 32);
    return true;
  }
  __aicore__ inline void Process() {
    for (uint32_t h = hb_; h < he_; ++h) Head(h);
  }

 private:
  static constexpr uint32_t kHeads = static_cast<uint32_t>(SK_HEADS), kKvHeads = static_cast<uint32_t>(SK_KV_HEADS);
  static constexpr uint32_t kDim = static_cast<uint32_t>(SK_DIM);

  __aicore__ inline void Head(uint32_t h) {
    const uint32_t g = h / (kHeads / kKvHeads);
    LocalTensor<float> qh = inQ_.AllocTensor<float>();
    SkCopyIn(qh, qGm_[static_cast<uint64_t>(h) * kDim], kDim);
    inQ_.EnQue(qh);
    qh = inQ_.DeQue<float>();
    LocalTensor<float> acc = outAcc_.AllocTensor<float>();
    LocalTensor<float> sc = scores_.Get<float>();
    Duplicate(acc, 0.0f, kDim);
    float m = -__builtin_inff(), l = 0.0f;
    for (int64_t t0 = 0; t0 <= pos_; t0 += SK_AD_CHUNK) {
      const uint32_t n = static_cast<uint32_t>(pos_ + 1 - t0 < SK_AD_CHUNK ? pos_ + 1 - t0 : SK_AD_CHUNK);
      // Scores of the chunk: sc[i] = scale * q . k[t0 + i], and their max.
      float cm = -__builtin_inff();
      for (uint32_t i0 = 0; i0 < n; i0 += loadRows_) {
        const uint32_t rows = n - i0 < loadRows_ ? n - i0 : loadRows_;
        CopyRows(kGm_, g, t0 + i0, rows);
        LocalTensor<float> k = inRows_.DeQue<float>();
        for (uint32_t i = 0; i < rows; ++i) {
          const float s = Dot(qh, k[i * pitch_]) * static_cast<float>(SK_SCALE);
          sc.SetValue(i0 + i, s);
          cm = s > cm ? s : cm;
        }
        inRows_.FreeTensor(k);
      }
      SetFlag<HardEvent::S_V>(EVENT_ID0);  // the vector unit reads the scores the scalar unit wrote
      WaitFlag<HardEvent::S_V>(EVENT_ID0);
      if (cm > m) {
        const float r = __builtin_expf(m - cm);
        l *= r;
        Muls(acc, acc, r, kDim);
        m = cm;
      }
      Adds(sc, sc, -m, n);  // sc - m
      Exp(sc, sc, n);
      SetFlag<HardEvent::V_S>(EVENT_ID0);
      WaitFlag<HardEvent::V_S>(EVENT_ID0);
      for (uint32_t i = 0; i < n; ++i) l += sc.GetValue(i);
      // acc += sc[i] * v[t0 + i], i in order.
      for (uint32_t i0 = 0; i0 < n; i0 += loadRows_) {
        const uint32_t rows = n - i0 < loadRows_ ? n - i0 : loadRows_;
        CopyRows(vGm_, g, t0 + i0, rows);
        LocalTensor<float> v = inRows_.DeQue<float>();
        LocalTensor<float> prod = prod_.Get<float>();
        for (uint32_t i = 0; i < rows; ++i) {
          Muls(prod, v[i * pitch_], sc.GetValue(i0 + i), kDim);
          Add(acc, acc, prod, kDim);
        }
        inRows_.FreeTensor(v);
      }
    }
    Muls(acc, acc, 1.0f / l, kDim);
    outAcc_.EnQue(acc);
    inQ_.FreeTensor(qh);
    acc = outAcc_.DeQue<float>();
    SkCopyOut(oGm_[static_cast<uint64_t>(h) * kDim], acc, kDim);
    outAcc_.FreeTensor(acc);
  }
  // cache[t .. t + rows, g, :] into the next VECIN buffer: rows bursts of dim floats, kv_heads * dim apart.
  __aicore__ inline void CopyRows(const GlobalTensor<float>& cache, uint32_t g, int64_t t, uint32_t rows) {
    LocalTensor<float> r = inRows_.AllocTensor<float>();
    DataCopyPad(r, cache[(static_cast<uint64_t>(t) * kKvHeads + g) * kDim],
                DataCopyExtParams(static_cast<uint16_t>(rows), kDim * sizeof(float), (kKvHeads - 1) * kDim * sizeof(float), 0, 0),
                DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    inRows_.EnQue(r);
  }
  // q . row through Mul and ReduceSum, read back by the scalar unit.
  __aicore__ inline float Dot(const LocalTensor<float>& qh, const LocalTensor<float>& row) {
    LocalTensor<float> prod = prod_.Get<float>(), red = red_.Get<float>();
    Mul(prod, qh, row, kDim);
    ReduceSum(red, prod, work_.Get<float>(), kDim);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    const float s = red.GetValue(0);
    SetFlag<HardEvent::S_V>(EVENT_ID0);  // the next ReduceSum overwrites what the scalar unit read
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
    return s;
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, 1> inQ_;
  TQue<QuePosition::VECIN, kBufferNum> inRows_;
  TQue<QuePosition::VECOUT, 1> outAcc_;
  TBuf<QuePosition::VECCALC> prod_, scores_, work_, red_;
  GlobalTensor<float> qGm_, kGm_, vGm_, oGm_;
  int64_t pos_ = 0;
  uint32_t hb_ = 0, he_ = 0, pitch_ = 0, loadRows_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_attn_decode_f32(GM_ADDR q, GM_ADDR k_cache, GM_ADDR v_cache, GM_ADDR out) {
  SkAttnDecodeF32 op;
  if (op.Init(q, k_cache, v_cache, out)) op.Process();
}
