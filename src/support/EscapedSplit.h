// Splitting option text on an unescaped separator: the one rule for
// Options' "key=value:key=value" strings and their comma lists (an item may
// hold "\:" or "\,"), shared by the options parser and the driver's keys.
#ifndef SK_SUPPORT_ESCAPEDSPLIT_H
#define SK_SUPPORT_ESCAPEDSPLIT_H

#include <string>
#include <string_view>
#include <vector>

namespace sk {

/// Splits `s` on unescaped `sep`; removes the escapes of that level only when
/// `unescape` is set (items of the top level keep "\," for the list split).
inline std::vector<std::string> splitEscaped(std::string_view s, char sep, bool unescape) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
      if (!unescape) out.back() += c;
      out.back() += s[++i];
    } else if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace sk

#endif
