// Fused sub-kernels must not collide (issue 10): every kernel object keeps
// only its entry symbol global; each other defined global or weak symbol is
// renamed "<name>.sk.<entry>" and made local before the object is cached.
//
// Why rename as well as localize: C++ inline functions and templates are
// weak symbols in COMDAT groups, and the linker keeps one group per
// signature *name* across all objects. Two kernels (or two macro variants of
// one kernel) with an inline helper of the same name but different bodies
// would silently share one body; localizing alone leaves the group shared
// and the second object pointing into a discarded section. A per-object name
// makes every kernel a separate program again, as it is when run unfused.
//
// The rewrite is done by llvm-objcopy or objcopy, spawned with argv and
// found like the compiler: $SK_OBJCOPY, else beside the compiler, else on
// PATH (llvm-objcopy first for clang, objcopy first for gcc).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/driver/Process.h"
#include "superkernel/driver/Toolchain.h"
#include "superkernel/support/Error.h"

namespace sk {

struct ObjcopyTool {
  std::filesystem::path path;
  std::string identity;  // recipe version, path and `--version` line: part of every object key
};

/// The objcopy for `tc` (memoized per compiler). Compile error naming what
/// was searched and SK_OBJCOPY when there is none.
Expected<ObjcopyTool> findObjcopy(const Toolchain& tc);

/// Defined symbols with global, weak or unique binding of an ELF object.
Expected<std::vector<std::string>> definedGlobalSymbols(std::string_view objectBytes);

/// Rewrites `object` in place: `keep` stays global, every other defined
/// global/weak symbol becomes local under the name "<name>.sk.<keep>".
Status localizeObjectSymbols(const ObjcopyTool& tool, const std::filesystem::path& object, const std::string& keep,
                             const ProcessOptions& options);

}  // namespace sk
