// `sk-compile --run` timing, with the benchmark suite's method (bench/suite.cpp):
// single unpinned runs of a short chain measure the scheduler (a preempted
// worker costs whole time slices), which once printed "speedups" of 10x to
// 500x. So: warm-up runs, then per variant a batch sized to ~sampleMs; each
// run of the batch is timed alone and the sample is the batch's median run;
// samples alternate fused/unfused with the starting side rotating and a short
// sleep before each (so the other side's spinning workers are asleep); the
// result is the median of the samples with their min-max, and the speedup is
// computed per sample pair (taken moments apart), then summarized. On a
// device with its own memory (cuda) the buffers are uploaded once before the
// runs, and each timed run ends with Device::synchronize: it times the
// launches and the wait for them, never the transfers (host timer; CUDA
// events are not used yet).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "superkernel/session/BufferSet.h"
#include "superkernel/session/DeviceBuffers.h"
#include "superkernel/session/Session.h"
#include "superkernel/target/Backend.h"
#include "superkernel/support/Error.h"

namespace sk::tools {

struct TimingConfig {
  int warmups = 2;           // untimed runs of each side first
  int samples = 5;           // timed samples per side
  double sampleMs = 20;      // target length of one sample's batch
  int settleMs = 5;          // sleep before each sample
};

struct Summary {
  double median = 0, min = 0, max = 0;
};
Summary summarize(std::vector<double> v);
/// unfused / fused per sample pair (samples taken moments apart), summarized:
/// the speedup both `--run` and `--tokens` report.
Summary pairedSpeedup(const std::vector<double>& fusedSeconds, const std::vector<double>& unfusedSeconds);

struct Timing {
  std::vector<double> fusedSeconds, unfusedSeconds;  // one per sample: the batch's median run
  long fusedBatch = 1, unfusedBatch = 1;             // runs per sample
  Summary fused, unfused;                            // over the samples (seconds)
  Summary speedup;                                   // unfused / fused per sample pair
  int warmups = 0;
};

/// Runs both plans on their buffers per the method above. A run failure is a
/// Runtime error naming which side.
Expected<Timing> timeRuns(Session& session, CompiledPlan& fused, BufferSet& fusedBuffers, CompiledPlan& unfused,
                          BufferSet& unfusedBuffers, const TimingConfig& config);

/// One side of a timed comparison of any number of sides (`sk-compile --run --baselines`): `run` enqueues one
/// run, `sync` waits for it; a run's time is both.
struct TimedSide {
  std::string name;
  std::function<Status()> run, sync;
};
struct SideTiming {
  std::vector<double> seconds;  // one per sample: the batch's median run
  long batch = 1;               // runs per sample
  Summary summary;              // over the samples (seconds)
};
/// The method above over `sides` (timeRuns is its two-side case): warm-ups and a batch size per side, then
/// per sample every side once, the side that goes first rotating. A failure names its side.
Expected<std::vector<SideTiming>> timeSides(const std::vector<TimedSide>& sides, const TimingConfig& config);
/// A plan's side: Session::run on `memory` (uploaded), then Device::synchronize of its default stream.
TimedSide planSide(Session& session, CompiledPlan& plan, DeviceBuffers& memory, std::string name);

}  // namespace sk::tools
