#include "superkernel/support/Size.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace sk {

Expected<uint64_t> parseSize(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != ' ') s += c;
  if (s.empty()) return badInput("empty size (expected e.g. 500M, 2G, 4096)");
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  std::string num = s.substr(0, i), unit = s.substr(i);
  if (num.empty() || std::count(num.begin(), num.end(), '.') > 1)
    return badInput(fmt::format("bad size '{}' (expected e.g. 500M, 2G, 4096)", text));
  double v = std::strtod(num.c_str(), nullptr);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") mult = 1024.0 * 1024 * 1024 * 1024;
  else return badInput(fmt::format("bad size unit in '{}' (accepted: B, K, M, G, T)", text));
  double bytes = v * mult;
  if (!std::isfinite(bytes) || bytes > 1.8e19) return badInput(fmt::format("size '{}' is too large", text));
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string formatSize(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace sk
