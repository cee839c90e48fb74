// LaunchTrace.h.
#include "backends/LaunchTrace.h"

#include <chrono>

namespace sk {

void LaunchTrace::setOn(bool on) {
  std::lock_guard<std::mutex> g(mu_);
  if (on) {
    events_.clear();
    tracks_.clear();
    launches_ = 0;
  }
  on_.store(on, std::memory_order_release);
}

std::optional<uint32_t> LaunchTrace::nextLaunch(uint32_t count) {
  if (!on()) return std::nullopt;
  std::lock_guard<std::mutex> g(mu_);
  const uint32_t n = launches_;
  launches_ += count;
  return n;
}

void LaunchTrace::add(std::vector<TraceEvent> events, const std::map<uint32_t, std::string>& tracks) {
  std::lock_guard<std::mutex> g(mu_);
  events_.insert(events_.end(), events.begin(), events.end());
  tracks_.insert(tracks.begin(), tracks.end());
}

std::string LaunchTrace::take(const std::vector<std::vector<std::string>>& opNamesByLaunch) {
  std::lock_guard<std::mutex> g(mu_);
  std::string json = Executor::traceToJson(events_, opNamesByLaunch, tracks_);
  events_.clear();
  launches_ = 0;
  return json;
}

uint64_t steadyClockNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace sk
