// dlopen of the first candidate that loads (DynamicLibrary.h).
#include "support/DynamicLibrary.h"

#include <fmt/format.h>

namespace sk {

OpenedLibrary openFirstLibrary(const std::vector<std::string>& candidates) {
  OpenedLibrary lib;
  for (const std::string& c : candidates) {
    lib.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib.handle) {
      lib.path = c;
      return lib;
    }
    const char* e = dlerror();
    lib.tried += fmt::format("\n  tried {}: {}", c, e ? e : "not found");
  }
  return lib;
}

}  // namespace sk
