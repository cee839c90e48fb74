// Elementwise dtype conversion over n elements. One source, four builtins;
// exactly one selector macro is defined (the builtin JSONs do that):
//   SK_CAST_F32_BF16 -> sk_cast_f32_bf16  (round to nearest even, NaN kept quiet)
//   SK_CAST_BF16_F32 -> sk_cast_bf16_f32  (exact)
//   SK_CAST_F32_F16  -> sk_cast_f32_f16   (IEEE half, round to nearest even,
//                                          subnormals, overflow to inf)
//   SK_CAST_F16_F32  -> sk_cast_f16_f32   (exact)
// The same bits as the cpu builtins (kernels/cpu/cast.cpp).
//
// f32 -> bf16, bf16 -> f32 and f16 -> f32 are Ascend C vector kernels (docs/ASCEND.md "Writing a
// sub-kernel"): the block's elements in tiles through double-buffered queues, DataCopy GM -> UB (MTE2),
// Cast (V: CAST_RINT to bf16, CAST_NONE to f32), DataCopy UB -> GM (MTE3). The vector unit's Cast has the
// cpu builtin's rounding and NaN rules for these three.
//
// f32 -> f16 stays a scalar loop over GM in integer bit arithmetic (the scalar unit has no half type):
// the simulator's Cast to half keeps a NaN's payload (sign | 0x7e00 | the top 10 payload bits, as x86's
// F16C does), where the cpu builtin writes the one quiet NaN sign | 0x7e00; rounding agrees, NaN bits do
// not, and which a device writes is not known here. The f32 -> f16 subnormal case rounds with integer
// shifts where the cpu kernel uses rintf.
// Split: SkBlockRange(n): x, y "block". Compile-time: SK_N.
// The helpers are static and the kernel class is in an anonymous namespace: the four builtins define
// different bodies under one name, and two of them linked into one binary (a SuperKernel, or the test
// executable) must not share one copy (an ODR violation that shows once a helper is not inlined, e.g. at
// -O0).
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
#define SK_CAST_SCALAR 1
#else
#error "cast.cpp (ascend): define one of SK_CAST_F32_BF16, SK_CAST_BF16_F32, SK_CAST_F32_F16, SK_CAST_F16_F32"
#endif

#ifndef SK_CAST_SCALAR

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

#else  // f32 -> f16: scalar

static __aicore__ inline uint32_t SkF32Bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}

static __aicore__ inline uint16_t SkConvert(float f) {
  const uint32_t u = SkF32Bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (absu >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (absu < 0x38800000u) {
    // Half subnormal (or zero): the result is round(|f| / 2^-24) to nearest
    // even, at most 1024 (which is the smallest normal's bits: still right).
    // |f| = m * 2^(e - 150) with the implicit bit in m, so |f| / 2^-24 is
    // m >> (126 - e), rounded on the bits shifted out.
    const uint32_t e = absu >> 23;
    if (e < 102) return sign;  // f32 subnormal, or below 2^-25: rounds to 0
    const uint32_t m = (absu & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias the exponent (127 -> 15), round the 13 dropped mantissa bits.
  uint32_t v = absu - (112u << 23);
  v += 0xfffu + ((v >> 13) & 1u);
  return static_cast<uint16_t>(sign | (v >> 13));
}

extern "C" __global__ __aicore__ void SK_CAST_ENTRY(GM_ADDR x, GM_ADDR y) {
  __gm__ const float* xs = SK_ASCEND_GM(const float, x);
  __gm__ uint16_t* ys = SK_ASCEND_GM(uint16_t, y);
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  for (int64_t i = b; i < e; ++i) ys[i] = SkConvert(xs[i]);
}

#endif
