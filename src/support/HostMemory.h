// Device buffers that are plain host memory: the cpu device (its executor
// runs kernels on host threads) and the ascend device (the simulator runs
// them in-process) allocate and copy them the same way, so one copy lives
// here. Private to the library.
#pragma once

#include <cstddef>

#include "superkernel/support/Error.h"

namespace sk {

/// 64-byte aligned (a cache line: kernels vectorise over buffers), the size
/// rounded up to 64 as aligned_alloc requires and at least one byte, so an
/// empty buffer still gets its own pointer. RuntimeError when out of memory.
Expected<void*> hostAllocate(size_t bytes);
/// Frees what hostAllocate returned (null is ignored).
void hostRelease(void* buffer);
/// Upload and download alike: a memcpy (none for 0 bytes, where the pointers may be null).
Status hostCopy(void* dst, const void* src, size_t bytes);

}  // namespace sk
