/* A tiny shared object for the cache tests: exports run() returning 42. */
#include <stdint.h>

__attribute__((visibility("default"))) int run(uint32_t block_dim, void* stream, const void* args) {
  (void)stream;
  (void)args;
  return 40 + (int)(block_dim > 1 ? 2 : block_dim + 1);
}
