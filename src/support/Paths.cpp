#include "superkernel/support/Paths.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace sk {
namespace fs = std::filesystem;

namespace {
const char* env(const char* var) {
  const char* v = std::getenv(var);
  return v && *v ? v : nullptr;
}

// The file mapped at `addr` in this process, from /proc/self/maps: always an
// absolute path, unlike dladdr's dli_fname, which repeats the (possibly
// relative) name the library was dlopen'ed by, e.g. by Python's ctypes.
fs::path mappedFile(const void* addr) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<uintptr_t>(addr);
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || a < lo || a >= hi) continue;
    const size_t slash = line.find('/');
    return slash == std::string::npos ? fs::path() : fs::path(line.substr(slash));
  }
  return {};
}

// The directories of the binaries holding this code: the shared library when
// built shared (or libsuperkernel_c.so), and the executable (/proc/self/exe),
// which is the holder when linked statically.
std::vector<fs::path> binaryDirs() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  fs::path holder = mappedFile(reinterpret_cast<const void*>(&dataDirCandidates));
  if (holder.empty()) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&dataDirCandidates), &info) && info.dli_fname && info.dli_fname[0] == '/')
      holder = info.dli_fname;
  }
  if (!holder.empty()) {
    fs::path canonical = fs::weakly_canonical(holder, ec);
    dirs.push_back((ec ? holder : canonical).parent_path());
  }
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && (dirs.empty() || exe.parent_path() != dirs.front())) dirs.push_back(exe.parent_path());
  return dirs;
}

fs::path& registeredDataDir() {
  static fs::path dir;
  return dir;
}

// The registered directory, else the first candidate holding templates/,
// else empty.
fs::path foundDataRoot() {
  static const fs::path root = [] {
    std::error_code ec;
    if (!registeredDataDir().empty()) return registeredDataDir();
    for (const fs::path& c : dataDirCandidates())
      if (fs::is_directory(c / "templates", ec)) return c;
    return fs::path();
  }();
  return root;
}

fs::path dataRoot() {
  if (const char* v = env("SK_DATA_DIR")) return fs::path(v);
  return foundDataRoot();
}
}  // namespace

void setDefaultDataDir(const fs::path& dir) { registeredDataDir() = dir; }

std::vector<fs::path> dataDirCandidates() {
  std::vector<fs::path> out;
  for (const fs::path& dir : binaryDirs()) {
    fs::path d = dir;
    for (int up = 0; up <= 3 && !d.empty(); ++up) {
      fs::path c = d / SK_DATA_SUBDIR;
      bool seen = false;
      for (const fs::path& o : out) seen = seen || o == c;
      if (!seen) out.push_back(c);
      if (d == d.parent_path()) break;
      d = d.parent_path();
    }
  }
  return out;
}

Status checkDataDir() {
  std::error_code ec;
  if (const char* v = env("SK_DATA_DIR")) {
    if (fs::is_directory(fs::path(v) / "templates", ec)) return {};
    // The user's own setting is wrong: bad input (exit 2 in the tools), like any malformed SK_* variable, and
    // the same whichever stage meets it first (a builtin kernel at parse time, the templates when compiling).
    return badInput(std::string("SK_DATA_DIR=") + v + " has no templates/ directory (it must name the directory "
                    "holding templates/, kernels/ and runtime/, e.g. <prefix>/" SK_DATA_SUBDIR ")");
  }
  if (env("SK_TEMPLATES_DIR") && env("SK_KERNELS_DIR") && env("SK_RUNTIME_DIR")) return {};
  if (!foundDataRoot().empty() && fs::is_directory(foundDataRoot() / "templates", ec)) return {};
  std::string searched;
  if (!registeredDataDir().empty()) searched += "\n  " + registeredDataDir().string() + " (registered)";
  for (const fs::path& c : dataDirCandidates()) searched += "\n  " + c.string();
  return ioError("superkernel's data directory (templates/, kernels/, runtime/) was not found; searched:" + searched +
                 "\nset SK_DATA_DIR to <install prefix>/" SK_DATA_SUBDIR " (or SK_TEMPLATES_DIR, SK_KERNELS_DIR and SK_RUNTIME_DIR)");
}

fs::path dataTemplatesDir() {
  if (const char* v = env("SK_TEMPLATES_DIR")) return fs::path(v);
  return dataRoot() / "templates";
}
fs::path dataKernelsDir() {
  if (const char* v = env("SK_KERNELS_DIR")) return fs::path(v);
  return dataRoot() / "kernels";
}
fs::path dataRuntimeDir() {
  if (const char* v = env("SK_RUNTIME_DIR")) return fs::path(v);
  return dataRoot() / "runtime";
}
const char* libraryVersion() { return SK_VERSION_STRING; }

}  // namespace sk
