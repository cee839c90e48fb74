// The cache's counters (DESIGN section 6): kept per process in atomics and
// merged into <root>/stats.json under <root>/stats.lock, so they persist
// across processes. Private to the cache.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>

#include <nlohmann/json.hpp>

namespace sk::cache {

inline constexpr int kNumCounters = 9;

struct Counters {
  std::atomic<uint64_t> hits{0}, misses{0}, compiles{0}, compileFailures{0}, corrupt{0}, untrusted{0}, evicted{0},
      memoryHits{0}, diskHits{0};
  /// The i-th counter, in the order of kCounterNames.
  std::atomic<uint64_t>& at(int i);
  static void count(std::atomic<uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }
};

/// stats.json field names, in Counters::at() order.
extern const char* const kCounterNames[kNumCounters];

/// <root>/stats.json: this process's pending deltas merged in under flock.
class StatsFile {
 public:
  /// Empty root: no file (memory-only cache); flush does nothing.
  void setRoot(std::filesystem::path root) { root_ = std::move(root); }
  /// Merge `pending` into the file and zero it; at most every 200 ms unless
  /// `force`. A failed write keeps the deltas pending.
  void flush(Counters& pending, bool force);
  /// The persisted counters ({} when absent or unreadable).
  nlohmann::json read() const;
  /// Persisted + pending, per counter.
  void totals(const Counters& pending, uint64_t out[kNumCounters]) const;

 private:
  std::filesystem::path root_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace sk::cache
