// The launch watchdog (SK_RUN_TIMEOUT_MS): notices a launch that makes no
// progress and reports where every worker is.
//
// Why a thread of its own: the stall it exists for is a block that never
// returns. Waits have their own deadline (SK_WAIT_TIMEOUT_MS) and fail the
// launch, but the stuck worker never arrives, so the launching thread (which
// may itself be the stuck worker 0) would wait forever. Only a thread outside
// the launch can see that.
//
// Progress is "a block started somewhere, or a launch began or ended". Every
// worker owns one sk_progress slot (written by generated code through
// sk_progress_op and sk_progress_block, or by the executor for host-run
// blocks) and one host slot (in its share or not, what it waits for). All
// writes are relaxed/release stores on the worker's own cache line; the
// watchdog only reads them. The per-launch cost is a few relaxed stores and
// one atomic add by the launcher and, per worker, a handful of stores; the
// per-block cost is sk_progress_block. No lock and no clock read on either
// path.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "superkernel/runtime/Executor.h"

namespace sk::rt {

class Watchdog {
 public:
  /// `failLaunch` is called (on the watchdog thread) when the handler returns.
  /// `limitText` is how the report names the limit and where it came from
  /// ("SK_RUN_TIMEOUT_MS=1000", "limit 500 ms set by the caller"), so the
  /// report points at the knob that set it.
  Watchdog(uint32_t numWorkers, uint32_t timeoutMs, std::string limitText, RunTimeoutHandler handler,
           std::function<void(const std::string&)> failLaunch, std::function<std::string()> launchError);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  uint32_t timeoutMs() const { return timeoutMs_; }
  /// The table's progress slots (numWorkers of them).
  sk_progress* progressSlots() { return progress_.get(); }

  // Launcher side (under the executor's launch mutex).
  void setContext(const std::string* label, const std::vector<std::string>* opNames);
  void launchBegin(const char* kind, uint32_t count, uint32_t participants);
  void launchEnd();

  // Worker side (each on its own slot).
  void shareBegin(uint32_t w) {
    host_[w].seqAtShare.store(__atomic_load_n(&progress_[w].seq, __ATOMIC_RELAXED), std::memory_order_relaxed);
    host_[w].inShare.store(1, std::memory_order_release);
  }
  void shareEnd(uint32_t w) { host_[w].inShare.store(0, std::memory_order_relaxed); }
  void block(uint32_t w, uint32_t op, uint32_t block);
  void waitBegin(uint32_t w, const char* what, const sk_counter* c, uint64_t target);
  void waitEnd(uint32_t w);
  /// The name of the op worker w runs now (its progress slot's op in the
  /// launch context), for messages from inside a block; "op <index>" without
  /// names.
  std::string opName(uint32_t w) const;

 private:
  struct alignas(SK_CACHELINE) HostSlot {
    std::atomic<uint32_t> inShare{0};
    std::atomic<uint64_t> seqAtShare{0};           // progress seq when this launch's share began
    std::atomic<const char*> waiting{nullptr};     // in a slow wait now
    std::atomic<const char*> lastWaited{nullptr};  // the last slow wait of this launch
    std::atomic<const sk_counter*> waitCounter{nullptr};
    std::atomic<uint64_t> waitTarget{0};
    std::atomic<uint64_t> waitSinceNs{0};
  };
  struct Seen {  // the watchdog thread's own view of each worker
    uint64_t seq = 0;
    uint64_t sinceNs = 0;  // when seq last changed (≈ when its current block started)
  };

  void threadMain();
  std::string report(uint64_t now, uint64_t stalledNs);

  const uint32_t numWorkers_;
  const uint32_t timeoutMs_;
  const std::string limitText_;
  RunTimeoutHandler handler_;
  std::function<void(const std::string&)> failLaunch_;
  std::function<std::string()> launchError_;

  struct ProgressDeleter {
    void operator()(sk_progress* p) const;
  };
  std::unique_ptr<sk_progress[], ProgressDeleter> progress_;
  std::unique_ptr<HostSlot[]> host_;
  std::vector<Seen> seen_;

  // Launch state: written by the launcher, read by the watchdog.
  // Relaxed atomics, no lock: they sit on the per-launch path, and the
  // watchdog reads them only once nothing has moved for the whole limit.
  std::atomic<uint64_t> launchEvents_{0};  // +1 at begin, +1 at end: odd = a launch is running
  std::atomic<const std::string*> label_{nullptr};
  std::atomic<const std::vector<std::string>*> opNames_{nullptr};
  std::atomic<const char*> kind_{""};
  std::atomic<uint32_t> count_{0};
  std::atomic<uint32_t> participants_{0};
  uint64_t launchSeenNs_ = 0;  // watchdog thread only: when it first saw the running launch

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sk::rt
