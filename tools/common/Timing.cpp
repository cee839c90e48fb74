#include "common/Timing.h"

#include "superkernel/session/DeviceBuffers.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

namespace sk::tools {

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.min = v.front();
  s.max = v.back();
  return s;
}

Summary pairedSpeedup(const std::vector<double>& fusedSeconds, const std::vector<double>& unfusedSeconds) {
  std::vector<double> ratios;
  for (size_t i = 0; i < fusedSeconds.size() && i < unfusedSeconds.size(); ++i)
    if (fusedSeconds[i] > 0) ratios.push_back(unfusedSeconds[i] / fusedSeconds[i]);
  return summarize(std::move(ratios));
}

namespace {
using Clock = std::chrono::steady_clock;

Expected<double> once(const TimedSide& s) {
  const auto t0 = Clock::now();
  Status st = s.run();
  if (st) st = s.sync();
  const auto t1 = Clock::now();
  if (!st) return Error(st.error()).context(s.name + " run (timing)");
  return std::chrono::duration<double>(t1 - t0).count();
}
}  // namespace

Expected<std::vector<SideTiming>> timeSides(const std::vector<TimedSide>& sides, const TimingConfig& cfg) {
  std::vector<SideTiming> out(sides.size());
  // Warm up, then size each side's batch to ~sampleMs from a short probe.
  for (size_t k = 0; k < sides.size(); ++k) {
    for (int i = 0; i < cfg.warmups; ++i) SK_RETURN_IF_ERROR(once(sides[k]));
    // The probe's median run, not its mean: one preempted run must not
    // shrink the batch to a handful of runs.
    double spent = 0;
    std::vector<double> probe;
    do {
      SK_ASSIGN_OR_RETURN(double d, once(sides[k]));
      spent += d;
      probe.push_back(d);
    } while (spent < 2e-3 && probe.size() < 1000);
    const double per = summarize(std::move(probe)).median;
    out[k].batch = std::clamp(static_cast<long>(cfg.sampleMs * 1e-3 / std::max(per, 1e-9)), 1L, 100000L);
  }
  const size_t n = sides.size();
  for (int r = 0; r < cfg.samples; ++r) {
    for (size_t j = 0; j < n; ++j) {
      const size_t k = (j + static_cast<size_t>(r)) % n;  // the side that goes first rotates
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg.settleMs));
      SK_RETURN_IF_ERROR(once(sides[k]));  // wakes the pool after the pause; not timed
      std::vector<double> runs;
      runs.reserve(static_cast<size_t>(out[k].batch));
      for (long i = 0; i < out[k].batch; ++i) {
        SK_ASSIGN_OR_RETURN(double d, once(sides[k]));
        runs.push_back(d);
      }
      out[k].seconds.push_back(summarize(std::move(runs)).median);
    }
  }
  for (SideTiming& t : out) t.summary = summarize(t.seconds);
  return out;
}

Expected<Timing> timeRuns(Session& session, CompiledPlan& fused, BufferSet& fusedBuffers, CompiledPlan& unfused,
                          BufferSet& unfusedBuffers, const TimingConfig& cfg) {
  Timing t;
  t.warmups = cfg.warmups;
  if (!fused.device || !unfused.device) return badInput("timing: the plans were not compiled by a session");
  DeviceBuffers fusedMemory(*fused.device, fusedBuffers), unfusedMemory(*unfused.device, unfusedBuffers);
  SK_RETURN_IF_ERROR(fusedMemory.upload());
  SK_RETURN_IF_ERROR(unfusedMemory.upload());
  SK_ASSIGN_OR_RETURN(auto sides, timeSides({planSide(session, fused, fusedMemory, "fused"),
                                             planSide(session, unfused, unfusedMemory, "unfused")},
                                            cfg));
  t.fusedSeconds = sides[0].seconds;
  t.unfusedSeconds = sides[1].seconds;
  t.fusedBatch = sides[0].batch;
  t.unfusedBatch = sides[1].batch;
  t.fused = sides[0].summary;
  t.unfused = sides[1].summary;
  t.speedup = pairedSpeedup(t.fusedSeconds, t.unfusedSeconds);
  return t;
}

TimedSide planSide(Session& session, CompiledPlan& plan, DeviceBuffers& memory, std::string name) {
  Device* dev = plan.device;
  return TimedSide{std::move(name),
                   [&session, &plan, &memory] { return session.run(plan, memory.pointers(), memory.size()); },
                   [dev] { return dev->synchronize(dev->defaultStream()); }};
}

}  // namespace sk::tools
