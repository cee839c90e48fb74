// The ascend back end's build steps, for both targets (DESIGN section 9): where bisheng and
// CANN's binutils are, and the exact argv of every step that turns generated
// Ascend C into a device ELF (target ascend, AscendRecipe.cpp) — plus the twin steps that build the same
// sources for the host simulator (target ascend-sim, AscendSimRecipe.cpp); the kernel JSON and the
// artifact bundles of both. Pure functions of their inputs (argv
// vectors, JSON text), so they are tested by comparison without a CANN
// toolkit; spawning them is the recipes' and the driver's job.
//
// Device build of one SuperKernel, as the reference generator does it:
//   1. bisheng -x cce ... --cce-aicore-arch=dav-c220-{cube,vec} -c sub.cpp -o sub.o   (each sub-kernel variant,
//      per core arch it runs on, with -D__SUPER_KERNEL_STATIC_BLOCK_NUM__=<its blocks> and the early-start
//      macros)
//   2. split-mode N > 1: llvm-objcopy --redefine-sym entry=entry_splitK sub.o sub.splitK.o   (K = 1..N-1)
//   3. bisheng ... -c superkernel.cpp -o sk.o   (per arch)
//   4. ld.lld -m aicorelinux -r -Ttext=0 sk.o sub*.o -o kernel.o   (relocatable: the runtime relocates it)
//   5. llvm-objcopy --localize-symbol=<each sub-kernel symbol> kernel.o   (only the entry stays global)
//   6. kernel.json beside kernel.o: name, block dim, core type, task ratio, SHA-256 of kernel.o.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"
#include "backends/ascend/AscendTypes.h"

