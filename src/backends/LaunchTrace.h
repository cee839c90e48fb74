// Private, shared by the back ends' devices (cpu keeps its executor's own):
// the profiling state a Device holds between setProfiling(true) and
// takeTrace(). Launch i is the i-th launch since profiling was switched on
// (a step, or a side launch beside one), so the trace names it after step
// i's ops; events from the devices' own records go in with their track
// names, and takeTrace() exports them with the cpu target's trace writer.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "superkernel/runtime/Executor.h"

namespace sk {

class LaunchTrace {
 public:
  /// On: numbering restarts and earlier events are dropped.
  void setOn(bool on);
  /// A lock-free check for the run path.
  bool on() const { return on_.load(std::memory_order_acquire); }
  /// While on: the number of the next launch, reserving `count` numbers. Off: nullopt.
  std::optional<uint32_t> nextLaunch(uint32_t count = 1);
  /// Appends one launch's events and names their tracks.
  void add(std::vector<TraceEvent> events, const std::map<uint32_t, std::string>& tracks);
  /// Chrome/Perfetto JSON of everything recorded; numbering restarts.
  std::string take(const std::vector<std::vector<std::string>>& opNamesByLaunch);

 private:
  std::atomic<bool> on_{false};
  std::mutex mu_;
  uint32_t launches_ = 0;
  std::vector<TraceEvent> events_;
  std::map<uint32_t, std::string> tracks_;
};

/// Host steady-clock nanoseconds: where a profiled launch is placed.
uint64_t steadyClockNs();

}  // namespace sk
