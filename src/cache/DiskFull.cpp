#include "cache/DiskFull.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace sk::detail {

namespace {
// Below this the file system counts as full even when a tool's message lost
// the errno text (a linker that only says "final link failed"). Small enough
// that a real compile error on a merely tight disk is not mistaken for it.
constexpr unsigned long long kAlmostFullBytes = 64 * 1024;

bool almostFull(const std::filesystem::path& dir) {
  struct statvfs st {};
  std::filesystem::path p = dir;
  for (int i = 0; i < 2 && !p.empty(); ++i, p = p.parent_path()) {
    if (::statvfs(p.c_str(), &st) == 0) {
      return static_cast<unsigned long long>(st.f_bavail) * st.f_frsize < kAlmostFullBytes;
    }
  }
  return false;
}
}  // namespace

bool isNoSpace(int err) { return err == ENOSPC || err == EDQUOT; }

bool buildRanOutOfSpace(const std::filesystem::path& dir, std::string_view message) {
  // The C-locale texts too: a compiler may print them untranslated.
  for (const char* text : {static_cast<const char*>(std::strerror(ENOSPC)), static_cast<const char*>(std::strerror(EDQUOT)), "No space left on device",
                           "Disk quota exceeded"}) {
    if (message.find(text) != std::string_view::npos) return true;
  }
  return !dir.empty() && almostFull(dir);
}

std::filesystem::path privateTempBase() {
  const char* t = std::getenv("TMPDIR");
  if (t && *t == '/') return t;
  return "/tmp";
}

std::string firstLine(std::string_view message) { return std::string(message.substr(0, message.find('\n'))); }

}  // namespace sk::detail
