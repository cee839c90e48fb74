// A CANN library by dlopen (CannLibrary.h).
#include "backends/ascend/CannLibrary.h"

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace sk::ascend {

OpenedLibrary openCannLibrary(const char* envVar, const char* file, const char* what, const char* alternative,
                              std::string* error) {
  std::vector<std::string> names;
  const char* home = std::getenv("ASCEND_HOME_PATH");
  if (const char* env = std::getenv(envVar); env && *env) {
    names.push_back(env);
  } else {
    names.push_back(file);
    if (home && *home) names.push_back(std::string(home) + "/lib64/" + file);
  }
  OpenedLibrary lib = openFirstLibrary(names);
  if (!lib.handle)
    *error = fmt::format(
        "{} ({}) not found{}{}\n  install the CANN toolkit and source its set_env.sh (ASCEND_HOME_PATH), or set {} "
        "to the library; {}",
        what, file, home ? "" : " (ASCEND_HOME_PATH is not set)", lib.tried, envVar, alternative);
  return lib;
}

}  // namespace sk::ascend
