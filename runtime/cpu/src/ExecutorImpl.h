// Executor internals shared by Executor.cpp (pool and launches),
// Services.cpp (the C table generated code calls) and Trace.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "Backoff.h"
#include "Placement.h"
#include "Watchdog.h"
#include "superkernel/runtime/Communicator.h"
#include "superkernel/runtime/Executor.h"

namespace sk {

struct Executor::Impl {
  // What the workers run. Written by the launching thread before it raises
  // the workers' `go` counters (release) and left alone until every worker
  // has arrived on `done`, so workers read it without a lock.
  struct Job {
    enum Kind : uint8_t { Blocks, Cores, Stop } kind = Blocks;
    BlockFn blockFn = nullptr;
    sk_core_fn coreFn = nullptr;
    void* arg = nullptr;
    uint32_t count = 0;       // blocks or cores
    bool withBlockRt = false; // launchKernel: ctx->rt is a real sk_block_rt
    bool kernelSync = false;
    uint64_t syncBase = 0;    // opSync.value when the launch began
  };

  // One per worker, each on its own cache lines: `go` counts jobs posted to
  // this worker (monotonic), `trace` is written only by this worker.
  struct alignas(SK_CACHELINE) Worker {
    sk_counter go{};
    uint64_t posted = 0;             // launcher-side count of jobs posted
    std::vector<TraceEvent> trace;
    std::thread thread;
  };

  explicit Impl(ExecutorOptions options);
  ~Impl();

  Status run(const Job& job);
  void workerMain(uint32_t w);
  void runShare(uint32_t w, const Job& job);
  void runBlock(uint32_t w, const Job& job, uint32_t block);
  void post(uint32_t w);

  // sk_services behaviour (Services.cpp).
  void fail(const char* message);
  bool failed() const { return failedFlag.load(std::memory_order_acquire); }
  int waitSlow(sk_counter* c, uint64_t target, const char* what);
  void profile(uint32_t core, uint32_t kind, uint32_t id);
  void fillServices();
  int collective(const sk_collective_args* args);  // Collective.cpp

  uint32_t numWorkers = 1;
  uint32_t timeoutMs = 10000;
  std::unique_ptr<rt::Watchdog> watchdog;  // launch watchdog (Watchdog.h); table.progress is its slots
  bool oversubscribed = false;      // more workers than cores: spinning hurts
  rt::Backoff idleBackoff;          // workers between launches
  rt::Backoff waitBackoff;          // waits inside a launch

  std::mutex launchMu;              // one launch at a time
  Job job;
  std::vector<std::unique_ptr<Worker>> workers;  // [0] is the launching thread's slot
  sk_counter done{};                // arrivals of workers 1..W-1 per launch
  uint64_t doneTarget = 0;
  sk_counter opSync{};              // launchKernel's sk_kernel_sync barrier

  std::atomic<bool> failedFlag{false};
  mutable std::mutex errMu;
  std::string error;                // first failure of the current launch

  rt::Placement placement;          // Placement.h: decided before the workers start
  uint64_t callerMoves = 0;         // under launchMu

  sk_services table{};
  std::shared_ptr<Communicator> communicator;  // collectives' ranks (setCommunicator, under launchMu)
  bool profilingOn = false;
  uint32_t launchSeq = 0;           // launches since profiling on / takeTrace
  std::mutex foreignMu;             // profile() from a thread that is no worker
  std::vector<TraceEvent> foreignTrace;
};

// Which executor and worker the current thread is acting for (the launching
// thread is worker 0 of its executor only while it runs its share).
struct WorkerIdentity {
  const Executor::Impl* exec = nullptr;
  uint32_t worker = 0;
};
extern thread_local WorkerIdentity tlWorker;

}  // namespace sk
