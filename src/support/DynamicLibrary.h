// A runtime library found by dlopen: the device back ends (CUDA runtime, CANN's ascendcl and hccl) load their
// vendor libraries this way so that the project builds, and a Session is created, on a machine without them;
// the first call that needs one answers what is missing.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace sk {

struct OpenedLibrary {
  void* handle = nullptr;  // null: none of the candidates loaded
  std::string path;        // the candidate that loaded
  std::string tried;       // one "\n  tried <candidate>: <dlerror>" per candidate that did not
};

/// The first of `candidates` that dlopen loads. RTLD_GLOBAL, because generated modules that link the same
/// library (DT_NEEDED) must bind to this instance, not a second copy; never closed, because what was made
/// with it (devices, communicators) lives until the process ends.
OpenedLibrary openFirstLibrary(const std::vector<std::string>& candidates);

/// fn = the symbol `name` of `handle`; when it is absent, `name` is appended to *missing (comma separated)
/// unless missing is null (an optional symbol). True when found.
template <typename F>
bool bindSymbol(void* handle, const char* name, F& fn, std::string* missing) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (!fn && missing) *missing += (missing->empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

}  // namespace sk
