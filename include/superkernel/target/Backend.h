// Back ends (DESIGN section 9): a target is one folder, src/backends/<name>/,
// that plugs four things into known seams. The plan, the driver's spawning /
// dedup / keys, the cache and the session are shared and never name a
// target.
//
//   MachineModel  what the planner reads: core pools, per-target defaults,
//                 options that do not apply, sync limits
//   Emitter       the emitter (codegen/Emitter.h): prints what the shared sync
//                 layout (codegen/SyncLayout.h) decided, from templates/<name>/
//                 (cpu, cuda). ascend prints in code, a section per part of
//                 the generated file (AscendSuperKernel.cpp): nearly every
//                 line there depends on the step (pools, split copies, per-pool
//                 programs), so a template would be placeholders around the
//                 same logic
//   BuildRecipe   how the driver builds: compiler and its variable, object
//                 and link argv, object post-processing, artifact name,
//                 runtime files in the key, symbol sizes
//   Device        where it runs: load verified artifact bytes, run(cores,
//                 stream, buffers), default stream, buffers, profiling
//
// A Backend bundles the factories; registerBackend() adds one (the built-in
// cpu back end is registered by the registry itself; a test or a plugin may
// register more from its own file). Builtin kernels live in
// kernels/<name>/, runtime sources in runtime/<name>/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/cache/Cache.h"
#include "superkernel/cache/Key.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Process.h"
#include "superkernel/driver/Toolchain.h"
#include "superkernel/target/Targets.h"
#include "superkernel/frontend/Options.h"
#include "superkernel/plan/MachineModel.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"

namespace sk {

// ---- build recipe ----------------------------------------------------------

/// What the driver lends a recipe to run the toolchain: spawn the compiler
/// (launcher prepended, failures carry the command line and diagnostics) and
/// memoise per driver what every link shares (a runtime object).
class RecipeTools {
 public:
  virtual ~RecipeTools() = default;
  virtual const Toolchain& toolchain() const = 0;
  /// DriverConfig::arch ("native", "generic", "sm_90", ...).
  virtual const std::string& arch() const = 0;
  /// The argv that runCompiler(args) spawns: <launcher...> <compiler> <args...>.
  virtual std::vector<std::string> command(const std::vector<std::string>& args) const = 0;
  /// Run command(args); `what` names the step in errors (which carry the
  /// command line and the diagnostics).
  virtual Expected<ProcessResult> runCompiler(const std::vector<std::string>& args, const std::string& what) const = 0;
  /// Run another tool of the recipe (argv[0] its path: an objcopy, a linker) under the same deadlines, with
  /// no launcher; failures as runCompiler's. Its identity belongs in the keys (postProcessKey).
  virtual Expected<ProcessResult> runTool(const std::vector<std::string>& argv, const std::string& what) const = 0;
  /// The result of `make` for `id`, computed once per driver (thread-safe).
  virtual Expected<std::shared_ptr<const std::string>> once(
      const std::string& id, const std::function<Expected<std::string>()>& make) const = 0;
};

/// One compiled sub-kernel object as the link sees it.
struct LinkObject {
  std::string key;                                  // its cache key (distinct objects only)
  std::shared_ptr<const std::string> bytes;         // the object file
};

struct LinkRequest {
  std::string_view source;                          // the generated SuperKernel source
  std::string_view launch;                          // the emitter's launch metadata (GeneratedSource::launch)
  std::vector<LinkObject> objects;                  // distinct, in first-use order
  const Options* options = nullptr;                 // the build options (compile-options, func-align)
  std::filesystem::path outputFile;                 // the artifact to write; scratch files go beside it
};

struct LinkOutput {
  std::vector<std::string> command;                 // the final command's argv (for the manifest)
  std::string diagnostics;                          // compiler stderr (warnings)
};

class BuildRecipe {
 public:
  virtual ~BuildRecipe() = default;
  /// The target this recipe builds for (its back end's name).
  virtual std::string_view target() const = 0;
  /// The compiler used when none is asked for ("clang++") and the variable
  /// that overrides it ("SK_CXX").
  virtual std::string_view defaultCompiler() const = 0;
  virtual std::string_view compilerEnvVar() const = 0;
  /// What a "compiler not found" error says to do instead of "install <compiler>" (where the target's
  /// toolkit is looked for, what to set); empty: that default.
  virtual std::string compilerHint() const { return {}; }
  /// What `arch` means for keys: e.g. "native" plus the host CPU's model and
  /// flags, so two machines never share a -march=native object.
  virtual std::string archKey(const std::string& arch) const { return arch; }
  /// Digest of every runtime file generated code or objects depend on
  /// (headers, runtime sources linked in); part of every key.
  virtual Expected<std::string> runtimeDigest() const = 0;

