// Does not compile (a missing semicolon): sk-compile must exit 3 and show
// the compiler command and its diagnostic.
#include <superkernel/cpu/kernel.h>

SK_KERNEL void syntax_error(const sk_ctx* ctx, float* z, int64_t n) {
  (void)ctx;
  for (int64_t i = 0; i < n; ++i) z[i] = 0.0f
}
