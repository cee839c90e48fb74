// Bounded parallel loops for the driver (parallel compiles) and the session
// (parallel SuperKernel builds): no long-lived threads, the caller takes part.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

/// Runs fn(i) for i in [0, n) on up to `jobs` threads (the caller is one of
/// them); returns after all finished.
inline void parallelForEach(size_t n, unsigned jobs, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  unsigned threads = static_cast<unsigned>(std::min<size_t>(n, std::max(1u, jobs)));
  std::vector<std::thread> pool;
  pool.reserve(threads > 0 ? threads - 1 : 0);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

/// Like parallelForEach for a fallible fn; the error of the lowest failing
/// index (deterministic messages), after all finished.
inline Status parallelFor(size_t n, unsigned jobs, const std::function<Status(size_t)>& fn) {
  std::vector<std::optional<Error>> errors(n);
  parallelForEach(n, jobs, [&](size_t i) {
    Status s = fn(i);
    if (!s) errors[i] = s.error();
  });
  for (auto& e : errors)
    if (e) return *e;
  return Status::success();
}

}  // namespace sk
