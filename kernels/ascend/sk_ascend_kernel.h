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

// ---- gemv on the vector cores (gemv, moe_expert_gemv) ------------------------------------------------
// y[i] = W[i, :] . x for a run of rows of W (f32, or bf16 cast to f32 on the vector unit), in column chunks
// of at most kSkGemvChunk: the chunk of x lives in UB (up to kSkGemvChunk columns loaded once per block, or
// once per x the caller names; past that, once per chunk and y tile), the rows' chunks come GM -> UB (MTE2)
// as tiles of whole row chunks (one strided DataCopyPad, a burst per row) through a double-buffered VECIN
// queue, and for each row Mul (V) by x and ReduceSum (V) into its own 32-byte slot of a scratch buffer.
// Gather (V) packs the slots of up to kSkGemvOutRows rows into a y tile (by byte offsets the scalar unit
// wrote once), each further chunk's sums are added with Add (V), and the tile goes UB -> GM (MTE3) through
// a VECOUT queue. A row's
// sum is therefore: per chunk, ReduceSum's order (64-element repeats, then the repeats in order), the
// chunks added in order; the same for every block split, so fused and unfused runs agree bit for bit.
// Shapes are arguments, not macros, and `Tag` is a type from the including source's anonymous namespace:
// each instantiation is private to its object (see SkBinaryTilesF32).
constexpr uint32_t kSkGemvChunk = 8192;   // columns per chunk (32 KiB of x), a multiple of 64
constexpr uint32_t kSkGemvTile = 8192;    // weights per W tile (whole row chunks)
constexpr uint32_t kSkGemvOutRows = 256;  // rows per y tile
// x chunk, 2 W tiles (f32: 2 x 32 KiB; bf16: 2 x 16 KiB and the 32 KiB f32 cast), the row sums' slots, their
// offsets, 2 y tiles, a second chunk's sums and ReduceSum's scratch; room is left for the caller's buffers.
static_assert(kSkGemvChunk * 4 + 2 * kSkGemvTile * 4 + kSkGemvOutRows * (32 + 4 + 2 * 4 + 4) + kSkGemvChunk / 64 * 4 <=
                  kSkUbBytes - 64 * 1024,
              "SkGemvRows: the buffers fit the UB");
static_assert(kSkGemvTile >= kSkGemvChunk && kSkGemvChunk % 64 == 0, "SkGemvRows: a W tile holds a row chunk");

// The f32 weights of a W tile: f32 ones where they landed; bf16 ones cast to f32 (V) into `f32`.
static __aicore__ inline AscendC::LocalTensor<float> SkGemvF32(const AscendC::LocalTensor<float>& w,
                                                               const AscendC::LocalTensor<float>&, uint32_t) {
  return w;
}
static __aicore__ inline AscendC::LocalTensor<float> SkGemvF32(const AscendC::LocalTensor<bfloat16_t>& w,
                                                               const AscendC::LocalTensor<float>& f32, uint32_t n) {
  AscendC::Cast(f32, w, AscendC::RoundMode::CAST_NONE, n);
  return f32;
}

template <class W, class Tag>
class SkGemvRows {
 public:
  // Queues and buffers in `pipe` for rows of `cols` weights. The scalar unit writes the Gather offsets
  // (no GM access: this may run before an early start's WaitPreTaskEnd).
  __aicore__ inline void Init(AscendC::TPipe& pipe, uint32_t cols) {
    cols_ = cols;
    const uint32_t chunk = cols < kSkGemvChunk ? cols : kSkGemvChunk;
    if (chunk == 0) {  // no columns: every y is 0
      pipe.InitBuffer(outY_, 2, kSkGemvOutRows * sizeof(float));
      return;
    }
    pipe.InitBuffer(inX_, 1, chunk * sizeof(float));
    pipe.InitBuffer(inW_, 2, kSkGemvTile * sizeof(W));
    if (sizeof(W) != sizeof(float)) pipe.InitBuffer(f32_, kSkGemvTile * sizeof(float));
    pipe.InitBuffer(outY_, 2, kSkGemvOutRows * sizeof(float));
    pipe.InitBuffer(sums_, kSkGemvOutRows * 32);
    pipe.InitBuffer(offsets_, kSkGemvOutRows * sizeof(uint32_t));
    if (cols > kSkGemvChunk) pipe.InitBuffer(part_, kSkGemvOutRows * sizeof(float));
    pipe.InitBuffer(work_, SkAlignElems<float>((chunk + 63) / 64) * sizeof(float));  // one per 256-byte repeat
    AscendC::LocalTensor<uint32_t> off = offsets_.template Get<uint32_t>();
    for (uint32_t i = 0; i < kSkGemvOutRows; ++i) off.SetValue(i, i * 32);  // row i's sum: byte 32 i of sums_
    AscendC::SetFlag<AscendC::HardEvent::S_V>(EVENT_ID0);  // the vector unit's Gather reads them
    AscendC::WaitFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
  }
  // y[i] = w[i, :] . x for i < rows: w is rows x cols, row-major from its start. x (cols floats) is loaded
  // only when it is not the x of the previous call or its chunks do not all fit.
  __aicore__ inline void Run(const AscendC::GlobalTensor<W>& w, const AscendC::GlobalTensor<float>& x,
                             const AscendC::GlobalTensor<float>& y, uint32_t rows) {
    for (uint32_t r0 = 0; r0 < rows; r0 += kSkGemvOutRows) {
      const uint32_t n = rows - r0 < kSkGemvOutRows ? rows - r0 : kSkGemvOutRows;
      AscendC::LocalTensor<float> out = outY_.template AllocTensor<float>();
      if (cols_ == 0) AscendC::Duplicate(out, 0.0f, static_cast<int32_t>(n));
      for (uint32_t c0 = 0; c0 < cols_; c0 += kSkGemvChunk) {
        const uint32_t len = cols_ - c0 < kSkGemvChunk ? cols_ - c0 : kSkGemvChunk;
        LoadX(x, c0, len);
        const uint32_t pitch = SkAlignElems<W>(len);  // a row chunk's elements in UB (32-byte aligned rows)
        const uint32_t tileRows = kSkGemvTile / pitch < n ? kSkGemvTile / pitch : n;
        for (uint32_t t0 = 0; t0 < n; t0 += tileRows) {
          const uint32_t m = n - t0 < tileRows ? n - t0 : tileRows;
          CopyIn(w, r0 + t0, c0, m, len);
          Compute(t0, m, len, pitch);
        }
        // The rows' sums of this chunk, packed: into the y tile, or added to it after the first chunk.
        if (c0 == 0) {
          AscendC::Gather(out, sums_.template Get<float>(), offsets_.template Get<uint32_t>(), 0u, n);
        } else {
          AscendC::LocalTensor<float> part = part_.template Get<float>();
          AscendC::Gather(part, sums_.template Get<float>(), offsets_.template Get<uint32_t>(), 0u, n);
          AscendC::Add(out, out, part, static_cast<int32_t>(n));
        }
      }
      outY_.EnQue(out);
      out = outY_.template DeQue<float>();
      SkCopyOut(y[r0], out, n);
      outY_.FreeTensor(out);
    }
  }
  // The end of the kernel's work: x's buffer goes back to its queue.
  __aicore__ inline void End() {
    if (xLoaded_) inX_.FreeTensor(x_);
    xLoaded_ = false;
  }

