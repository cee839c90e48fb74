// A test-back-end kernel: block `block` of `blocks` scales its slice of x into y.
#include <cstdint>
extern "C" void scale(unsigned block, unsigned blocks, const float* x, float* y, int64_t n) {
  int64_t per = n / blocks, lo = per * block, hi = block + 1 == blocks ? n : lo + per;
  for (int64_t i = lo; i < hi; ++i) y[i] = x[i] * FACTOR;
}
