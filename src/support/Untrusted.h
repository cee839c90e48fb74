// The calibrations' retry rule, in one place (cpu's CpuCalibrate.cpp and cuda's CudaCalibrate.cpp): a measurement
// another job disturbed is taken again, a fixed number of times in all, before its error is returned.
//
// Why a Runtime error and nothing else: both calibrations judge their timings with a function that returns
// ErrorKind::Runtime exactly when the timings cannot be trusted (the chain without syncs varied too much, or a
// boundary came out cheaper than a hand-off can be); every other error (a failed launch, a bad argument) is the
// same on the next try, so it ends the calibration at once, as does an error of the measurement itself.
#pragma once

#include <spdlog/spdlog.h>

#include <utility>

#include "superkernel/support/Error.h"

namespace sk {

/// Measurements per calibration at most.
inline constexpr int kCalibrationAttempts = 3;

/// measure() -> Expected<Times>; judge(const Times&) -> Expected<Result>. Returns the first trusted result, the
/// first error that is not Runtime, or the last untrusted error after kCalibrationAttempts measurements.
template <class Measure, class Judge>
auto measureUntilTrusted(Measure&& measure, Judge&& judge) -> decltype(judge(*measure())) {
  decltype(judge(*measure())) result = internalError("calibration: not run");
  for (int attempt = 0; attempt < kCalibrationAttempts; ++attempt) {
    auto times = measure();
    if (!times) return std::move(times).error();
    result = judge(*times);
    if (result || result.error().kind() != ErrorKind::Runtime) break;
    spdlog::info("{} (attempt {} of {})", result.error().message(), attempt + 1, kCalibrationAttempts);
  }
  return result;
}

}  // namespace sk
