// Test scaffolding, not a build path of the library: the emitter's tests
// (EmitterTest.cpp) build hand-made AscendSteps that no plan made, so they
// cannot go through the driver and the cache; everything the library builds
// goes through the ascend-sim recipe (src/backends/ascend/AscendSimRecipe.cpp).
//
// Building an ascend step for the simulator (DESIGN section 9): the same
// Ascend C the device build compiles, compiled by the host compiler against
// runtime/ascend/sim/include, split-mode copies made with llvm-objcopy
// --redefine-sym exactly as for the device, linked into one shared object the
// simulator loads. Every step is one spawned process with argv; a failure
// carries the command line and the compiler's output.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "superkernel/support/Error.h"
#include "backends/ascend/AscendSuperKernel.h"
#include "backends/ascend/AscendStep.h"

namespace sktest::ascend {

using sk::Expected;
using sk::Status;
using sk::ascend::AscendSource;
using sk::ascend::AscendStep;

/// Runs one tool of a simulator build (compiler, llvm-objcopy) with argv and
/// `timeout`; a failure is a Compile error carrying the tool, how it ended,
/// the command line and its output. Shared by buildForSimulator and the
/// ascend recipe's link, which run the same tools.
Status runSimTool(const std::vector<std::string>& argv, std::chrono::minutes timeout);

struct SimBuildConfig {
  std::filesystem::path cxx;         // host C++ compiler (clang++)
  std::filesystem::path objcopy;     // host llvm-objcopy (split-mode copies)
  std::filesystem::path simInclude;  // runtime/ascend/sim/include
  std::filesystem::path workDir;     // objects and the shared object go here
  /// Prepended to every compiler argv (SK_COMPILER_LAUNCHER, e.g. ccache); never to llvm-objcopy.
  std::vector<std::string> launcher;
  /// Compiles run at once.
  unsigned jobs = 2;
};

/// Defaults: clang++ and llvm-objcopy from PATH, the source tree's simulator headers,
/// $SK_COMPILER_LAUNCHER, $SK_BUILD_JOBS (else the hardware's threads, at most 8).
Expected<SimBuildConfig> defaultSimBuildConfig(const std::filesystem::path& workDir);

struct SimArtifact {
  std::filesystem::path sharedObject;
  std::string entry;  // fused: the SuperKernel; unfused: the sub-kernel's symbol
};

/// Build a fused step (source = its printed SuperKernel: the text, built with its launch descriptor's split and
/// entry) or an unfused one (source null: its one sub-kernel).
Expected<SimArtifact> buildForSimulator(const AscendStep& step, const AscendSource* source, const SimBuildConfig& config);

/// Many steps into one shared object (a whole plan: its unfused ops share objects, every compile runs in one
/// parallel batch and there is one link). entries[i] is item i's entry.
struct SimBuildItem {
  const AscendStep* step = nullptr;
  const AscendSource* source = nullptr;  // fused steps only
};
struct SimLibrary {
  std::filesystem::path sharedObject;
  std::vector<std::string> entries;
};
Expected<SimLibrary> buildForSimulator(const std::vector<SimBuildItem>& items, const SimBuildConfig& config,
                                       const std::string& libraryName);

}  // namespace sktest::ascend
