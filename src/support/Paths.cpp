#include "superkernel/support/Paths.h"

#include <cstdlib>
#include <system_error>

namespace sk {
namespace fs = std::filesystem;

namespace {
// Installed data dir if it holds the tree, else the source checkout.
fs::path dataRoot() {
  std::error_code ec;
  fs::path installed = SK_INSTALL_DATADIR;
  if (fs::is_directory(installed / "templates", ec)) return installed;
  return fs::path(SK_SOURCE_ROOT);
}

fs::path fromEnv(const char* var, const fs::path& fallback) {
  const char* v = std::getenv(var);
  if (v && *v) return fs::path(v);
  return fallback;
}
}  // namespace

fs::path dataTemplatesDir() { return fromEnv("SK_TEMPLATES_DIR", dataRoot() / "templates"); }
fs::path dataKernelsDir() { return fromEnv("SK_KERNELS_DIR", dataRoot() / "kernels"); }
fs::path dataRuntimeDir() { return fromEnv("SK_RUNTIME_DIR", dataRoot() / "runtime"); }
fs::path runtimeIncludeDir() { return dataRuntimeDir() / "cpu" / "include"; }
fs::path runtimeCpuSourceDir() { return dataRuntimeDir() / "cpu" / "src"; }
const char* libraryVersion() { return SK_VERSION_STRING; }

}  // namespace sk
