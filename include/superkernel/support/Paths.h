// Where superkernel's own data lives at run time, one folder per target in
// each: templates/<target>/ (source templates of the emitters),
// kernels/<target>/ (builtin kernels: declarations and sources) and
// runtime/<target>/ (headers and sources generated code is compiled
// against).
//
// Found relative to the binary that holds this code, never through a path
// baked in at configure time, so an install prefix can be moved or copied:
// for the directory D of the shared library (or, when linked statically, of
// the executable) and up to three of D's parents, <dir>/share/superkernel is
// used if it holds templates/. An install puts the data at
// <prefix>/share/superkernel (bin/ and lib/ are one level below the prefix);
// a build tree gets <build>/share/superkernel, links into the source tree
// made at configure time. A static library's code lives in the consumer's
// executable, which may be anywhere: the installed CMake package therefore
// compiles a one-line registration of <prefix>/share/superkernel into the
// consumer (setDefaultDataDir), which wins over the search. Overrides:
// SK_DATA_DIR (the directory holding templates/, kernels/ and runtime/), and
// SK_TEMPLATES_DIR / SK_KERNELS_DIR / SK_RUNTIME_DIR (one part each).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

std::filesystem::path dataTemplatesDir();     // .../templates
std::filesystem::path dataKernelsDir();       // .../kernels
std::filesystem::path dataRuntimeDir();       // .../runtime
/// Use `dir` (holding templates/, kernels/ and runtime/) unless SK_DATA_DIR
/// is set; for embedders that link statically or ship the data elsewhere.
/// Call before the first compile (the location is read once).
void setDefaultDataDir(const std::filesystem::path& dir);
/// Ok if the data directory was found (or overridden); else an Io error that
/// lists every directory searched and the variables that override them.
Status checkDataDir();
/// The directories searched for share/superkernel, in order (for messages).
std::vector<std::filesystem::path> dataDirCandidates();
/// The library version ("0.1.0"); part of every cache key.
const char* libraryVersion();

}  // namespace sk
