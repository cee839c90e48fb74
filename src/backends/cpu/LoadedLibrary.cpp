#include "backends/cpu/LoadedLibrary.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "support/Fd.h"

namespace sk {

Expected<std::shared_ptr<LoadedLibrary>> LoadedLibrary::fromBytes(std::string_view bytes, const std::string& name) {
  std::string label = "sk-" + name.substr(0, 200);
  int fd = ::memfd_create(label.c_str(), MFD_CLOEXEC);
  std::string tmpPath;
  if (fd < 0) {
    // No memfd (old kernel / seccomp): a private, already-unlinked temp file.
    const char* tmp = std::getenv("TMPDIR");
    tmpPath = fmt::format("{}/sk-lib-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    fd = ::mkostemp(tmpPath.data(), O_CLOEXEC);
    if (fd < 0) return runtimeError(fmt::format("cannot load {}: no memfd and no temp file: {}", name, std::strerror(errno)));
    ::fchmod(fd, 0700);
  }
  if (!detail::writeAllFd(fd, bytes)) {
    int e = errno;
    ::close(fd);
    if (!tmpPath.empty()) ::unlink(tmpPath.c_str());
    return runtimeError(fmt::format("cannot load {}: writing its bytes: {}", name, std::strerror(e)));
  }
  // The fd stays open for the library's lifetime, so /proc/self/fd/N names
  // only this library while it is loaded (glibc matches loaded libraries by
  // name as well as by inode).
  std::string path = fmt::format("/proc/self/fd/{}", fd);
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!tmpPath.empty()) ::unlink(tmpPath.c_str());
  if (!h) {
    const char* e = ::dlerror();
    ::close(fd);
    return runtimeError(fmt::format("dlopen of {} failed: {}", name, e ? e : "unknown error"));
  }
  std::shared_ptr<LoadedLibrary> lib(new LoadedLibrary());
  lib->handle_ = h;
  lib->fd_ = fd;
  lib->name_ = name;
  return lib;
}

LoadedLibrary::~LoadedLibrary() {
  if (handle_) ::dlclose(handle_);
  if (fd_ >= 0) ::close(fd_);
}

void* LoadedLibrary::symbol(const char* sym) const {
  if (!handle_) return nullptr;
  return ::dlsym(handle_, sym);
}

}  // namespace sk
