// Host-memory device buffers (see HostMemory.h).
#include "support/HostMemory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sk {

Expected<void*> hostAllocate(size_t bytes) {
  void* p = std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
  if (!p) return runtimeError(fmt::format("cannot allocate {} bytes", bytes));
  return p;
}

void hostRelease(void* buffer) { std::free(buffer); }

Status hostCopy(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
  return Status::success();
}

}  // namespace sk
