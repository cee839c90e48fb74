// The scratch files of a BuildRecipe::link (target/Backend.h) that the cpu,
// cuda and ascend-simulator recipes write alike: where they go and how a
// linked object is named. Shared by the back ends under src/target/ so the
// three cannot drift apart; private to the library.
#pragma once

#include <cstddef>
#include <filesystem>

#include "superkernel/support/Error.h"
#include "superkernel/target/Backend.h"

namespace sk {

/// The linker version script of the cpu and cuda SuperKernels: `run` is the
/// one exported symbol (the generated source marks it extern "C", visible).
inline constexpr const char* kRunOnlyVersionScript = "{\n  global: run;\n  local: *;\n};\n";

/// The folder of a link's scratch files: beside the artifact ("." for a bare file name).
std::filesystem::path linkScratchDir(const LinkRequest& req);

/// Writes linked object `index` as <dir>/obj_<index>_<first 12 of its key>.o
/// and returns its path; an object without bytes is an Internal error.
Expected<std::filesystem::path> writeLinkObject(const std::filesystem::path& dir, size_t index,
                                                const LinkObject& object);

}  // namespace sk
