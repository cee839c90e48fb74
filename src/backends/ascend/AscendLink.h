// The link both ascend recipes run (target ascend: bisheng, ld.lld -r; target ascend-sim: the host
// compiler, -shared), up to their own final step: the launch descriptor beside the source checked against
// the objects, the SuperKernel source written and compiled by the recipe, each sub-kernel object written
// with its split-mode copies (llvm-objcopy --redefine-sym). Written once so the two links cannot drift
// apart; each recipe then links the inputs its way and writes its bundle (AscendBuild.h).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "superkernel/support/Error.h"
#include "superkernel/target/Backend.h"
#include "backends/ascend/AscendBackend.h"

namespace sk::ascend {

/// What the shared part of a link leaves for the recipe's final step.
struct LinkInputs {
  LaunchDescriptor launch;                     // parsed from LinkRequest::launch
  std::filesystem::path dir;                   // the scratch folder (linkScratchDir)
  std::vector<std::filesystem::path> objects;  // the SuperKernel's own objects, then each sub-kernel object and its copies
  std::vector<std::string> subKernelSymbols;   // fused: every sub-kernel symbol and its copies' (what stays local)
  std::string diagnostics;                     // the compilers' stderr so far
};

/// The recipe's compile of the SuperKernel source (written at `source`): the objects it made, which the
/// link puts first; its compilers' stderr appended to `diagnostics`.
using CompileSuperKernel = std::function<Expected<std::vector<std::filesystem::path>>(
    const std::filesystem::path& source, const LaunchDescriptor& launch, std::string& diagnostics)>;

/// The shared part of both links. `objcopy` makes the split-mode copies (empty: none was found, and a step
/// that needs copies is a Compile error saying so).
Expected<LinkInputs> prepareLink(const LinkRequest& req, const RecipeTools& tools, const std::filesystem::path& objcopy,
                                 const CompileSuperKernel& compile);

}  // namespace sk::ascend
