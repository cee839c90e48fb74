#include "support/Escape.h"

#include <cstdio>

namespace sk {
namespace {

bool printableAscii(unsigned char c) { return c >= 0x20 && c <= 0x7e; }

void appendEscape(std::string& out, const char* format, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, format, static_cast<unsigned>(c));
  out += buf;
}

}  // namespace

std::string escapeCString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += ch;
    } else if (printableAscii(c)) {
      out += ch;
    } else {
      appendEscape(out, "\\%03o", c);
    }
  }
  return out;
}

std::string escapeComment(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const char prev = out.empty() ? '\0' : out.back();
    if (c == '\\' || !printableAscii(c) || (c == '/' && prev == '*') || (c == '*' && prev == '/') ||
        (c == '?' && prev == '?')) {
      appendEscape(out, "\\x%02x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace sk
