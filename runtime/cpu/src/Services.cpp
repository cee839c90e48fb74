// The sk_services table: the C entry points generated SuperKernel code calls
// (runtime/cpu/include/superkernel/cpu/superkernel_rt.h). Each trampoline casts
// `self` back to the executor's Impl.
#include <spdlog/spdlog.h>

#include "ExecutorImpl.h"

namespace sk {

namespace {

Executor::Impl* impl(void* self) { return static_cast<Executor::Impl*>(self); }

int svcRunCores(void* self, uint32_t numCores, sk_core_fn fn, void* arg) {
  Executor::Impl::Job job;
  job.kind = Executor::Impl::Job::Cores;
  job.coreFn = fn;
  job.arg = arg;
  job.count = numCores;
  Status s = impl(self)->run(job);
  return s.ok() ? 0 : 1;
}

int svcWaitSlow(void* self, sk_counter* c, uint64_t target, const char* what) {
  return impl(self)->waitSlow(c, target, what);
}

void svcWake(void*, sk_counter* c) { rt::wakeCounter(c); }

void svcFail(void* self, const char* message) { impl(self)->fail(message); }

int svcFailed(void* self) { return impl(self)->failed() ? 1 : 0; }

int svcCollective(void* self, const sk_collective_args* args) { return impl(self)->collective(args); }

void svcProfile(void* self, uint32_t core, uint32_t kind, uint32_t id) {
  impl(self)->profile(core, kind, id);
}

struct WaitStop {
  const Executor::Impl* exec;
  uint64_t deadlineNs;
  bool timedOut = false;
};

bool waitShouldStop(void* p) {
  auto* s = static_cast<WaitStop*>(p);
  if (s->exec->failed()) return true;
  if (rt::nowNs() >= s->deadlineNs) {
    s->timedOut = true;
    return true;
  }
  return false;
}

}  // namespace

void Executor::Impl::fillServices() {
  table.version = SK_SERVICES_VERSION;
  table.num_workers = numWorkers;
  table.self = this;
  table.run_cores = svcRunCores;
  table.wait_slow = svcWaitSlow;
  table.wake = svcWake;
  table.fail = svcFail;
  table.failed = svcFailed;
  table.profile = nullptr;  // setProfiling(true) installs svcProfile
  table.collective = svcCollective;
}

void Executor::Impl::fail(const char* message) {
  {
    std::lock_guard<std::mutex> lock(errMu);
    // The first failure is the cause; later ones are usually its echo
    // (other cores' waits giving up), so they are not kept.
    if (!failedFlag.load(std::memory_order_relaxed))
      error = (message && *message) ? message : "a kernel reported an error without a message";
    failedFlag.store(true, std::memory_order_release);
  }
  spdlog::debug("launch failed: {}", message ? message : "");
}

int Executor::Impl::waitSlow(sk_counter* c, uint64_t target, const char* what) {
  if (failed()) return 1;
  // Sleep slices are short (1 ms), so a wait notices another core's failure
  // or its own deadline promptly even if nobody wakes it.
  WaitStop stop{this, rt::nowNs() + uint64_t{timeoutMs} * 1000000};
  // The launch watchdog's report says what each worker waits for.
  const bool mine = tlWorker.exec == this;
  if (mine) watchdog->waitBegin(tlWorker.worker, what, c, target);
  const bool satisfied = rt::waitAtLeast(c, target, waitBackoff, waitShouldStop, &stop);
  if (mine) watchdog->waitEnd(tlWorker.worker);
  if (satisfied) return 0;
  if (stop.timedOut && !failed()) {
    std::string msg = "timed out after " + std::to_string(timeoutMs) + " ms waiting for " +
                      std::string(what && *what ? what : "an unnamed counter") + " (value " +
                      std::to_string(__atomic_load_n(&c->value, __ATOMIC_ACQUIRE)) + ", needed " +
                      std::to_string(target) + ")";
    fail(msg.c_str());
  }
  return 1;
}

void Executor::Impl::profile(uint32_t core, uint32_t kind, uint32_t id) {
  TraceEvent e;
  e.core = core;
  e.kind = kind;
  e.id = id;
  e.launch = launchSeq;  // written before the job was posted
  e.ns = rt::nowNs();
  if (tlWorker.exec == this) {
    // Hot path: the worker's own vector, no lock.
    e.worker = tlWorker.worker;
    workers[e.worker]->trace.push_back(e);
  } else {
    e.worker = core;
    std::lock_guard<std::mutex> lock(foreignMu);
    foreignTrace.push_back(e);
  }
}

void Executor::setProfiling(bool on) {
  std::lock_guard<std::mutex> lock(impl_->launchMu);
  if (on && !impl_->profilingOn) impl_->launchSeq = 0;
  impl_->profilingOn = on;
  impl_->table.profile = on ? svcProfile : nullptr;
}

}  // namespace sk
