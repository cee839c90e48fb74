// Trust checks of the on-disk cache (DESIGN section 6): what may be loaded
// from a directory or file. One copy: the cache's root setup, its entry check
// and the tools (sk-cache's warning before it opens a root) all use these.
// Each returns "" when trusted, else why not, in words for a message.
#pragma once

#include <filesystem>
#include <string>

struct stat;

namespace sk {

/// A cache directory (root, its subdirectories): must exist, not be a
/// symbolic link, be a directory owned by the effective user and not be
/// writable by group or others.
std::string directoryTrustProblem(const std::filesystem::path& dir);
/// Like directoryTrustProblem, but a directory that does not exist yet is
/// fine (the cache creates it, mode 0700).
std::string cacheRootTrustProblem(const std::filesystem::path& dir);
/// A file inside an entry (from fstat of the opened fd): a regular file
/// owned by the user, not group/other writable, with one link.
std::string fileTrustProblem(const struct stat& st);
/// An entry directory (from fstat of the opened fd): owned by the user, not
/// group/other writable.
std::string entryDirTrustProblem(const struct stat& st);

}  // namespace sk
