// The remote tier's counters (private): owned by the Cache's counter set
// (cache/Stats.h, persisted in stats.json as remote_*), incremented by
// RemoteStorage where each event happens.
#pragma once

#include <atomic>
#include <cstdint>

namespace sk::remote {

struct RemoteCounters {
  std::atomic<uint64_t> hits{0}, misses{0}, uploads{0}, errors{0}, rejected{0};
};

}  // namespace sk::remote
