// gemv: y[r] = sum_c W[r, c] * x[c]; W [rows, cols], x [cols], y [rows]. A vector-core kernel in the Ascend C
// vector style (docs/ASCEND.md "Writing a sub-kernel"): SkGemvRows (sk_ascend_kernel.h) keeps x in UB (once
// per block up to 8,192 columns, in chunks past that), brings the block's rows of W GM -> UB (MTE2) in
// tiles of whole rows through a double-buffered VECIN queue (bf16 weights Cast to f32 on the vector unit),
// Mul + ReduceSum (V) per row, packs the sums with Gather (V) and copies them UB -> GM (MTE3) through a
// VECOUT queue. ReduceSum adds in 64-element repeats, so y may differ from the cpu builtin's in the last bits.
// Two builtins: gemv_f32 (sk_gemv_f32) and gemv_bf16w (-DSK_WEIGHT_BF16, sk_gemv_bf16w).
// Split: SkBlockRange(rows) = y's element split: y "block"; W, x "all".
// Early start (declared in the JSON): Init (UB buffers, the scalar unit's Gather offsets) runs before
// WaitPreTaskEnd, which comes before the first MTE2 copy-in; SetNextTaskStart follows the last MTE3
// copy-out (both do nothing outside a SuperKernel). Every core calls both, with rows or not.
// Compile-time: SK_ROWS, SK_COLS.
#include "sk_ascend_kernel.h"
#if !defined(SK_ROWS) || !defined(SK_COLS)
#error "gemv (ascend): rows, cols are compile-time: -DSK_ROWS -DSK_COLS"
#endif

#ifdef SK_WEIGHT_BF16
#define SK_GEMV_ENTRY sk_gemv_bf16w
#define SK_GEMV_W bfloat16_t
#else
#define SK_GEMV_ENTRY sk_gemv_f32
#define SK_GEMV_W float
#endif

namespace {

using namespace AscendC;

struct SkGemvTag {};

class SkGemv {
 public:
  __aicore__ inline bool Init(GM_ADDR w, GM_ADDR x, GM_ADDR y) {
    int64_t rb, re;
    SkBlockRange(SK_ROWS, &rb, &re);
    rows_ = static_cast<uint32_t>(re - rb);
    if (rows_ == 0) return false;
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ SK_GEMV_W*>(w) + rb * kCols, static_cast<uint64_t>(rows_) * kCols);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), kCols);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + rb, rows_);
    gemv_.Init(pipe_, kCols);
    return true;
  }
  __aicore__ inline void Process() {
    gemv_.Run(wGm_, xGm_, yGm_, rows_);
    gemv_.End();
  }

 private:
  static constexpr uint32_t kCols = static_cast<uint32_t>(SK_COLS);

  TPipe pipe_;
  SkGemvRows<SK_GEMV_W, SkGemvTag> gemv_;
  GlobalTensor<SK_GEMV_W> wGm_;
  GlobalTensor<float> xGm_, yGm_;
  uint32_t rows_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void SK_GEMV_ENTRY(GM_ADDR w, GM_ADDR x, GM_ADDR y) {
  SkGemv op;
  const bool work = op.Init(w, x, y);
  AscendC::WaitPreTaskEnd();
  if (work) op.Process();
  AscendC::SetNextTaskStart();
}
