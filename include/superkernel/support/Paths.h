// Where superkernel's own data lives at run time: templates (builtin kernels,
// per-target source templates) and the runtime headers/sources that generated
// code is compiled against. Installed tree first, else the source tree;
// SK_TEMPLATES_DIR / SK_RUNTIME_DIR override (for relocated installs).
#pragma once

#include <filesystem>
#include <string>

namespace sk {

std::filesystem::path dataTemplatesDir();     // .../templates
std::filesystem::path runtimeIncludeDir();    // .../runtime/include
std::filesystem::path runtimeCpuSourceDir();  // .../runtime/src/cpu
/// The library version ("0.1.0"); part of every cache key.
const char* libraryVersion();

}  // namespace sk
