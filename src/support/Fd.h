// Small POSIX file helpers (owned fds, whole-file reads and writes) shared by
// the cache, the driver and the back ends. Private to the library.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include "superkernel/support/Error.h"

namespace sk::detail {

/// An owned file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

inline std::string errnoText(int e) { return std::strerror(e); }

/// Read everything from fd (from its current offset).
inline Expected<std::string> readAllFd(int fd, const std::string& what) {
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ioError("cannot read " + what + ": " + errnoText(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

/// Read a whole file (symlinks followed: for sources and runtime files; the
/// cache opens its entries itself with O_NOFOLLOW).
inline Expected<std::string> readFileBytes(const std::filesystem::path& p) {
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ioError("cannot read " + p.string() + ": " + errnoText(errno));
  return readAllFd(fd.get(), p.string());
}

inline bool writeAllFd(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

/// Write a file (O_EXCL, no symlink following), optionally fsync'ed.
inline Status writeNewFile(const std::filesystem::path& p, std::string_view bytes, mode_t mode, bool sync) {
  UniqueFd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd.valid()) return ioError("cannot create " + p.string() + ": " + errnoText(errno));
  if (!writeAllFd(fd.get(), bytes)) return ioError("cannot write " + p.string() + ": " + errnoText(errno));
  if (sync && ::fsync(fd.get()) != 0) return ioError("cannot fsync " + p.string() + ": " + errnoText(errno));
  return Status::success();
}

inline Status fsyncDir(const std::filesystem::path& p) {
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ioError("cannot open " + p.string() + ": " + errnoText(errno));
  if (::fsync(fd.get()) != 0) return ioError("cannot fsync " + p.string() + ": " + errnoText(errno));
  return Status::success();
}

}  // namespace sk::detail
