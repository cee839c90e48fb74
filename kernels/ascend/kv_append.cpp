// kv_append_f32: KV-cache append for one token, in place: k_cache[pos, :] = k, v_cache[pos, :] = v;
// k, v [row], caches [cap, row]. In the Ascend C vector style (docs/ASCEND.md "Writing a sub-kernel"):
// the block's elements of k, then of v, in tiles of at most kTile floats through one double-buffered
// TQueBind<VECIN, VECOUT>: DataCopy GM -> UB (MTE2), EnQue / DeQue (MTE2 -> MTE3), DataCopy UB -> GM
// (MTE3) into the cache row; no vector instruction touches the data.
// Split: SkBlockRange(row): k, v "block"; caches "all".
// pos outside [0, cap) fails the launch and nothing is written.
// Compile-time: SK_ROW, SK_CAP, SK_POS (pos is "runtime": SK_POS may expand to a value read at run
// time, so it is used only in ordinary expressions).
#include "sk_ascend_kernel.h"
#if !defined(SK_ROW) || !defined(SK_CAP) || !defined(SK_POS)
#error "kv_append_f32 (ascend): row, cap, pos are compile-time (-DSK_<NAME>)"
#endif

namespace {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;
constexpr uint32_t kTile = 16384;  // floats: 2 buffers x 64 KiB of the 192 KiB UB

class SkKvAppendF32 {
 public:
  __aicore__ inline bool Init(GM_ADDR k, GM_ADDR v, GM_ADDR kCache, GM_ADDR vCache) {
    const int64_t pos = SK_POS;
    if (pos < 0 || pos >= static_cast<int64_t>(SK_CAP)) {
      if (GetBlockIdx() == 0) SkReportError("kv_append_f32: pos out of range [0, cap)");
      return false;
    }
    tiles_ = SkBlockTiles(SK_ROW, kTile);
    if (tiles_.count == 0) return false;
    const int64_t at = pos * static_cast<int64_t>(SK_ROW) + tiles_.begin;
    kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(k) + tiles_.begin, tiles_.length);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(v) + tiles_.begin, tiles_.length);
    kcGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(kCache) + at, tiles_.length);
    vcGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(vCache) + at, tiles_.length);
    pipe_.InitBuffer(queue_, kBufferNum, tiles_.tile * sizeof(float));
    return true;
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tiles_.count; ++i) Move(kGm_, kcGm_, i);
    for (uint32_t i = 0; i < tiles_.count; ++i) Move(vGm_, vcGm_, i);
  }

 private:
  __aicore__ inline void Move(const GlobalTensor<float>& src, const GlobalTensor<float>& dst, uint32_t i) {
    LocalTensor<float> t = queue_.AllocTensor<float>();
    SkCopyIn(t, src[i * tiles_.tile], tiles_.Len(i));
    queue_.EnQue(t);
    t = queue_.DeQue<float>();
    SkCopyOut(dst[i * tiles_.tile], t, tiles_.Len(i));
    queue_.FreeTensor(t);
  }

  TPipe pipe_;
  TQueBind<QuePosition::VECIN, QuePosition::VECOUT, kBufferNum> queue_;
  GlobalTensor<float> kGm_, vGm_, kcGm_, vcGm_;
  SkTiles tiles_;
};

}  // namespace

extern "C" __global__ __aicore__ void sk_kv_append_f32(GM_ADDR k, GM_ADDR v, GM_ADDR k_cache, GM_ADDR v_cache) {
  SkKvAppendF32 op;
  if (op.Init(k, v, k_cache, v_cache)) op.Process();
}