  /// Canonical flags of a sub-kernel object (no launcher, no output or input
  /// paths): hashed into the object's key.
  virtual std::vector<std::string> objectFlags(const KernelVariant& variant, const Options& options,
                                               const std::string& arch) const = 0;
  /// File name of an object inside its cache entry ("object.o").
  virtual std::string objectName() const { return "object.o"; }
  /// Arguments after the compiler that compile `variant` with `flags` into `output`.
  virtual std::vector<std::string> objectArgs(const std::vector<std::string>& flags, const KernelVariant& variant,
                                              const std::filesystem::path& output) const = 0;
  /// After compiling: rewrite the object in place if the target needs it
  /// (symbol renames, localisation). Default: nothing.
  virtual Status postProcessObject(const std::filesystem::path& object, const KernelVariant& variant,
                                   const RecipeTools& tools) const;
  /// The identity of the tools postProcessObject runs with `toolchain` (their path and version), hashed
  /// into every object key: a different tool makes a different object. Default: "" (none runs).
  virtual Expected<std::string> postProcessKey(const Toolchain& toolchain) const;
  /// Code bytes of `symbol` in an object (feeds preload sizes). Default: the
  /// ELF symbol table through LLVM Object.
  virtual Expected<uint64_t> symbolSize(std::string_view objectBytes, std::string_view symbol) const;

  /// Everything about the link that is not the source, the objects or the
  /// runtime: flags, scripts, extra inputs' flags. Hashed into the key.
  virtual std::string linkKey(const Options& options, const std::string& arch) const = 0;
  /// File name of the SuperKernel artifact in its cache entry ("superkernel.so").
  virtual std::string artifactName() const = 0;
  /// Build the artifact (compile the source, link with the objects).
  virtual Expected<LinkOutput> link(const LinkRequest& request, const RecipeTools& tools) const = 0;
};

// ---- device ------------------------------------------------------------------

/// A SuperKernel artifact loaded by a Device (a dlopen'ed library, a CUDA
/// module, a registered Ascend kernel); opaque to everything else.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
};

class Communicator;

struct DeviceOptions {
  uint32_t cores = 0;                               // cpu: executor workers; 0: the target's default
  /// The ranks collective ops run over (docs/COLLECTIVES.md); null: none (a
  /// collective fails its launch). cpu hands it to its executor.
  std::shared_ptr<Communicator> communicator{};
  uint32_t waitTimeoutMs = 0;                       // 0: the target's default
  uint32_t runTimeoutMs = 0;                        // launch watchdog; 0: the target's default
  /// Called with the watchdog's report when a launch makes no progress
  /// (cpu: ExecutorOptions::onRunTimeout); empty: log and abort.
  std::function<void(const std::string& report)> onRunTimeout{};
};

/// A launch of another stream that runs beside a SuperKernel (plan SideLaunch).
struct SideRun {
  const LoadedKernel* kernel = nullptr;     // an unfused step's
  void* const* buffers = nullptr;           // its manifest order
  uint32_t numBuffers = 0;
  uint32_t stream = 0;                      // the op list's: side launches of one stream run in order
  const std::string* label = nullptr;       // what errors call it
};

/// One launch of a launch graph (Device::captureGraph): an unfused step's kernel with its buffers.
struct GraphStep {
  const Artifact* artifact = nullptr;       // the step's (a graph loads its own instance of each)
  uint32_t cores = 1;                       // run()'s block_dim
  void* const* buffers = nullptr;           // its manifest order; the replays use these
  uint32_t numBuffers = 0;
};

/// How a launch graph launches its kernels: as run() does (Plain), or each but the first with programmatic
/// dependent launch (Pdl: CUDA's programmatic stream serialization; the plan must be built as the PDL variant,
/// CompileRequest::graphPdl).
enum class GraphLaunch : uint8_t { Plain, Pdl };

