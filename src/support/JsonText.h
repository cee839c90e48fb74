// JSON text <-> nlohmann::json, inside the library only. The public headers
// carry JSON as text (std::string; see include/superkernel/cache/Cache.h,
// "JSON in this API") so that nlohmann-json stays a private dependency; the
// library parses that text here, with one error for text that is not JSON.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "superkernel/support/Error.h"

namespace sk::detail {

/// Parse JSON text handed to the library (build metadata). Empty text is {}
/// (no metadata). Text that is not JSON: BadInput "<what> is not JSON text:
/// <the parser's message with the byte position>".
Expected<nlohmann::json> parseJsonText(std::string_view text, std::string_view what);

}  // namespace sk::detail
