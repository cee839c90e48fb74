// Elementwise dtype conversion over n elements. One source, four builtins;
// exactly one selector macro is defined (the builtin JSONs do that):
//   SK_CAST_F32_BF16 -> sk_cast_f32_bf16  (round to nearest even, NaN kept quiet)
//   SK_CAST_BF16_F32 -> sk_cast_bf16_f32  (exact)
//   SK_CAST_F32_F16  -> sk_cast_f32_f16   (IEEE half, round to nearest even,
//                                          subnormals, overflow to inf)
//   SK_CAST_F16_F32  -> sk_cast_f16_f32   (exact)
// The same bits as the cpu builtins (kernels/cpu/cast.cpp), but for an f32 -> f16 NaN (below).
//
// Ascend C vector kernels (docs/ASCEND.md "Writing a sub-kernel"): the block's elements in tiles through
// double-buffered queues, DataCopy GM -> UB (MTE2), Cast (V: CAST_RINT to f16 / bf16, CAST_NONE to f32),
// DataCopy UB -> GM (MTE3). The vector unit's Cast has the cpu builtin's rounding (nearest even, ties,
// subnormals, overflow to infinity) and NaN rules for all four with one exception: f32 -> f16 of a NaN.
// The cpu builtin writes the one quiet NaN sign | 0x7e00; the simulator's Cast keeps the top 10 payload
// bits (sign | 0x7e00 | payload >> 13, as x86's F16C does), and which NaN a device writes is not known
// here, so the tests compare those as NaN of the same sign (tests/ascend/KernelsTest.cpp).
// Split: SkBlockRange(n): x, y "block". Compile-time: SK_N.
// The kernel class is in an anonymous namespace: the four builtins define different bodies under one
// name, and two of them linked into one binary (a SuperKernel, or the test executable) must not share one
// copy (an ODR violation that shows once a member is not inlined, e.g. at -O0).
#include "sk_ascend_kernel.h"
#ifndef SK_N
#error "cast (ascend): scalar n is compile-time: -DSK_N=<value>"
#endif

#if defined(SK_CAST_F32_BF16)
#define SK_CAST_ENTRY sk_cast_f32_bf16
#define SK_SRC_T float
#define SK_DST_T bfloat16_t
#define SK_CAST_ROUND RoundMode::CAST_RINT
#elif defined(SK_CAST_BF16_F32)
#define SK_CAST_ENTRY sk_cast_bf16_f32
#define SK_SRC_T bfloat16_t
#define SK_DST_T float
#define SK_CAST_ROUND RoundMode::CAST_NONE
#elif defined(SK_CAST_F16_F32)
#define SK_CAST_ENTRY sk_cast_f16_f32
#define SK_SRC_T half
#define SK_DST_T float
#define SK_CAST_ROUND RoundMode::CAST_NONE
#elif defined(SK_CAST_F32_F16)
#define SK_CAST_ENTRY sk_cast_f32_f16
#define SK_SRC_T float
#define SK_DST_T half
#define SK_CAST_ROUND RoundMode::CAST_RINT
#else
#error "cast.cpp (ascend): define one of SK_CAST_F32_BF16, SK_CAST_BF16_F32, SK_CAST_F32_F16, SK_CAST_F16_F32"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTile = 8192;  // elements: 2 x 32 KiB (f32) + 2 x 16 KiB (16-bit) of the 192 KiB UB

class SkCastKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y) {
    tiles_ = SkBlockTiles(SK_N, kTile);
    if (tiles_.count == 0) return;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ SK_SRC_T*>(x) + tiles_.begin, tiles_.length);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ SK_DST_T*>(y) + tiles_.begin, tiles_.length);
    pipe_.InitBuffer(inX_, kBufferNum, tiles_.tile * sizeof(SK_SRC_T));
    pipe_.InitBuffer(outY_, kBufferNum, tiles_.tile * sizeof(SK_DST_T));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tiles_.count; ++i) {
      CopyIn(i);
      Compute(i);
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i) {
    LocalTensor<SK_SRC_T> x = inX_.AllocTensor<SK_SRC_T>();
    SkCopyIn(x, xGm_[i * tiles_.tile], tiles_.Len(i));
    inX_.EnQue(x);
  }
  __aicore__ inline void Compute(uint32_t i) {
    LocalTensor<SK_SRC_T> x = inX_.DeQue<SK_SRC_T>();
    LocalTensor<SK_DST_T> y = outY_.AllocTensor<SK_DST_T>();
    Cast(y, x, SK_CAST_ROUND, tiles_.Len(i));
    outY_.EnQue(y);
    inX_.FreeTensor(x);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    LocalTensor<SK_DST_T> y = outY_.DeQue<SK_DST_T>();
    SkCopyOut(yGm_[i * tiles_.tile], y, tiles_.Len(i));
    outY_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, kBufferNum> inX_;
  TQue<QuePosition::VECOUT, kBufferNum> outY_;
  GlobalTensor<SK_SRC_T> xGm_;
  GlobalTensor<SK_DST_T> yGm_;
  SkTiles tiles_;
};

}  // namespace

extern "C" __global__ __aicore__ void SK_CAST_ENTRY(GM_ADDR x, GM_ADDR y) {
  SkCastKernel op;
  op.Init(x, y);
  op.Process();
}

