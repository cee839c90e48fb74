// Telling "the disk is full" apart from other build failures (private to
// the cache). Space can run out at any step of a build: creating the staging
// directory, the compiler writing its object, the SuperKernel's scratch
// files, publishing the manifest. Each surfaces differently (an errno, a
// compiler diagnostic, an I/O error), so the cache asks one question of all
// of them and handles the answer in one way (docs/CACHE.md, "A full disk").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace sk::detail {

/// ENOSPC or EDQUOT.
bool isNoSpace(int err);

/// A build that failed with `message` in `dir` ran out of space: the message
/// carries the no-space errno text (ours, or the compiler's or linker's), or
/// the file system of `dir` has (almost) nothing left.
bool buildRanOutOfSpace(const std::filesystem::path& dir, std::string_view message);

/// Where private temporary caches go: $TMPDIR when absolute, else /tmp.
std::filesystem::path privateTempBase();

/// The first line of a (possibly multi-line) message.
std::string firstLine(std::string_view message);

}  // namespace sk::detail
