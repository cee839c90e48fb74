// What the BuildRecipe::link (target/Backend.h) of the cpu, cuda and
// ascend-simulator recipes do alike: where the scratch files go, how a
// linked object is named, and (cpu, cuda) how the last command's result
// becomes the LinkOutput. Shared by the back ends under src/backends/ so they
// cannot drift apart; private to the library.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"
#include "superkernel/target/Backend.h"

namespace sk {

/// The linker version script of the cpu SuperKernels: `run` is the
/// one exported symbol (the generated source marks it extern "C", visible).
inline constexpr const char* kRunOnlyVersionScript = "{\n  global: run;\n  local: *;\n};\n";

/// The folder of a link's scratch files: beside the artifact ("." for a bare file name).
std::filesystem::path linkScratchDir(const LinkRequest& req);

/// Writes linked object `index` as <dir>/obj_<index>_<first 12 of its key>.o
/// and returns its path; an object without bytes is an Internal error.
Expected<std::filesystem::path> writeLinkObject(const std::filesystem::path& dir, size_t index,
                                                const LinkObject& object);

/// The files a cpu or cuda link compiles and links, all in linkScratchDir.
struct RunOnlyLinkInputs {
  std::filesystem::path dir;
  std::filesystem::path source;                 // the generated SuperKernel, <dir>/<sourceName>
  std::filesystem::path versionScript;          // kRunOnlyVersionScript, <dir>/exports.map
  std::vector<std::filesystem::path> objects;   // writeLinkObject, in req.objects order
};

/// Writes the source, the version script and the objects of `req`, in that order.
Expected<RunOnlyLinkInputs> writeRunOnlyLinkInputs(const LinkRequest& req, std::string_view sourceName,
                                                   std::string_view versionScript = kRunOnlyVersionScript);

/// Runs the link's final command (tools.runCompiler(args, what)); its argv
/// (tools.command) and the compiler's stderr are the LinkOutput.
Expected<LinkOutput> runLinkCommand(const RecipeTools& tools, const std::vector<std::string>& args,
                                    const std::string& what);

}  // namespace sk