namespace sk::ascend {

/// Environment lookup, injectable for tests.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup processEnv();

/// The CANN tools a device build runs.
struct AscendTools {
  std::filesystem::path bisheng;
  std::filesystem::path ldLld;    // CANN's ld.lld: only it knows -m aicorelinux
  std::filesystem::path objcopy;  // llvm-objcopy
  std::string foundVia;           // "SK_BISHENG", "ASCEND_HOME_PATH" or "PATH"
};

/// bisheng from $SK_BISHENG (a path, or a name looked up on PATH), else
/// $ASCEND_HOME_PATH/compiler/ccec_compiler/bin/bisheng (then
/// $ASCEND_HOME_PATH/bin/bisheng), else bisheng on PATH. ld.lld and
/// llvm-objcopy are taken from bisheng's own directory first (a system
/// ld.lld does not know aicorelinux), then the same CANN directories, then
/// PATH. A Compile error lists every place tried and what to set.
Expected<AscendTools> findAscendTools(const EnvLookup& env = processEnv());

/// What a tool the recipes run besides the compiler (ld.lld, llvm-objcopy) contributes to every object key:
/// "<name> <path>\n<its --version output>" (30 s at most; one that does not answer is "(--version failed)",
/// so the key still follows its path). Shared by the device and the simulator recipe.
std::string toolIdentity(std::string_view name, const std::filesystem::path& tool);

/// Options of one device (bisheng) or simulator (clang++) compile.
struct CompileStep {
  std::filesystem::path source;
  std::filesystem::path object;
  CoreArch arch = CoreArch::Vec;
  std::vector<std::filesystem::path> includeDirs;
  /// -D name=value in this order (name alone when value is empty): the
  /// variant's macros, its entry rename and scalar values.
  std::vector<std::pair<std::string, std::string>> defines;
  /// This object is a sub-kernel of a SuperKernel (not an unfused launch).
  bool subKernel = false;
  /// Sub-kernel: its block count, seen through AscendC::GetBlockNum().
  uint32_t blockNum = 0;
  /// Sub-kernel: honour its own SetNextTaskStart / WaitPreTaskEnd (early-start 1).
  bool kernelEarlyStart = false;
  /// split-mode of the SuperKernel (long calls when > 1).
  int splitMode = 1;
  /// compile-options from the option string: appended last, one argv item each.
  std::vector<std::string> extra;
};

/// bisheng's flags for one object of one core arch (the reference flag set): what the recipe passes, the
/// compiler and "-c <source> -o <object>" being the caller's (step.source and step.object are not read).
std::vector<std::string> deviceCompileFlags(const CompileStep& step);
/// The whole argv: bisheng, deviceCompileFlags, -c step.source -o step.object.
std::vector<std::string> deviceCompileArgv(const AscendTools& tools, const CompileStep& step);
/// ld.lld -m aicorelinux -r -Ttext=0 <objects> -o <output>.
std::vector<std::string> relocatableLinkArgv(const AscendTools& tools, const std::vector<std::filesystem::path>& objects,
                                             const std::filesystem::path& output);
/// llvm-objcopy --localize-symbol=S ... <object>, at most 256 symbols per call
/// (the reference's batching: argv stays far below ARG_MAX). Empty: nothing to do.
std::vector<std::vector<std::string>> localizeArgv(const AscendTools& tools, const std::filesystem::path& object,
                                                   const std::vector<std::string>& symbols);
/// The split-mode copy k of a sub-kernel object: its entry renamed.
std::string splitSymbol(std::string_view symbol, int k);
std::vector<std::string> splitCopyArgv(const std::filesystem::path& objcopy, const std::filesystem::path& input,
                                       const std::filesystem::path& output, std::string_view symbol, int k);

/// The -D list of an ascend object before its entry rename: the variant's
/// macros, then each static scalar parameter as SK_<NAME>=<literal> (name
/// upper-cased) unless a macro already defines that name. A shape macro
/// wins, as on cpu, where a kernel reads SK_ROWS before its rows argument;
/// defining both would clash, and the scalar, defined last, would silently
/// win on ascend only. `scalars`: (parameter name, C literal) in order.
std::vector<std::pair<std::string, std::string>> objectDefines(
    const std::vector<std::pair<std::string, std::string>>& macros,
    const std::vector<std::pair<std::string, std::string>>& scalars);

/// The simulator's macro reading runtime slot `slot` as `dtype`'s C type, the
/// value of -DSK_<NAME>= for a runtime scalar: "SK_ASCEND_RUNTIME_I64_0"
/// (kernel_operator.h defines it as a GM read through the launch's slot
/// addresses). dtypes i32, i64, u32, u64, f32, f64; another dtype, or a slot
/// at or past kMaxRuntimeValues, is BadInput.
Expected<std::string> runtimeScalarMacro(DType dtype, uint32_t slot);

/// Which build an object's compile is for.
enum class ObjectBuild : uint8_t { Simulator, Device };

/// The CompileStep of a specialised variant's object (arch, defines, block
/// count, own early start, compile-options; no source, object or include
/// folders): its macros, each scalar as SK_<NAME>=<literal> (objectDefines),
/// each runtime scalar as SK_<NAME>=<runtimeScalarMacro> (Simulator; where it
/// has none, SK_ASCEND_RUNTIME_INVALID, which traps: makeAscendStep refuses
/// such a step when it is emitted, after its objects were compiled, so that
/// object is never linked), its entry renamed to its symbol. Device (bisheng): a variant with runtime scalars is
/// BadInput naming `what` (the op) and the parameter: the device build has no
/// slot reads yet, only the simulator does.
Expected<CompileStep> variantCompileStep(const KernelVariant& v, const std::vector<std::string>& compileOptions,
                                         ObjectBuild build, const std::string& what);

/// The same sources built for the simulator with the host compiler: C++17,
/// -fPIC, exceptions (the simulator unwinds failed cores), the simulator's
/// kernel_operator.h first on the include path, and the device build's
/// macros so the code takes the same paths.
/// `flags` then "-c <source> -o <object>": what a recipe passes its compiler for one object.
std::vector<std::string> compileArgs(std::vector<std::string> flags, const std::filesystem::path& source,
                                     const std::filesystem::path& object);
/// The flags (no compiler, source or object, as deviceCompileFlags); simCompileArgv is the whole argv.
std::vector<std::string> simCompileFlags(const std::filesystem::path& simInclude, const CompileStep& step);
std::vector<std::string> simCompileArgv(const std::filesystem::path& cxx, const std::filesystem::path& simInclude,
                                        const CompileStep& step);
/// One shared object of every simulator object (the simulator dlopens it): its flags, and the whole argv.
std::vector<std::string> simLinkFlags();
std::vector<std::string> simLinkArgv(const std::filesystem::path& cxx, const std::vector<std::filesystem::path>& objects,
                                     const std::filesystem::path& output);

/// The JSON written beside a device ELF (what the runtime registers it with).
struct KernelMeta {
  std::string kernelName;  // the global entry
  std::string binFileName; // the ELF's file name without suffix
  uint32_t blockDim = 0;
  KernelType kernelType = KernelType::AivOnly;
  std::string sha256;      // of the ELF's bytes
};
/// {"binFileName", "binFileSuffix": ".o", "kernelName", "blockDim",
///  "coreType": "AiCore"|"VectorCore"|"MIX", "kernelType": "KERNEL_TYPE_...",
///  "taskRation": "1:2"|..., "sha256"}; keys sorted, two-space indent.
std::string kernelMetaJson(const KernelMeta& meta);
/// Parse and check it (a device refuses an artifact whose JSON disagrees with its bytes).
Expected<KernelMeta> parseKernelMetaJson(std::string_view text);

/// A device SuperKernel as the cache keeps it (target ascend, one file): the
/// relocatable kernel ELF, its kernel JSON and the launch descriptor, so an
/// artifact from any tier carries what the device needs to launch it. Layout:
///   "SK-ASCEND-KERNEL 1 <json bytes> <elf bytes>\n" <json> <elf>
/// where the JSON is {"kernel": <kernelMetaJson>, "launch": "<descriptor>"}.
struct DeviceBundle {
  KernelMeta meta;
  std::string launch;  // formatLaunchDescriptor text
  std::string elf;
};
std::string formatDeviceBundle(const DeviceBundle& bundle);
/// Parse and check: the header's sizes, the JSON, the descriptor, and the
/// ELF's SHA-256 against the kernel JSON's. BadInput naming what disagrees.
Expected<DeviceBundle> parseDeviceBundle(std::string_view bytes);

/// A simulator SuperKernel as the cache keeps it (target ascend-sim, one
/// file): the launch descriptor and the shared object the simulator loads,
/// so the descriptor travels beside the code, never inside it. Layout:
///   "SK-ASCEND-SIM 1 <launch bytes> <object bytes>\n" <launch> <object>
struct SimBundle {
  std::string launch;  // formatLaunchDescriptor text
  std::string object;  // the linked shared object
};
std::string formatSimBundle(const SimBundle& bundle);
/// The two parts of a bundle, viewed in place (valid while its bytes live:
/// loading copies the object once, into the memfd, and nowhere else).
struct SimBundleView {
  std::string_view launch;
  std::string_view object;
};
/// Parse and check the header's sizes (the descriptor is parsed by its
/// reader). BadInput naming what disagrees.
Expected<SimBundleView> parseSimBundle(std::string_view bytes);

}  // namespace sk::ascend
