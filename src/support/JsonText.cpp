#include "support/JsonText.h"

#include <fmt/format.h>

namespace sk::detail {

Expected<nlohmann::json> parseJsonText(std::string_view text, std::string_view what) {
  if (text.empty()) return nlohmann::json::object();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return badInput(fmt::format("{} is not JSON text: {}", what, e.what()));
  }
}

}  // namespace sk::detail
