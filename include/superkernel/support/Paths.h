// Where superkernel's own data lives at run time, one folder per target in
// each: templates/<target>/ (source templates of the emitters),
// kernels/<target>/ (builtin kernels: declarations and sources) and
// runtime/<target>/ (headers and sources generated code is compiled
// against). Installed tree first, else the source tree; SK_TEMPLATES_DIR /
// SK_KERNELS_DIR / SK_RUNTIME_DIR override (for relocated installs).
#pragma once

#include <filesystem>
#include <string>

namespace sk {

std::filesystem::path dataTemplatesDir();     // .../templates
std::filesystem::path dataKernelsDir();       // .../kernels
std::filesystem::path dataRuntimeDir();       // .../runtime
std::filesystem::path runtimeIncludeDir();    // .../runtime/cpu/include
std::filesystem::path runtimeCpuSourceDir();  // .../runtime/cpu/src
/// The library version ("0.1.0"); part of every cache key.
const char* libraryVersion();

}  // namespace sk
