// Helpers every build recipe and the driver used in identical private copies
// (one copy here, so a key or a scratch file can never be made two ways):
// flag lists joined for cache keys, and scratch files rewritten for a
// compile. Private to the library.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "superkernel/support/Error.h"
#include "support/Fd.h"

namespace sk {

/// Flags joined for a cache key: each one followed by '\0', which no flag
/// holds, so two different lists never join to the same text.
inline std::string joinFlags(const std::vector<std::string>& flags) {
  std::string s;
  for (const auto& f : flags) {
    s += f;
    s.push_back('\0');
  }
  return s;
}

/// Writes a compiler input (a source, an object, a linker script) anew,
/// replacing whatever a previous build left at `p` (0644, not fsync'ed:
/// scratch files, rebuilt on any failure).
inline Status writeScratchFile(const std::filesystem::path& p, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::remove(p, ec);
  return detail::writeNewFile(p, bytes, 0644, false);
}

}  // namespace sk
