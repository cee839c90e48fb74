// The sync calibrations' one rule (cpu's CpuCalibrate.cpp, cuda's CudaCalibrate.cpp): chains of small ops with
// each kind of boundary, timed against the same chain without, become SyncCosts, or an untrusted error.
//
// Why it is one rule: both back ends measure the same thing the same way (interleaved repetitions of the four
// chains, so repetition r of each kind saw the same load), so what counts as a usable measurement and how a
// boundary's cost is derived must not drift apart between them. Only the words differ (workers or CTAs, what
// to do when the machine was busy) and whether a ceiling applies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "superkernel/plan/MachineModel.h"
#include "superkernel/support/Error.h"

namespace sk {

/// One calibration's chain times (ns), one sample per repetition and kind, in the order they ran.
struct SyncChainTimes {
  std::vector<double> ideal, barrier, counter, flag;
  uint32_t boundaries = 0;  // op boundaries per chain (one after each op)
};

/// The words and limits of one back end's judgement.
struct SyncChainJudgement {
  std::string where;       // "on 2 workers", "in the cuda simulator on 2 CTAs": after "sync calibration "
  std::string busy;        // after the reason: that nothing was saved, and what to do
  std::string cores;       // "cores", "SMs": the hand-off the floor stands for
  double maxNs = 0;        // a boundary dearer than this is refused (0: no ceiling)
};

/// The costs the times give: per kind, the median over repetitions of its excess over the ideal chain of the
/// same repetition, per boundary, rounded to ns; `source` is left empty for the caller. A Runtime error when
/// they cannot be trusted: the chain without syncs varied by more than a quarter between repetitions
/// (interquartile range over median), or a boundary came out cheaper than a hand-off between two cores can
/// be (5 ns), or dearer than `maxNs`. Internal: no times, or not one per repetition and kind.
Expected<SyncCosts> syncCostsFromChains(const SyncChainTimes& t, const SyncChainJudgement& j);

}  // namespace sk
