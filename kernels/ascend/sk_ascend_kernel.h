// Shared helpers of the ascend builtin kernels (kernels/ascend/*.cpp).
//
// The ascend sub-kernel contract (DESIGN section 9): an Ascend C entry
//   extern "C" __global__ __aicore__ void <entry>(GM_ADDR buffer, ...)
// taking the kernel's buffer parameters in declared order. Scalar parameters
// are compile-time: the op's value arrives as -DSK_<PARAM>=<literal> (the
// static shapes a JIT compiles anyway), so they are not in the signature.
// Blocks: GetBlockIdx() / GetBlockNum() (inside a SuperKernel the object is
// compiled with __SUPER_KERNEL_STATIC_BLOCK_NUM__ = the op's block dim), one
// block per core. The element split is the cpu kernels' sk_block_range, so one
// op-list "partition" declaration is true on both targets.
// Private to this folder; its bytes are part of every including kernel's key.
#ifndef SK_ASCEND_KERNEL_H
#define SK_ASCEND_KERNEL_H

#include "kernel_operator.h"

#define SK_ASCEND_GM(T, p) (reinterpret_cast<__gm__ T*>(p))

// [begin, end) of n items for this block: n / blocks each, the rest to the last block. Static, as every
// helper here whose body depends on a macro (GetBlockNum() reads __SUPER_KERNEL_STATIC_BLOCK_NUM__, which
// differs between the objects of one SuperKernel): each object keeps its own copy.
static __aicore__ inline void SkBlockRange(int64_t n, int64_t* begin, int64_t* end) {
  const int64_t blocks = AscendC::GetBlockNum();
  const int64_t idx = AscendC::GetBlockIdx();
  const int64_t per = n / blocks;
  *begin = per * idx;
  *end = (idx + 1 == blocks) ? n : *begin + per;
}

// A kernel's own error (bad shape): the launch fails with the message.
__aicore__ inline void SkReportError(const char* what) {
#ifdef SK_ASCEND_SIMULATOR
  const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
  c->ops->trap(c, what);
#else
  (void)what;
  trap();
#endif
}

// ---- the vector programming model (docs/ASCEND.md "Writing a sub-kernel") --------------------------
// The vector builtins move data GM -> UB -> GM with DataCopy through TQue<VECIN> / TQue<VECOUT> and
// compute with the vector instructions. The helpers below are static (SkBlockTiles depends on the block
// count, a macro inside a SuperKernel; the copies follow for uniformity); kernel classes live in an
// anonymous namespace of their source, and a source's own helpers are static: two builtins linked into
// one binary must not share a definition that differs between them.

// Bytes of one vector core's unified buffer (Atlas A2): what a builtin sizes its tiles against.
constexpr uint32_t kSkUbBytes = 192u * 1024u;

// A block's share of n elements (SkBlockRange) cut into tiles of at most `maxTile` elements: `count`
// tiles of `tile` elements, the last one `Len(count - 1)` (shorter when the share does not divide).
struct SkTiles {
  int64_t begin = 0;    // the block's first element
  uint32_t length = 0;  // the block's elements
  uint32_t tile = 0;    // elements per tile (0 for an empty share)
  uint32_t count = 0;   // tiles
  __aicore__ inline uint32_t Len(uint32_t i) const { return i + 1 < count ? tile : length - i * tile; }
};

static __aicore__ inline SkTiles SkBlockTiles(int64_t n, uint32_t maxTile) {
  int64_t b, e;
  SkBlockRange(n, &b, &e);
  SkTiles t;
  t.begin = b;
  t.length = static_cast<uint32_t>(e - b);
  t.tile = t.length < maxTile ? t.length : maxTile;
  t.count = t.tile == 0 ? 0 : (t.length + t.tile - 1) / t.tile;
  return t;
}

// GM -> UB (MTE2) of `count` elements: DataCopy when they are whole 32-byte blocks, else DataCopyPad
// (bytes; the UB tail past them is left as it was).
template <class T>
static __aicore__ inline void SkCopyIn(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, uint32_t count) {
  const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
  if (bytes % 32 == 0) {
    AscendC::DataCopy(dst, src, count);
  } else {
    AscendC::DataCopyPad(dst, src, AscendC::DataCopyExtParams(1, bytes, 0, 0, 0),
                         AscendC::DataCopyPadExtParams<T>(false, 0, 0, T()));
  }
}

// UB -> GM (MTE3) of `count` elements, exactly: GM past them is not touched.
template <class T>
static __aicore__ inline void SkCopyOut(const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint32_t count) {
  const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
  if (bytes % 32 == 0) {
    AscendC::DataCopy(dst, src, count);
  } else {
    AscendC::DataCopyPad(dst, src, AscendC::DataCopyExtParams(1, bytes, 0, 0, 0));
  }
}

