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

struct Side {
  CompiledPlan* plan;
  DeviceBuffers* memory;
  const char* name;
  long batch = 1;
  std::vector<double>* samples;
};

Expected<double> once(Session& session, Side& s) {
  Device& dev = *s.plan->device;
  const auto t0 = Clock::now();
  Status st = session.run(*s.plan, s.memory->pointers(), s.memory->size());
  if (st) st = dev.synchronize(dev.defaultStream());
  const auto t1 = Clock::now();
  if (!st) return Error(st.error()).context(std::string(s.name) + " run (timing)");
  return std::chrono::duration<double>(t1 - t0).count();
}
}  // namespace

Expected<Timing> timeRuns(Session& session, CompiledPlan& fused, BufferSet& fusedBuffers, CompiledPlan& unfused,
                          BufferSet& unfusedBuffers, const TimingConfig& cfg) {
  Timing t;
  t.warmups = cfg.warmups;
  if (!fused.device || !unfused.device) return badInput("timing: the plans were not compiled by a session");
  DeviceBuffers fusedMemory(*fused.device, fusedBuffers), unfusedMemory(*unfused.device, unfusedBuffers);
  SK_RETURN_IF_ERROR(fusedMemory.upload());
  SK_RETURN_IF_ERROR(unfusedMemory.upload());
  Side sides[2] = {{&fused, &fusedMemory, "fused", 1, &t.fusedSeconds},
                   {&unfused, &unfusedMemory, "unfused", 1, &t.unfusedSeconds}};
  // Warm up, then size each side's batch to ~sampleMs from a short probe.
  for (Side& s : sides) {
    for (int i = 0; i < cfg.warmups; ++i) SK_RETURN_IF_ERROR(once(session, s));
    // The probe's median run, not its mean: one preempted run must not
    // shrink the batch to a handful of runs.
    double spent = 0;
    std::vector<double> probe;
    do {
      SK_ASSIGN_OR_RETURN(double d, once(session, s));
      spent += d;
      probe.push_back(d);
    } while (spent < 2e-3 && probe.size() < 1000);
    const double per = summarize(std::move(probe)).median;
    s.batch = std::clamp(static_cast<long>(cfg.sampleMs * 1e-3 / std::max(per, 1e-9)), 1L, 100000L);
  }
  for (int r = 0; r < cfg.samples; ++r) {
    for (int j = 0; j < 2; ++j) {
      Side& s = sides[(j + r) % 2];  // the side that goes first alternates
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg.settleMs));
      SK_RETURN_IF_ERROR(once(session, s));  // wakes the pool after the pause; not timed
      std::vector<double> runs;
      runs.reserve(static_cast<size_t>(s.batch));
      for (long i = 0; i < s.batch; ++i) {
        SK_ASSIGN_OR_RETURN(double d, once(session, s));
        runs.push_back(d);
      }
      s.samples->push_back(summarize(std::move(runs)).median);
    }
  }
  t.fusedBatch = sides[0].batch;
  t.unfusedBatch = sides[1].batch;
  t.fused = summarize(t.fusedSeconds);
  t.unfused = summarize(t.unfusedSeconds);
  t.speedup = pairedSpeedup(t.fusedSeconds, t.unfusedSeconds);
  return t;
}

}  // namespace sk::tools
