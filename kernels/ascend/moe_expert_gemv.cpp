// moe_expert_gemv: for slot s < topk with e = idx[s]: y[s, r] = W[e, r, :] . x_s, W [experts, rows, cols];
// x_s = x (x_per_slot 0) or x[s * cols:] (x_per_slot 1). A vector-core kernel in the Ascend C vector style
// (docs/ASCEND.md "Writing a sub-kernel"): the scalar unit reads the block's slots' expert indices from GM
// (GlobalTensor::GetValue) and checks them before any transfer; then, per slot, SkGemvRows
// (sk_ascend_kernel.h) runs the block's rows of that expert: x_s kept in UB (loaded once per block when x is
// shared), W rows GM -> UB (MTE2) through a double-buffered VECIN queue (bf16 weights Cast to f32 on the
// vector unit), Mul + ReduceSum (V) per row, Gather (V) into a y tile, UB -> GM (MTE3) through a VECOUT
// queue. ReduceSum adds in 64-element repeats, so y may differ from the cpu builtin's in the last bits.
// Two builtins: moe_expert_gemv_f32 and moe_expert_gemv_bf16w (-DSK_WEIGHT_BF16).
// Split: SkBlockRange(topk * rows): y "block"; W, x, idx "all". An expert index out of range fails the launch
// (nothing of the block is written).
// Compile-time: SK_EXPERTS, SK_TOPK, SK_ROWS, SK_COLS, SK_X_PER_SLOT.
#include "sk_ascend_kernel.h"
#if !defined(SK_EXPERTS) || !defined(SK_TOPK) || !defined(SK_ROWS) || !defined(SK_COLS) || !defined(SK_X_PER_SLOT)
#error "moe_expert_gemv (ascend): experts, topk, rows, cols, x_per_slot are compile-time (-DSK_<NAME>)"
#endif

#ifdef SK_WEIGHT_BF16
#define SK_MOE_ENTRY sk_moe_expert_gemv_bf16w
#define SK_MOE_W bfloat16_t
#else
#define SK_MOE_ENTRY sk_moe_expert_gemv_f32
#define SK_MOE_W float
#endif

namespace {

using namespace AscendC;

struct SkMoeGemvTag {};

class SkMoeExpertGemv {
 public:
  __aicore__ inline bool Init(GM_ADDR w, GM_ADDR x, GM_ADDR idx, GM_ADDR y) {
    int64_t ob, oe;
    SkBlockRange(static_cast<int64_t>(SK_TOPK) * kRows, &ob, &oe);
    if (ob == oe) return false;
    ob_ = ob;
    oe_ = oe;
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ SK_MOE_W*>(w), static_cast<uint64_t>(SK_EXPERTS) * kRows * kCols);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), ((SK_X_PER_SLOT) ? static_cast<uint64_t>(SK_TOPK) : 1u) * kCols);
    idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(idx), static_cast<uint64_t>(SK_TOPK));
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), static_cast<uint64_t>(SK_TOPK) * kRows);
    gemv_.Init(pipe_, kCols);
    return true;
  }
  __aicore__ inline void Process() {
    const int64_t first = ob_ / kRows, last = (oe_ - 1) / kRows;
    for (int64_t s = first; s <= last; ++s) {
      const int64_t e = idxGm_.GetValue(static_cast<uint64_t>(s));
      if (e < 0 || e >= static_cast<int64_t>(SK_EXPERTS)) {
        SkReportError("sk_moe_expert_gemv: expert index out of range");
        return;
      }
    }
    for (int64_t s = first; s <= last; ++s) {
      const int64_t e = idxGm_.GetValue(static_cast<uint64_t>(s));
      const int64_t rb = (ob_ > s * kRows ? ob_ : s * kRows) - s * kRows;
      const int64_t re = (oe_ < (s + 1) * kRows ? oe_ : (s + 1) * kRows) - s * kRows;
      gemv_.Run(wGm_[static_cast<uint64_t>(e * kRows + rb) * kCols], xGm_[(SK_X_PER_SLOT) ? static_cast<uint64_t>(s) * kCols : 0u],
                yGm_[static_cast<uint64_t>(s * kRows + rb)], static_cast<uint32_t>(re - rb));
    }
    gemv_.End();
  }

 private:
  static constexpr int64_t kRows = static_cast<int64_t>(SK_ROWS);
  static constexpr uint32_t kCols = static_cast<uint32_t>(SK_COLS);

  TPipe pipe_;
  SkGemvRows<SK_MOE_W, SkMoeGemvTag> gemv_;
  GlobalTensor<SK_MOE_W> wGm_;
  GlobalTensor<float> xGm_, yGm_;
  GlobalTensor<int32_t> idxGm_;
  int64_t ob_ = 0, oe_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void SK_MOE_ENTRY(GM_ADDR w, GM_ADDR x, GM_ADDR idx, GM_ADDR y) {
  SkMoeExpertGemv op;
  if (op.Init(w, x, idx, y)) op.Process();
}
