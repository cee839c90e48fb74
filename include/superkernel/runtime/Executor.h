// The cpu host executor: a persistent pool of W workers (the calling thread
// is worker 0) that runs SPMD launches and SuperKernel core programs.
//
// W defaults to the hardware threads; SK_NUM_WORKERS overrides. Waits spin
// briefly, then back off (pause, yield, futex) so that more threads than
// cores never collapses throughput. A wait longer than SK_WAIT_TIMEOUT_MS
// (default 10000) fails the launch with a message naming what it waited for.
//
// Launch watchdog: a block that never returns (a kernel stuck in a loop)
// cannot be cancelled, so no wait timeout ends its launch. A watchdog thread
// notices a launch that makes no progress (no block starts anywhere) for
// SK_RUN_TIMEOUT_MS (default 120000) and calls ExecutorOptions::onRunTimeout
// with a report naming, per worker, the op and block it is running and what
// it last waited for. The default handler logs the report and aborts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "superkernel/cpu/superkernel_rt.h"
#include "superkernel/support/Error.h"

namespace sk {

class Communicator;

/// One profiling record (per worker, steady-clock nanoseconds).
struct TraceEvent {
  uint32_t worker = 0;
  uint32_t core = 0;
  uint32_t kind = 0;                        // SK_PROF_*
  uint32_t id = 0;                          // op index within its launch
  uint32_t launch = 0;                      // sequence number of the launch
  uint64_t ns = 0;
};

/// Called by the launch watchdog, on its own thread, with the report (one
/// line per worker still busy). The stuck block cannot be stopped, so the
/// handler should end the process (the tools print it and exit 4). If it
/// returns, the launch is failed with the report: waiting cores stop, and the
/// launch returns that error once the stuck blocks return (if they ever do).
using RunTimeoutHandler = std::function<void(const std::string& report)>;

/// The default RunTimeoutHandler: logs the report (spdlog::critical, and on
/// stderr) and calls std::abort().
void defaultRunTimeoutHandler(const std::string& report);

struct ExecutorOptions {
  uint32_t numWorkers = 0;                  // 0: SK_NUM_WORKERS, else hardware threads
  uint32_t waitTimeoutMs = 0;               // 0: SK_WAIT_TIMEOUT_MS, else 10000
  uint32_t runTimeoutMs = 0;                // 0: SK_RUN_TIMEOUT_MS, else 120000 (launch watchdog)
  RunTimeoutHandler onRunTimeout{};         // empty: defaultRunTimeoutHandler
  /// Worker placement (runtime/src/Placement.h): "" = SK_CPU_MASK, else
  /// "auto" (default: one worker per allowed CPU, pinned), "off", a hex mask
  /// ("0x3") or a CPU list ("0-3,8"). Invalid: logged, nothing pinned.
  std::string cpuMask = {};
};

/// Where the workers run (Executor::placement()).
struct PlacementInfo {
  bool pinned = false;
  std::vector<int> cpus;      // cpus[w]: worker w's CPU (worker 0: the launching thread's)
  uint64_t callerMoves = 0;   // launches that found the caller on a worker's CPU and moved it
  std::string note;           // "pinned: ..." or why not
};

class Executor {
 public:
  explicit Executor(ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  uint32_t numWorkers() const;
  uint32_t waitTimeoutMs() const;
  uint32_t runTimeoutMs() const;

  /// What the watchdog report calls the launches that follow (until the next
  /// call): `label` (e.g. `step 0 "sk1"`) and the names of the ops by their
  /// index in the SuperKernel (profiling ids; launch()/launchKernel() blocks
  /// are op 0). Both pointers must stay valid for those launches; no copy is
  /// made (this sits on the per-launch path).
  void setLaunchContext(const std::string* label, const std::vector<std::string>* opNames);

  /// fn(arg, ctx) for each block in [0, blockDim), block b on worker b % W.
  /// Blocks until every block returned. ctx->rt is NULL (sync calls no-op).
  /// A block fails the launch with services()->fail(services()->self, msg)
  /// (or by throwing); blocks not yet started are then skipped. The returned
  /// Status (ErrorKind::Runtime) carries the first message.
  using BlockFn = void (*)(void* arg, const sk_ctx* ctx);
  Status launch(BlockFn fn, void* arg, uint32_t blockDim);

  /// Like launch(), for running one sub-kernel unfused: ctx->rt points at a
  /// per-block sk_block_rt, so sk_report_error fails the launch and
  /// sk_kernel_sync is a real barrier among the blocks (then blockDim must
  /// be <= numWorkers(), checked before anything runs); sk_wait_inputs and
  /// sk_signal_outputs stay no-ops (no producers outside a SuperKernel).
  /// Pass kernelSync = false for kernels that do not declare kernel_sync.
  Status launchKernel(BlockFn fn, void* arg, uint32_t blockDim, bool kernelSync);

  /// fn(arg, core) for core in [0, numCores), one core per worker, all
  /// concurrently (numCores <= numWorkers). What SuperKernel run() uses.
  Status runCores(uint32_t numCores, sk_core_fn fn, void* arg);

  /// The ranks this executor's collective ops run over (docs/COLLECTIVES.md);
  /// null (the default): a collective fails its launch, naming the op.
  void setCommunicator(std::shared_ptr<Communicator> communicator);
  Communicator* communicator() const;

  /// Worker placement and how often the launching thread had to be moved.
  PlacementInfo placement() const;

  /// The C table passed as run()'s `stream` argument.
  const sk_services* services() const;

  /// Message of the most recent failed launch ("" after a successful one):
  /// what a caller of a generated run() that returned non-zero reports.
  std::string lastError() const;

  /// Profiling: while enabled, services()->profile records TraceEvents.
  /// TraceEvent::launch counts launches (launch/launchKernel/runCores) from 0
  /// since profiling was switched on or the trace was last taken, so the
  /// caller can index its opNamesByLaunch in the order it launched.
  void setProfiling(bool on);
  bool profiling() const;
  std::vector<TraceEvent> takeTrace();

  /// Names for trace slices: launch -> op names (set by whoever launches).
  /// Chrome/Perfetto trace JSON: one track (tid) per worker, ops and waits as
  /// slices. A track is called "worker N" unless trackNames names it (other
  /// devices' cores: "cube 0", "vector 3").
  static std::string traceToJson(const std::vector<TraceEvent>& events,
                                 const std::vector<std::vector<std::string>>& opNamesByLaunch,
                                 const std::map<uint32_t, std::string>& trackNames = {});

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// The most workers an executor runs (more asked for: this many, with a warning).
inline constexpr uint32_t kMaxExecutorWorkers = 1024;

/// Hardware threads, or SK_NUM_WORKERS when set (validated, 1..1024). An
/// invalid SK_NUM_WORKERS is logged (spdlog::warn) and ignored; callers that
/// want a hard error (sk-compile exit 2) check workerCountFromEnv() first.
uint32_t defaultWorkerCount();

/// SK_WAIT_TIMEOUT_MS when set (validated, 1..86400000), else 10000; an
/// invalid value is logged and ignored.
uint32_t defaultWaitTimeoutMs();

/// Threads this process may run on (sched_getaffinity; at least 1).
uint32_t hardwareThreads();

/// SK_NUM_WORKERS parsed strictly: the value (0 when unset) or a BadInput
/// error naming the variable and the accepted range.
Expected<uint32_t> workerCountFromEnv();
Expected<uint32_t> waitTimeoutFromEnv();
/// SK_RUN_TIMEOUT_MS (1..86400000; 0 when unset), and the value used when
/// neither it nor ExecutorOptions::runTimeoutMs is set.
Expected<uint32_t> runTimeoutFromEnv();
uint32_t defaultRunTimeoutMs();

/// Strict decimal parse of `text` into [lo, hi]; errors name `what`.
Expected<uint32_t> parseBoundedU32(const std::string& what, const char* text, uint32_t lo, uint32_t hi);

}  // namespace sk
