// increment_i64: x[i] += delta over n int64 elements, in place (a decode loop's position counter). The
// vector unit has no 64-bit integer type: the scalar unit does it, through GlobalTensor<int64_t>::GetValue /
// SetValue, as Ascend C accesses GM by scalar. Scalar GM accesses go through the core's data cache, which the
// reference build does not keep coherent for us (-cce-aicore-dcci-insert-for-scalar=false): dcci before the
// read drops a line this core may have cached before another core (or the host) wrote the counter, and dcci
// after the write sends the new value to GM, where the next op's copy-in or another core reads it.
// Split: SkBlockRange(n): x "block". Compile-time: SK_N, SK_DELTA.
#include "sk_ascend_kernel.h"
#if !defined(SK_N) || !defined(SK_DELTA)
#error "increment_i64 (ascend): n, delta are compile-time (-DSK_<NAME>)"
#endif

extern "C" __global__ __aicore__ void sk_increment_i64(GM_ADDR x) {
  int64_t b, e;
  SkBlockRange(SK_N, &b, &e);
  AscendC::GlobalTensor<int64_t> xGm;
  xGm.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(x) + b, static_cast<uint64_t>(e - b));
  for (uint64_t i = 0; i < static_cast<uint64_t>(e - b); ++i) {
    dcci(xGm.GetPhyAddr(i), SINGLE_CACHE_LINE, CACHELINE_OUT);
    // Wrapping two's complement addition, as on cpu.
    xGm.SetValue(i, static_cast<int64_t>(static_cast<uint64_t>(xGm.GetValue(i)) + static_cast<uint64_t>(SK_DELTA)));
    dcci(xGm.GetPhyAddr(i), SINGLE_CACHE_LINE, CACHELINE_OUT);
  }
}
