// The persistent worker pool and its launches.
//
// Dispatch is reset-free like everything else in the runtime: worker w owns
// a monotonic `go` counter that the launcher raises once per job posted to
// it, and every worker that took part arrives once on the shared monotonic
// `done` counter. Only the workers a launch needs are woken (min(W, blocks)),
// which matters when W exceeds the core count.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "ExecutorImpl.h"

namespace sk {

thread_local WorkerIdentity tlWorker;

namespace {

// launchKernel's per-block runtime: sync calls become real (kernel_sync) or
// no-ops (waits/signals: no producers outside a SuperKernel).
struct BlockRtState {
  Executor::Impl* exec;
  const Executor::Impl::Job* job;
};

int rtWaitInputs(sk_block_rt* rt, uint32_t) { return rt->services->failed(rt->services->self); }
void rtSignalOutputs(sk_block_rt*, uint32_t) {}
void rtKernelSync(sk_block_rt* rt, uint32_t) {
  auto* st = static_cast<BlockRtState*>(rt->state);
  (void)sk_op_sync(rt->services, &st->exec->opSync, st->job->count, st->job->syncBase, &rt->sync_count,
                   "sk_kernel_sync of an unfused launch");
}

}  // namespace

Executor::Impl::Impl(ExecutorOptions options) {
  // spdlog's registry is created by its first use. Make that happen here, before any worker starts: a first use
  // on a worker racing one on the caller is a static initialization inside libspdlog, which TSan cannot see
  // guarded (the library is not instrumented) and reports as a data race (Executor.NestedLaunch..., rarely).
  (void)spdlog::default_logger_raw();
  numWorkers = options.numWorkers != 0 ? options.numWorkers : defaultWorkerCount();
  if (numWorkers > kMaxExecutorWorkers) {
    spdlog::warn("executor: {} workers requested, using the maximum {}", numWorkers, kMaxExecutorWorkers);
    numWorkers = kMaxExecutorWorkers;
  }
  timeoutMs = options.waitTimeoutMs != 0 ? options.waitTimeoutMs : defaultWaitTimeoutMs();

  oversubscribed = numWorkers > hardwareThreads();
  // Idle workers spin ~50 us so back-to-back launches wake them without a
  // syscall; waits inside a launch spin ~20 us past the inline spin. With
  // more workers than cores both spins shrink to nothing and yielding does
  // the work (the awaited thread needs this core). Sleep slices: long for
  // idle workers (nothing to notice), 1 ms inside a launch (failures and
  // deadlines must be noticed even without a wake).
  idleBackoff = {oversubscribed ? 0u : 50000u, oversubscribed ? 4u : 16u, 100000000};
  waitBackoff = {oversubscribed ? 0u : 20000u, oversubscribed ? 64u : 32u, 1000000};

  placement = rt::planPlacement(numWorkers, options.cpuMask);
  fillServices();
  workers.reserve(numWorkers);
  workers.push_back(std::make_unique<Worker>());
  for (uint32_t w = 1; w < numWorkers; ++w) {
    auto worker = std::make_unique<Worker>();
    Worker* raw = worker.get();
    workers.push_back(std::move(worker));
    try {
      raw->thread = std::thread([this, w] { workerMain(w); });
    } catch (const std::exception& e) {
      // Thread limits (ulimit -u, cgroups): a smaller pool still works.
      workers.pop_back();
      spdlog::warn("executor: could not start worker {} ({}); running with {} workers", w, e.what(), w);
      break;
    }
  }
  numWorkers = static_cast<uint32_t>(workers.size());
  table.num_workers = numWorkers;
  // The report names the knob that set the limit: the caller's option (a tool's flag), the variable, or the
  // default (a report that always said SK_RUN_TIMEOUT_MS sent users to a variable they had not set).
  const uint32_t runMs = options.runTimeoutMs != 0 ? options.runTimeoutMs : defaultRunTimeoutMs();
  std::string limitText = fmt::format("limit {} ms set by the caller", runMs);
  if (options.runTimeoutMs == 0) {
    auto env = runTimeoutFromEnv();
    limitText = env && *env == runMs ? fmt::format("SK_RUN_TIMEOUT_MS={}", runMs)
                                     : fmt::format("limit {} ms, the default; SK_RUN_TIMEOUT_MS sets it", runMs);
  }
  watchdog = std::make_unique<rt::Watchdog>(
      numWorkers, runMs, std::move(limitText), std::move(options.onRunTimeout), [this](const std::string& report) { fail(report.c_str()); },
      [this] {
        std::lock_guard<std::mutex> lock(errMu);
        return failed() ? error : std::string();
      });
  table.progress = watchdog->progressSlots();
}

Executor::Impl::~Impl() {
  watchdog.reset();  // no launch can be running: its thread goes first
  std::lock_guard<std::mutex> lock(launchMu);
  job = Job{};
  job.kind = Job::Stop;
  for (uint32_t w = 1; w < workers.size(); ++w) post(w);
  for (uint32_t w = 1; w < workers.size(); ++w) workers[w]->thread.join();
}

void Executor::Impl::post(uint32_t w) {
  Worker& wk = *workers[w];
  rt::setCounter(&wk.go, ++wk.posted);  // release: the job is visible first
}

void Executor::Impl::workerMain(uint32_t w) {
  tlWorker = {this, w};
  if (placement.pinned) (void)rt::pinThisThread(placement.cpus[w]);
  Worker& self = *workers[w];
  uint64_t seen = 0;
  for (;;) {
    (void)rt::waitAtLeast(&self.go, seen + 1, idleBackoff, nullptr, nullptr);
    ++seen;
    if (job.kind == Job::Stop) return;
    runShare(w, job);
    rt::arriveCounter(&done);
  }
}

void Executor::Impl::runBlock(uint32_t w, const Job& j, uint32_t block) {
  sk_ctx ctx{block, j.count, nullptr};
  sk_block_rt blockRt{};
  BlockRtState state{this, &j};
  if (j.withBlockRt) {
    blockRt.services = &table;
    blockRt.wait_inputs = rtWaitInputs;
    blockRt.signal_outputs = rtSignalOutputs;
    blockRt.kernel_sync = j.kernelSync ? rtKernelSync : nullptr;
    blockRt.state = &state;
    blockRt.core = w;
    blockRt.ignore_kernel_points = 1;
    ctx.rt = &blockRt;
  }
  watchdog->block(w, 0, block);
  j.blockFn(j.arg, &ctx);
}

void Executor::Impl::runShare(uint32_t w, const Job& j) {
  // A throwing block or core must not unwind through the pool (it would
  // terminate the process from a worker thread); it fails the launch.
  watchdog->shareBegin(w);
  try {
    if (j.kind == Job::Blocks) {
      for (uint32_t b = w; b < j.count; b += numWorkers) {
        // After a failure the launch's result is an error anyway; skipping
        // the remaining blocks ends it sooner.
        if (failed()) break;
        runBlock(w, j, b);
      }
    } else if (j.kind == Job::Cores && w < j.count) {
      j.coreFn(j.arg, w);
    }
  } catch (const std::exception& e) {
    fail((std::string("worker ") + std::to_string(w) + ": exception: " + e.what()).c_str());
  } catch (...) {
    fail((std::string("worker ") + std::to_string(w) + ": unknown exception").c_str());
  }
  watchdog->shareEnd(w);
}

Status Executor::Impl::run(const Job& request) {
  if (tlWorker.exec == this) {
    // A block or core launching on its own executor would wait for itself.
    const char* msg = "nested launch on the executor that is running the caller";
    fail(msg);
    return runtimeError(msg);
  }
  std::lock_guard<std::mutex> lock(launchMu);
  // Rejections are recorded like failures so that a generated run() whose
  // run_cores returned non-zero finds the reason in lastError().
  auto reject = [&](std::string msg) -> Status {
    std::lock_guard<std::mutex> elock(errMu);
    error = msg;
    return runtimeError(std::move(msg));
  };
  if (request.kind == Job::Cores && request.count > numWorkers)
    return reject("runCores: " + std::to_string(request.count) + " cores requested but the executor has " +
                  std::to_string(numWorkers) + " workers (set SK_NUM_WORKERS or lower the core count)");
  if (request.kernelSync && request.count > numWorkers)
    return reject("a kernel_sync kernel needs all its blocks at once: block_dim " +
                  std::to_string(request.count) + " > " + std::to_string(numWorkers) + " workers");
  if ((request.kind == Job::Blocks && !request.blockFn) || (request.kind == Job::Cores && !request.coreFn))
    return reject("launch: null function");

  {
    std::lock_guard<std::mutex> elock(errMu);
    error.clear();
    failedFlag.store(false, std::memory_order_relaxed);
  }
  job = request;
  job.syncBase = __atomic_load_n(&opSync.value, __ATOMIC_ACQUIRE);
  const uint32_t participants = std::min(numWorkers, job.count);
  watchdog->launchBegin(job.kind == Job::Cores ? "runCores" : "launch", job.count, participants);
  for (uint32_t w = 1; w < participants; ++w) post(w);
  if (participants > 1) doneTarget += participants - 1;

  // The launching thread is worker 0 for the duration of its share.
  const WorkerIdentity saved = tlWorker;
  tlWorker = {this, 0};
  rt::CallerPlacement callerOnOwnCpu(placement, &callerMoves);
  if (participants > 0) runShare(0, job);
  tlWorker = saved;

  // No deadline here: a block that never returns is the launch watchdog's.
  (void)rt::waitAtLeast(&done, doneTarget, waitBackoff, nullptr, nullptr);
  watchdog->launchEnd();
  if (profilingOn) ++launchSeq;

  if (failed()) {
    std::lock_guard<std::mutex> elock(errMu);
    return runtimeError(error);
  }
  return Status::success();
}

// ---- public API -------------------------------------------------------------

Executor::Executor(ExecutorOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Executor::~Executor() = default;

uint32_t Executor::numWorkers() const { return impl_->numWorkers; }
uint32_t Executor::waitTimeoutMs() const { return impl_->timeoutMs; }
uint32_t Executor::runTimeoutMs() const { return impl_->watchdog->timeoutMs(); }
void Executor::setLaunchContext(const std::string* label, const std::vector<std::string>* opNames) {
  impl_->watchdog->setContext(label, opNames);
}
const sk_services* Executor::services() const { return &impl_->table; }

Status Executor::launch(BlockFn fn, void* arg, uint32_t blockDim) {
  Impl::Job j;
  j.kind = Impl::Job::Blocks;
  j.blockFn = fn;
  j.arg = arg;
  j.count = blockDim;
  return impl_->run(j);
}

Status Executor::launchKernel(BlockFn fn, void* arg, uint32_t blockDim, bool kernelSync) {
  Impl::Job j;
  j.kind = Impl::Job::Blocks;
  j.blockFn = fn;
  j.arg = arg;
  j.count = blockDim;
  j.withBlockRt = true;
  j.kernelSync = kernelSync;
  return impl_->run(j);
}

Status Executor::runCores(uint32_t numCores, sk_core_fn fn, void* arg) {
  Impl::Job j;
  j.kind = Impl::Job::Cores;
  j.coreFn = fn;
  j.arg = arg;
  j.count = numCores;
  return impl_->run(j);
}

PlacementInfo Executor::placement() const {
  std::lock_guard<std::mutex> lock(impl_->launchMu);
  return {impl_->placement.pinned, impl_->placement.cpus, impl_->callerMoves, impl_->placement.note};
}

std::string Executor::lastError() const {
  std::lock_guard<std::mutex> lock(impl_->errMu);
  return impl_->error;
}

bool Executor::profiling() const {
  std::lock_guard<std::mutex> lock(impl_->launchMu);
  return impl_->profilingOn;
}

std::vector<TraceEvent> Executor::takeTrace() {
  std::lock_guard<std::mutex> lock(impl_->launchMu);
  std::vector<TraceEvent> all;
  for (auto& w : impl_->workers) {
    all.insert(all.end(), w->trace.begin(), w->trace.end());
    w->trace.clear();
  }
  {
    std::lock_guard<std::mutex> flock(impl_->foreignMu);
    all.insert(all.end(), impl_->foreignTrace.begin(), impl_->foreignTrace.end());
    impl_->foreignTrace.clear();
  }
  std::stable_sort(all.begin(), all.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.ns < b.ns; });
  impl_->launchSeq = 0;
  return all;
}

}  // namespace sk
