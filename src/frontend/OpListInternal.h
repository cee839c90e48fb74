// Internals shared by the op-list parser, validator, writer, builtin lookup
// and the Graph recorder. Not installed.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

#include "superkernel/frontend/OpList.h"
#include "superkernel/frontend/OpListPaths.h"

namespace sk::detail {

// The op-list path helpers other stages use too (frontend/OpListPaths.h).
using oplist::opPath;
using oplist::pathError;
using oplist::pathKey;
using oplist::quote;
using oplist::resolveKernel;

using ojson = nlohmann::ordered_json;

/// ".key" for identifier-like keys, else `["key"]` (JSON-escaped), so a path
/// stays unambiguous for any key a hostile file may use.
/// "<origin>: <path>: <msg>", leaving out empty parts.
/// JSON-quoted string for messages (escapes control characters).
/// C identifier: [A-Za-z_][A-Za-z0-9_]*.
bool isIdentifier(std::string_view s);

/// Parse JSON text with the size and depth limits enforced and duplicate
/// object keys rejected (both before nlohmann builds deep values).
Expected<ojson> parseJsonText(std::string_view text, const std::string& origin, const OpListLimits& limits);

/// One kernel object of the op-list format (also the format of a builtin's
/// json file). `path` is its JSON path for messages.
Expected<KernelDecl> parseKernelObject(const ojson& j, const std::string& origin, const std::string& path,
                                       const std::filesystem::path& baseDir, const std::string& name,
                                       const OpListLimits& limits);
ojson writeKernelObject(const KernelDecl& k);

/// Builtin lookup in one target's directory (tests use fixtures).
Expected<KernelDecl> findBuiltinKernelIn(const std::filesystem::path& dir, std::string_view name);
/// Builtin lookup for `target` under a kernels root (<root>/<target>/<name>.json).
Expected<KernelDecl> findBuiltinKernelFor(const std::filesystem::path& kernelsRoot, std::string_view name,
                                          std::string_view target);

/// A declared kernel with its parameters available, for `target`: builtins
/// are looked up (name kept as the op list's key, `builtin` kept); a
/// "sources" map gives the target's source (or an error naming the targets
/// it has); others are copied.
/// resolveKernel, or when `target` lacks the kernel, another target's
/// declaration (for the op list's checks: --target may choose another target
/// than the list's; planOpList's resolveKernels makes the missing one an error).
Expected<KernelDecl> resolveKernelForChecks(const KernelDecl& k, std::string_view target);

/// The checks of one launch op against its (resolved) kernel and the list's
/// buffers: args vs params, kinds, dtypes, views in bounds, block_dim, macros.
Status validateCollective(const OpList& list, size_t opIndex, const OpListLimits& limits);
Status validateLaunch(const OpList& list, size_t opIndex, const KernelDecl& resolved, const OpListLimits& limits);
/// Checks of one kernel declaration (params, entry, macros, source file).
Status validateKernel(const OpList& list, size_t kernelIndex, const KernelDecl& resolved, const OpListLimits& limits);
/// Checks of one buffer (shape, byte size, init file); adds to `totalBytes`.
Status validateBuffer(const OpList& list, size_t bufferIndex, const OpListLimits& limits, uint64_t& totalBytes);

/// An option string (the list's `options` or a scope's): checkOptionString
/// (Options.h), errors carrying `path`.
Status checkOptionsText(const OpList& list, const std::string& text, const std::string& path);


}  // namespace sk::detail