/// Launches captured once and replayed as one (a CUDA graph): what a GPU user gets from the same kernels
/// without fusion, the baselines of `sk-compile --run --baselines`. Every replay computes on the buffers the
/// capture was given. The graph holds its own instance of each step's module (so a run() of the plan with
/// other buffers does not redirect it) and frees them with itself.
class LaunchGraph {
 public:
  virtual ~LaunchGraph() = default;
  /// Enqueue one replay on stream(); Device::synchronize(stream()) waits for it.
  virtual Status launch() = 0;
  virtual void* stream() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string_view target() const = 0;
  /// The cores this device has (what created it asked for, or what it found). The planner plans for
  /// Backend::machineModel instead, which never depends on hardware found.
  virtual const MachineModel& machine() const = 0;
  /// Load verified artifact bytes (Artifact::bytes; never the file again).
  /// Loading one key twice may return the same LoadedKernel.
  virtual Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& artifact) = 0;
  /// The stream run() uses when the caller gives none.
  virtual void* defaultStream() = 0;
  /// Run a loaded SuperKernel on `cores` cores with the step's buffers (in
  /// manifest order; device memory). A failure says what went wrong.
  virtual Status run(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
                     uint32_t numBuffers) = 0;
  /// Run a SuperKernel that has side launches (MachineModel::sideLaunches),
  /// and `sides` beside it, in its plan's order: each starts once the
  /// SuperKernel signalled that the ops it needs are done, the SuperKernel's
  /// ops that need one wait until it completed. Returns when all of them
  /// finished: the first failure, or one saying which side launch never got
  /// its signal. Default: BadInput (a device whose machine model has no side
  /// launches never gets a plan with them).
  virtual Status runBeside(const LoadedKernel& kernel, uint32_t cores, void* stream, void* const* buffers,
                           uint32_t numBuffers, const std::vector<SideRun>& sides);
  /// What the launch watchdog's report calls the launches that follow (a
  /// step label and the op names by SuperKernel op index); both pointers stay
  /// valid until the next call. Default: nothing to name.
  virtual void setLaunchContext(const std::string* label, const std::vector<std::string>* opNames) {
    (void)label;
    (void)opNames;
  }

  /// Wait until the work run() enqueued on `stream` is complete; a launch
  /// that failed on the device reports here. Devices whose run() returns
  /// when the work is done (cpu, the ascend simulator) have nothing to wait
  /// for. Timers call it so that a timed run includes the work, not only its
  /// enqueueing.
  virtual Status synchronize(void* stream) {
    (void)stream;
    return Status::success();
  }

  /// Why this device cannot capture a launch graph of kind `kind` ("" when it can): a runtime without graph
  /// support, or without programmatic dependent launch (Pdl), whatever the kernels. Default: no graphs.
  virtual std::string launchGraphUnavailable(GraphLaunch kind) const;
  /// Loads its own instance of each step's module, runs `steps` once in order on them (untimed: it sets their
  /// buffer tables and launches), then captures them as one launch graph. The buffers then hold one run's
  /// results: restore them before a checked replay. Only steps whose launches can be replayed unchanged
  /// (unfused ones: Session::captureGraph checks).
  virtual Expected<std::unique_ptr<LaunchGraph>> captureGraph(const std::vector<GraphStep>& steps, GraphLaunch kind);

  /// true: buffers are plain host memory (run() takes host pointers).
  virtual bool hostMemory() const { return true; }
  virtual Expected<void*> allocate(size_t bytes) = 0;
  virtual void release(void* buffer) = 0;
  virtual Status upload(void* deviceDst, const void* hostSrc, size_t bytes) = 0;
  virtual Status download(void* hostDst, const void* deviceSrc, size_t bytes) = 0;

  /// Profiling: records while on; takeTrace() gives Chrome/Perfetto JSON,
  /// launch i named by opNamesByLaunch[i]. Default: not supported.
  virtual Status setProfiling(bool on);
  virtual Expected<std::string> takeTrace(const std::vector<std::vector<std::string>>& opNamesByLaunch);
};

// ---- registry ----------------------------------------------------------------

/// What a back end's static machine description may depend on: the op list's
/// arch and the cores asked for (SessionOptions::workers; 0: the back end's
/// default), never on hardware found. So `--plan-only` and the plan are the
/// same on a machine with or without the device, and so are the keys unless
/// the arch itself names the hardware found (`native`: the compiled code's
/// arch, as -march=native on cpu, whose machine is the host's executor).
struct MachineQuery {
  std::string arch = "native";
  uint32_t cores = 0;
};

/// What a calibration (Backend::calibrateSync) may build with: the session's own cache and the target's
/// toolchain, so a kernel it compiles is found, keyed and kept where the session's SuperKernels are (its cache
/// directory, read-only or not), never in another one.
struct CalibrationContext {
  std::shared_ptr<Cache> cache;
  const Toolchain* toolchain = nullptr;
};

struct Backend {
  std::string name;                                 // the op list's "target"
  /// Whose kernel sources and builtins it compiles ("cuda" for cuda-sim);
  /// empty: its own (kernelsFolderOf, target/Targets.h).
  std::string kernels;
  /// The back end of the machine the library runs on (one registers it: hostTargetName()). A Session
  /// sets it up when created, so a missing compiler is an error there, and the `compiler` option
  /// names its compiler.
  bool host = false;
  /// Keys its kernel declarations may carry (target/Targets.h); a key is one back end's. A back end that
  /// compiles another's kernels (`kernels`) reads that one's.
  std::vector<KernelAttribute> kernelAttributes;
  /// The machine the planner plans for (MachineModel), from the query alone: a static description of the
  /// target and arch. A Device's machine() may differ (the cores actually present); a launch that needs more
  /// than it has fails there, saying so.
  std::function<Expected<MachineModel>(const MachineQuery&)> machineModel;
  /// The emitter (reads templates/<name>/ now: errors name the file and line).
  std::function<Expected<std::shared_ptr<const Emitter>>()> makeEmitter;
  std::function<std::shared_ptr<const BuildRecipe>()> makeRecipe;
  std::function<Expected<std::unique_ptr<Device>>(const DeviceOptions&)> makeDevice;
  /// Optional: measures what the sync cost model compares (SyncCosts) on `device`, the machine present.
  /// Session::calibrateSync runs it and caches the result; empty: the target keeps its model's costs.
  std::function<Expected<SyncCosts>(Device& device, const CalibrationContext& context)> calibrateSync;
};

/// Add a back end (an error if the name is taken or a factory is missing).
Status registerBackend(Backend backend);
/// The back end registered as `name`; BadInput naming the registered targets
/// if none.
Expected<const Backend*> findBackend(std::string_view name);

}  // namespace sk
