#include "backends/SyncChains.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace sk {

namespace {

// How much the sync-free chain may vary between repetitions, and the floor of a hand-off between cores (a line
// moving between them costs tens of ns; only a measurement another job disturbed goes under 5).
constexpr double kMaxIdealSpread = 0.25;
constexpr double kMinHandOffNs = 5;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

Expected<SyncCosts> syncCostsFromChains(const SyncChainTimes& t, const SyncChainJudgement& j) {
  const size_t reps = t.ideal.size();
  if (reps == 0 || t.boundaries == 0 || t.barrier.size() != reps || t.counter.size() != reps || t.flag.size() != reps)
    return internalError("sync calibration: no timings, or not one per repetition and kind");
  auto untrusted = [&](const std::string& what) {
    return Error(ErrorKind::Runtime, fmt::format("sync calibration {}: {}; {}", j.where, what, j.busy));
  };
  // The ideal's interquartile range: how much the same work varied between repetitions.
  std::vector<double> ideal = t.ideal;
  std::sort(ideal.begin(), ideal.end());
  const double mid = ideal[reps / 2], iqr = ideal[reps * 3 / 4] - ideal[reps / 4];
  if (!(mid > 0) || iqr > kMaxIdealSpread * mid)
    return untrusted(fmt::format("the chain without syncs varied by {:.0f}% between repetitions (at most {:.0f}% is "
                                 "usable)",
                                 100 * iqr / std::max(mid, 1.0), 100 * kMaxIdealSpread));
  auto perBoundary = [&](const std::vector<double>& kind) {
    std::vector<double> d;
    for (size_t r = 0; r < reps; ++r) d.push_back((kind[r] - t.ideal[r]) / t.boundaries);
    return std::round(median(std::move(d)));
  };
  SyncCosts c;
  c.barrierNs = perBoundary(t.barrier);
  c.counterNs = perBoundary(t.counter);
  c.flagNs = perBoundary(t.flag);
  for (auto [name, ns] : {std::pair{"barrier", c.barrierNs}, {"counter", c.counterNs}, {"flag", c.flagNs}}) {
    if (!std::isfinite(ns) || ns < kMinHandOffNs)
      return untrusted(fmt::format("a {} came out at {:.0f} ns per boundary, below what a hand-off between {} "
                                   "costs ({:.0f} ns)",
                                   name, ns, j.cores, kMinHandOffNs));
    if (j.maxNs > 0 && ns > j.maxNs)
      return untrusted(fmt::format("a {} came out at {:.0f} ns per boundary, more than the {:.0f} ns the planner "
                                   "accepts",
                                   name, ns, j.maxNs));
  }
  return c;
}

}  // namespace sk
