// A dlopen'ed SuperKernel shared object (private to the cpu back end). The
// device loads exactly the bytes the cache hashed: they are copied into a
// memfd (memfd_create) and dlopen'ed through /proc/self/fd/N, so nothing on
// disk can change them after the check. The library is dlclose'd on
// destruction (after which the memfd is closed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "superkernel/support/Error.h"
#include "superkernel/target/cpu/Cpu.h"

namespace sk {

class LoadedLibrary {
 public:
  /// Load shared-object bytes (RTLD_NOW | RTLD_LOCAL). `name` labels the
  /// memfd and errors. ErrorKind::Runtime on dlopen failure (dlerror text).
  static Expected<std::shared_ptr<LoadedLibrary>> fromBytes(std::string_view bytes, const std::string& name);

  ~LoadedLibrary();
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  /// dlsym; nullptr if absent.
  void* symbol(const char* name) const;
  /// dlsym("run"); nullptr if absent.
  SuperKernelRunFn run() const { return reinterpret_cast<SuperKernelRunFn>(symbol("run")); }
  const std::string& name() const { return name_; }
  void* handle() const { return handle_; }

 private:
  LoadedLibrary() = default;
  void* handle_ = nullptr;
  int fd_ = -1;
  std::string name_;
};

}  // namespace sk
