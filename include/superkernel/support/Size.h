// Byte sizes as people write them ("500M", "2G") and read them ("1.5 GiB").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "superkernel/support/Error.h"

namespace sk {

/// Parse "500M", "2G", "1.5G", "4096", "10k", "3GiB" (binary multiples) into bytes.
Expected<uint64_t> parseSize(std::string_view text);
/// "1.5 GiB", "512 KiB", "12 B".
std::string formatSize(uint64_t bytes);

}  // namespace sk