// `count` elements of T rounded up to whole 32-byte blocks (what a UB buffer of them holds).
template <class T>
static __aicore__ inline uint32_t SkAlignElems(uint32_t count) {
  const uint32_t per = 32 / static_cast<uint32_t>(sizeof(T));
  return (count + per - 1) / per * per;
}

// The tile pipeline of a two-input elementwise f32 builtin (add, mul, swiglu): the block's share of n
// elements in tiles of at most 4096 floats (3 queues x 2 buffers x 16 KiB of the UB) through
// double-buffered queues: DataCopy GM -> UB (MTE2), Compute()(z, x, y, len) on the vector unit (V),
// DataCopy UB -> GM (MTE3); a tile that is not whole 32-byte blocks moves with DataCopyPad. The copy-in
// of tile i+1 can overlap the compute of tile i. Compute is a stateless functor declared in the
// builtin's own anonymous namespace, so each instantiation is private to its object.
template <class Compute>
class SkBinaryTilesF32 {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, int64_t n) {
    tiles_ = SkBlockTiles(n, kTile);
    if (tiles_.count == 0) return;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + tiles_.begin, tiles_.length);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + tiles_.begin, tiles_.length);
    zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z) + tiles_.begin, tiles_.length);
    pipe_.InitBuffer(inX_, kBufferNum, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(inY_, kBufferNum, tiles_.tile * sizeof(float));
    pipe_.InitBuffer(outZ_, kBufferNum, tiles_.tile * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tiles_.count; ++i) {
      CopyIn(i);
      Run(i);
      CopyOut(i);
    }
  }

 private:
  static constexpr int32_t kBufferNum = 2;
  static constexpr uint32_t kTile = 4096;

  __aicore__ inline void CopyIn(uint32_t i) {
    AscendC::LocalTensor<float> x = inX_.template AllocTensor<float>();
    AscendC::LocalTensor<float> y = inY_.template AllocTensor<float>();
    SkCopyIn(x, xGm_[i * tiles_.tile], tiles_.Len(i));
    SkCopyIn(y, yGm_[i * tiles_.tile], tiles_.Len(i));
    inX_.EnQue(x);
    inY_.EnQue(y);
  }
  __aicore__ inline void Run(uint32_t i) {
    AscendC::LocalTensor<float> x = inX_.template DeQue<float>();
    AscendC::LocalTensor<float> y = inY_.template DeQue<float>();
    AscendC::LocalTensor<float> z = outZ_.template AllocTensor<float>();
    Compute()(z, x, y, tiles_.Len(i));
    outZ_.EnQue(z);
    inX_.FreeTensor(x);
    inY_.FreeTensor(y);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    AscendC::LocalTensor<float> z = outZ_.template DeQue<float>();
    SkCopyOut(zGm_[i * tiles_.tile], z, tiles_.Len(i));
    outZ_.FreeTensor(z);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::QuePosition::VECIN, kBufferNum> inX_, inY_;
  AscendC::TQue<AscendC::QuePosition::VECOUT, kBufferNum> outZ_;
  AscendC::GlobalTensor<float> xGm_, yGm_, zGm_;
  SkTiles tiles_;
};

// bf16 weights are stored as uint16_t: the top half of an f32.
__aicore__ inline float SkBf16ToFloat(uint16_t v) {
  const uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

#ifdef SK_WEIGHT_BF16
typedef uint16_t sk_weight_t;
__aicore__ inline float SkW(sk_weight_t v) { return SkBf16ToFloat(v); }
#else
typedef float sk_weight_t;
__aicore__ inline float SkW(sk_weight_t v) { return v; }
#endif

// sum_c w[c] * x[c] with four partial sums (the cpu kernels' original order;
// fused and unfused ascend runs use this same code, so they agree bit for bit).
__aicore__ inline float SkDotW(__gm__ const sk_weight_t* w, __gm__ const float* x, int64_t n) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  const int64_t n4 = n - n % 4;
  for (int64_t c = 0; c < n4; c += 4) {
    s0 += SkW(w[c]) * x[c];
    s1 += SkW(w[c + 1]) * x[c + 1];
    s2 += SkW(w[c + 2]) * x[c + 2];
    s3 += SkW(w[c + 3]) * x[c + 3];
  }
  for (int64_t c = n4; c < n; ++c) s0 += SkW(w[c]) * x[c];
  return (s0 + s1) + (s2 + s3);
}

#endif
