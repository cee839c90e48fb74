// The Session ties the pipeline together: op list (or Graph) -> FusionPlan ->
// generated source per step -> compiled, cached artifacts -> loaded and run
// on the target's Device. It names no target: per target in use it holds the
// back end's emitter, toolchain, device and drivers (target/Backend.h).
//
//   auto session = sk::Session::create();             // cpu device + toolchain + cache
//   auto list = sk::loadOpList("model.json");
//   if (!session || !list) return 1;
//   auto fused = (*session)->compile(*list);           // CompiledPlan
//   sk::CompileRequest reference;
//   reference.fuse = false;                            // the unfused reference
//   auto ref = (*session)->compile(*list, reference);
//   auto a = sk::BufferSet::create(*list);             // identical initial contents
//   auto b = sk::BufferSet::create(*list);
//   if (!fused || !ref || !a || !b) return 1;
//   if (!(*session)->run(*fused, *a) || !(*session)->run(*ref, *b)) return 1;
//   auto diff = a->compare(*b);                        // nullopt inside: bit-identical
//   return diff && !*diff ? 0 : 1;
//
// (tests/docs/check_snippets.cmake compiles the lines above.)
//
// Thread-safety: compile() may be called from several threads at once (the
// cache single-flights identical keys). run() may be called from several
// threads at once, on one CompiledPlan or on several: a run only reads the
// plan and fills argument arrays of its own (its thread's scratch), and the
// device serializes the launches, so each run computes what it would alone
// as long as runs at the same time are given different buffers (runs that
// share an output buffer race on its contents, as any two writers would).
// The test: tests/runtime/ConcurrentRunTest.cpp, under TSan in CI.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/cache/Cache.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Driver.h"
#include "superkernel/frontend/Graph.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/session/BufferSet.h"
#include "superkernel/support/Error.h"
#include "superkernel/target/Backend.h"

