#include "superkernel/cache/Trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sk {

std::string directoryTrustProblem(const std::filesystem::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return fmt::format("cannot stat: {}", std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != ::geteuid()) return fmt::format("it is owned by uid {}, not by this user (uid {})", st.st_uid, ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("it is writable by group or others (mode {:04o})", st.st_mode & 07777);
  return {};
}

std::string cacheRootTrustProblem(const std::filesystem::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0 && errno == ENOENT) return {};
  return directoryTrustProblem(p);
}

std::string fileTrustProblem(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != ::geteuid()) return fmt::format("owned by uid {}, not this user", st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return fmt::format("writable by group or others (mode {:04o})", st.st_mode & 07777);
  if (st.st_nlink != 1) return fmt::format("has {} hard links", st.st_nlink);
  return {};
}

std::string entryDirTrustProblem(const struct stat& st) {
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fmt::format("entry directory owner/mode not trusted (uid {}, mode {:04o})", st.st_uid, st.st_mode & 07777);
  return {};
}

}  // namespace sk
