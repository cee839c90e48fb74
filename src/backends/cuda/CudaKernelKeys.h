// The keys cuda defines for its kernel declarations (target/Targets.h): a kernel's CTA shape (docs/CUDA.md),
// at most 1024 threads, a multiple of the warp, and dynamic shared memory within an H100's 227 KiB. cuda-sim
// compiles these kernels and reads the same keys. A header so that the op-list fuzzer, which compiles only the
// frontend, describes the targets with the back ends' own definitions (fuzz/FuzzTargets.cpp).
#pragma once

#include <string>
#include <vector>

#include "superkernel/target/Targets.h"

namespace sk {

inline std::vector<KernelAttribute> cudaKernelAttributes() {
  return {
      // The CTA size the kernel is written for (default 256).
      {"threads", 32, 1024,
       [](int64_t t) { return t % 32 ? std::string("is not a multiple of 32 (the warp size)") : std::string(); },
       nullptr},
      // The dynamic shared memory one CTA needs (sk_ctx::smem).
      {"shared_bytes", 0, 232448, nullptr, nullptr},
  };
}

}  // namespace sk