namespace sk {

/// Progress of compile(): stage "objects" (distinct sub-kernel objects) or
/// "superkernels" (steps built), `done` of `total`. Called serially.
using CompileProgressFn = std::function<void(std::string_view stage, size_t done, size_t total)>;

class Communicator;
class Device;
class LoadedKernel;

struct SessionOptions {
  /// Device cores (cpu: executor workers); 0: the target's default (cpu:
  /// SK_NUM_WORKERS, else hardware threads).
  uint32_t workers = 0;
  uint32_t waitTimeoutMs = 0;               // 0: SK_WAIT_TIMEOUT_MS, else 10000
  uint32_t runTimeoutMs = 0;                // launch watchdog; 0: SK_RUN_TIMEOUT_MS, else 120000
  std::function<void(const std::string& report)> onRunTimeout{};  // launch watchdog report; empty: log and abort
  std::filesystem::path cacheDir;           // empty: $SK_CACHE_DIR, $XDG_CACHE_HOME/superkernel, ~/.cache/superkernel
  bool diskCache = true;                    // false: memory-only cache
  /// Build every object and SuperKernel again instead of loading it from the
  /// cache, replacing the disk entries (sk-compile --force-recompile). false:
  /// $SK_FORCE_RECOMPILE=1 still forces it.
  bool forceRecompile = false;
  RemoteCacheConfig remoteCache;            // shared Redis tier; url empty: $SK_REMOTE_CACHE (docs/CACHE.md)
  bool readOnlyCache = false;               // true: use the disk cache's entries, never write to it (sk-cache verify)
  /// Compiler of the cpu target; empty: $SK_CXX, else clang++. Other
  /// targets use their recipe's default and variable.
  std::string compiler;
  unsigned jobs = 0;                        // parallel compiles; 0: hardware threads
  /// Option string merged over every op list's own options (later keys win),
  /// e.g. sk-compile --options.
  std::string options;
  CompileProgressFn progress;
  /// The ranks of this process's collective ops (docs/COLLECTIVES.md):
  /// sk::mpiCommunicator() (superkernel/runtime/Communicator.h) under mpirun.
  /// Null: a plan with a collective fails when it runs, naming the op.
  std::shared_ptr<Communicator> communicator{};
};

struct CompileRequest {
  /// Merged over the op list's options and SessionOptions::options (wins over both).
  std::string options;
  /// false: the unfused reference (every launch its own step).
  bool fuse = true;
  /// Target override (sk-compile --target); empty: the op list's.
  std::string target;
  /// With fuse = false: build every step as the Graph + PDL variant (SuperKernelPlan::graphPdl), which
  /// captureGraph(..., GraphLaunch::Pdl) replays with programmatic dependent launches (`sk-compile
  /// --baselines graph-pdl`). Its text differs, so its keys do; BadInput with fuse = true.
  bool graphPdl = false;
};

/// One executable step: a SuperKernel (or one unfused op) loaded and ready.
struct CompiledStep {
  size_t stepIndex = 0;                     // into CompiledPlan::plan.steps
  std::string name;
  GeneratedSource source;                   // text + manifest (sk-compile --emit-source)
  SuperKernelArtifact artifact;             // verified bytes, held cache entry
  std::shared_ptr<const LoadedKernel> kernel;  // loaded by the target's Device
  uint32_t numCores = 1;                    // run()'s block_dim
  std::vector<uint32_t> listBuffers;        // manifest order -> OpList buffer index
  std::vector<std::string> opNames;         // for traces (profiling ids)
  std::string label;                        // `step 0 (SuperKernel sk1)`: the launch watchdog's name for it
  bool cached = false;                      // served by the cache (memory or disk)
};

struct CompileStats {
  std::chrono::nanoseconds compileTime{0};  // wall time of compile()
  uint64_t superKernelHits = 0, superKernelMisses = 0;
  uint64_t objectHits = 0, objectMisses = 0;
  uint64_t objects = 0;                     // distinct sub-kernel variants
};

struct CompiledPlan {
  OpList list;                              // what was compiled (BufferSet::create(list))
  Options options;                          // merged list/session/request options
  FusionPlan plan;                          // with codeBytes filled in
  std::vector<CompiledStep> steps;          // execution order
  CompileStats stats;
  std::shared_ptr<const Emitter> target;     // the emitter
  Device* device = nullptr;                 // owned by the Session that compiled it
};

class Session {
 public:
  /// Opens the cache and sets up the cpu target (toolchain, device); errors
  /// are Compile (no compiler) or Io (cache) kinds with context. Other
  /// targets are set up on first use.
  static Expected<std::unique_ptr<Session>> create(SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// The device of `target` (set up on first use): its machine model, and
  /// for cpu the executor (target/cpu/Cpu.h: cpuExecutor()).
  Expected<Device*> device(std::string_view target = "cpu");
  /// The cpu target's toolchain.
  const Toolchain& toolchain() const;
  /// The toolchain `target` compiles with (set up on first use, like device()).
  Expected<const Toolchain*> toolchain(std::string_view target);
  const std::shared_ptr<Cache>& cache() const;
  const SessionOptions& options() const;

  /// Plan, generate, compile (objects once each, SuperKernels in parallel),
  /// load. Errors carry context ("while compiling SuperKernel sk1: ...").
  Expected<CompiledPlan> compile(const OpList& list, const CompileRequest& request = {});

  /// Compile what a Graph recorded, minus the launches that already ran
  /// immediately (outside any Scope). Run it with graph.hostPointers().
  Expected<CompiledPlan> compile(const Graph& graph, const CompileRequest& request = {});

  /// Make the Graph's unscoped launches run immediately on this session's
  /// executor (each compiled once as an unfused op, then cached). Buffers
  /// they touch need host memory (addBuffer's `host`).
  void attach(Graph& graph);

  /// Execute every step in order on `buffers` (created for plan.list). On a
  /// device without host memory the buffers are uploaded before and
  /// downloaded after. Safe to call from several threads at once, on the
  /// same plan too (see Thread-safety above); a SuperKernel's side launches
  /// (SuperKernelPlan::sides) start with it and their own steps are skipped.
  Status run(const CompiledPlan& plan, BufferSet& buffers);
  /// The same with raw base pointers in op-list buffer order (a Graph's
  /// hostPointers(); device memory on a device without host memory);
  /// `count` must equal plan.list.buffers.size().
  Status run(const CompiledPlan& plan, void* const* buffers, size_t count);
  /// The plan's steps on `buffers` (as run() takes them) captured once as a launch graph (Device::captureGraph:
  /// a CUDA graph on cuda, sequential launches on cuda-sim; others answer BadInput), replayed with
  /// LaunchGraph::launch(). Capturing runs the plan once (untimed) on `buffers`. Only an unfused plan
  /// (CompileRequest::fuse = false): a SuperKernel's sync targets grow with each launch, so a replay of one
  /// frozen launch would wait for counts no one adds. GraphLaunch::Pdl needs the plan built as the PDL
  /// variant (CompileRequest::graphPdl).
  Expected<std::unique_ptr<LaunchGraph>> captureGraph(const CompiledPlan& plan, void* const* buffers, size_t count,
                                                      GraphLaunch kind);

  /// Measure what the sync cost model compares (SyncCosts) on `target`'s device, this machine, and cache it
  /// under the disk cache's root (calibration/<target>-<cores>.json), where every later plan for that
  /// target and core count reads it (a memory-only session measures and keeps nothing). BadInput for a
  /// target without a calibration (Backend::calibrateSync). Takes a fraction of a second.
  Expected<SyncCosts> calibrateSync(std::string_view target = "cpu");

  /// Run with profiling on and return the Chrome/Perfetto trace JSON. The
  /// plan must have been compiled with profiling=1 (else BadInput).
  Expected<std::string> runProfiled(const CompiledPlan& plan, BufferSet& buffers);

 private:
  Session();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Merge option strings in order (each over the previous): the list's, the
/// session's, the request's. BadInput naming the bad key.
Expected<Options> mergeOptions(const std::vector<std::string_view>& optionStrings);

}  // namespace sk
