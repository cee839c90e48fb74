// FNV-1a, 64 bit: a short, stable digest of a string for generated symbol
// suffixes (variant and object names). Not for anything that must resist
// collisions by design: cache keys use SHA-256 (support/Sha256).
#pragma once

#include <cstdint>
#include <string_view>

namespace sk {

/// `h` continues a digest: fnv1a(b, fnv1a(a)) == fnv1a(a + b).
inline uint64_t fnv1a(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace sk