 private:
  // x[c0, c0 + len) into UB, unless it is there already.
  __aicore__ inline void LoadX(const AscendC::GlobalTensor<float>& x, uint32_t c0, uint32_t len) {
    if (xLoaded_ && xFrom_ == x.GetPhyAddr() && xAt_ == c0) return;
    End();
    AscendC::LocalTensor<float> t = inX_.template AllocTensor<float>();
    SkCopyIn(t, x[c0], len);
    inX_.EnQue(t);
    x_ = inX_.template DeQue<float>();
    xLoaded_ = true;
    xFrom_ = x.GetPhyAddr();
    xAt_ = c0;
  }
  // Rows [row, row + m), columns [c0, c0 + len) of w: one burst per row, each landing 32-byte aligned.
  __aicore__ inline void CopyIn(const AscendC::GlobalTensor<W>& w, uint32_t row, uint32_t c0, uint32_t m, uint32_t len) {
    AscendC::LocalTensor<W> t = inW_.template AllocTensor<W>();
    const uint32_t bytes = len * static_cast<uint32_t>(sizeof(W));
    if (len == cols_ && bytes % 32 == 0) {  // whole rows of whole blocks: one contiguous copy
      AscendC::DataCopy(t, w[static_cast<uint64_t>(row) * cols_], m * len);
    } else {
      AscendC::DataCopyPad(t, w[static_cast<uint64_t>(row) * cols_ + c0],
                           AscendC::DataCopyExtParams(static_cast<uint16_t>(m), bytes,
                                                      (cols_ - len) * static_cast<uint32_t>(sizeof(W)), 0, 0),
                           AscendC::DataCopyPadExtParams<W>(false, 0, 0, W()));
    }
    inW_.EnQue(t);
  }
  // Row t0 + i's chunk sum into byte 32 (t0 + i) of sums_, for i < m.
  __aicore__ inline void Compute(uint32_t t0, uint32_t m, uint32_t len, uint32_t pitch) {
    AscendC::LocalTensor<W> t = inW_.template DeQue<W>();
    AscendC::LocalTensor<float> wf =
        SkGemvF32(t, sizeof(W) == sizeof(float) ? AscendC::LocalTensor<float>() : f32_.template Get<float>(), m * pitch);
    AscendC::LocalTensor<float> sums = sums_.template Get<float>();
    AscendC::LocalTensor<float> work = work_.template Get<float>();
    for (uint32_t i = 0; i < m; ++i) {
      AscendC::LocalTensor<float> row = wf[i * pitch];
      AscendC::Mul(row, row, x_, static_cast<int32_t>(len));
      AscendC::ReduceSum(sums[(t0 + i) * 8], row, work, static_cast<int32_t>(len));
    }
    inW_.FreeTensor(t);
  }

  AscendC::TQue<AscendC::QuePosition::VECIN, 1> inX_;
  AscendC::TQue<AscendC::QuePosition::VECIN, 2> inW_;
  AscendC::TQue<AscendC::QuePosition::VECOUT, 2> outY_;
  AscendC::TBuf<AscendC::QuePosition::VECCALC> f32_, sums_, offsets_, part_, work_;
  AscendC::LocalTensor<float> x_;
  const __gm__ float* xFrom_ = nullptr;
  uint32_t xAt_ = 0, cols_ = 0;
  bool xLoaded_ = false;
};

// bf16 weights are stored as uint16_t: the top half of an f32 (matmul, a scalar cube kernel).
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

#endif
