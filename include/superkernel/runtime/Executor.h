// The cpu host executor: a persistent pool of W workers (the calling thread
// is worker 0) that runs SPMD launches and SuperKernel core programs.
//
// W defaults to the hardware threads; SK_NUM_WORKERS overrides. Waits spin
// briefly, then back off (pause, yield, futex) so that more threads than
// cores never collapses throughput. A wait longer than SK_WAIT_TIMEOUT_MS
// (default 10000) fails the launch with a message naming what it waited for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "superkernel/cpu/superkernel_rt.h"
#include "superkernel/support/Error.h"

namespace sk {

/// One profiling record (per worker, steady-clock nanoseconds).
struct TraceEvent {
  uint32_t worker = 0;
  uint32_t core = 0;
  uint32_t kind = 0;                        // SK_PROF_*
  uint32_t id = 0;                          // op index within its launch
  uint32_t launch = 0;                      // sequence number of the launch
  uint64_t ns = 0;
};

struct ExecutorOptions {
  uint32_t numWorkers = 0;                  // 0: SK_NUM_WORKERS, else hardware threads
  uint32_t waitTimeoutMs = 0;               // 0: SK_WAIT_TIMEOUT_MS, else 10000
};

class Executor {
 public:
  explicit Executor(ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  uint32_t numWorkers() const;
  uint32_t waitTimeoutMs() const;

  /// fn(arg, ctx) for each block in [0, blockDim), block b on worker b % W.
  /// Blocks until every block returned. ctx->rt is NULL (sync calls no-op).
  using BlockFn = void (*)(void* arg, const sk_ctx* ctx);
  Status launch(BlockFn fn, void* arg, uint32_t blockDim);

  /// fn(arg, core) for core in [0, numCores), one core per worker, all
  /// concurrently (numCores <= numWorkers). What SuperKernel run() uses.
  Status runCores(uint32_t numCores, sk_core_fn fn, void* arg);

  /// The C table passed as run()'s `stream` argument.
  const sk_services* services() const;

  /// Profiling: while enabled, services()->profile records TraceEvents.
  void setProfiling(bool on);
  bool profiling() const;
  std::vector<TraceEvent> takeTrace();

  /// Names for trace slices: launch -> op names (set by whoever launches).
  /// Chrome/Perfetto trace JSON: one track (tid) per worker, ops and waits as slices.
  static std::string traceToJson(const std::vector<TraceEvent>& events,
                                 const std::vector<std::vector<std::string>>& opNamesByLaunch);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Hardware threads, or SK_NUM_WORKERS when set (validated, 1..1024).
uint32_t defaultWorkerCount();

}  // namespace sk
