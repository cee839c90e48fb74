// Kernel sources held in memory instead of files. A graph engine that
// generates or embeds kernel code hands the text over; it is stored once,
// content-addressed, under the session's cache directory
// (<cache root>/sources/<sha256 of name and text>/<name>) and declared from
// there, so everything downstream (cache keys hash the source bytes, the
// compiler's diagnostics name the file, sk-cache verify replays it) works as
// for a file. The same text is never written twice.
#pragma once

#include <filesystem>
#include <string_view>

#include "superkernel/frontend/Graph.h"
#include "superkernel/session/Session.h"
#include "superkernel/support/Error.h"

namespace sk {

/// Store `text` as <dir>/<sha256(name, text)[0:32]>/<fileName> (directories
/// 0700, the file written to a temporary name and renamed) and return the
/// path. `fileName` is a plain file name whose extension (.c, .cpp, .cc,
/// .cxx) picks the language; anything else is BadInput. An existing file is
/// reused only if its bytes are exactly `text`.
Expected<std::filesystem::path> storeKernelSource(const std::filesystem::path& dir, std::string_view fileName,
                                                  std::string_view text);

/// storeKernelSource under the session's cache root (sources/); a
/// memory-only session uses a private per-process directory removed at exit.
Expected<std::filesystem::path> storeKernelSource(Session& session, std::string_view fileName, std::string_view text);

/// Declare a kernel whose source is `text`: `decl.source` is the file name
/// (e.g. "my_add.cpp"); everything else as Graph::addKernel.
Status addKernelFromMemory(Graph& graph, Session& session, KernelDecl decl, std::string_view text);

}  // namespace sk
