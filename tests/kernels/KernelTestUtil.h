// Shared helpers of the kernel tests: executors of a few sizes, a launcher
// for lambdas, deterministic data and bf16/f16 conversions (written
// independently of the kernels so they act as references).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "KernelDecls.h"
#include "superkernel/runtime/Executor.h"

namespace sktest {

/// Executors reused across tests (thread start-up is not what is tested).
inline sk::Executor& executor(uint32_t workers) {
  static sk::Executor one({1, 2000});
  static sk::Executor three({3, 2000});
  static sk::Executor eight({8, 2000});
  return workers == 1 ? one : workers == 3 ? three : eight;
}

inline const std::vector<uint32_t>& workerCounts() {
  static const std::vector<uint32_t> w{1, 3, 8};
  return w;
}

/// Run f(ctx) for every block of blockDim on the executor (launchKernel: so
/// sk_report_error inside a kernel fails the launch).
template <class F>
sk::Status runBlocks(sk::Executor& ex, uint32_t blockDim, F&& f) {
  using Fn = std::remove_reference_t<F>;
  return ex.launchKernel([](void* arg, const sk_ctx* ctx) { (*static_cast<Fn*>(arg))(ctx); }, &f, blockDim, false);
}

/// The block dims every kernel is run with: 1, not dividing most sizes,
/// more than the workers, more than the work.
inline const std::vector<uint32_t>& blockDims() {
  static const std::vector<uint32_t> b{1, 2, 3, 7, 16, 40};
  return b;
}

inline std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

inline float bf16ToFloat(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Reference f32 -> bf16: round to nearest even computed with doubles
/// (independent of the kernel's bit trick).
inline uint16_t floatToBf16Ref(float f) {
  if (std::isnan(f)) return 0x7fc0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t down = static_cast<uint16_t>(u >> 16);
  uint16_t up = static_cast<uint16_t>(down + 1);
  double dd = std::fabs(static_cast<double>(bf16ToFloat(down)) - f);
  // One step past the largest finite bf16 is 2^128 for rounding purposes
  // (IEEE: a result that rounds beyond the maximum overflows to inf).
  double vu = (up & 0x7fff) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), f) : bf16ToFloat(up);
  double du = std::fabs(vu - f);
  if (dd < du) return down;
  if (du < dd) return up;
  return (down & 1) ? up : down;
}

inline float f16ToFloatRef(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
  double v;
  if (exp == 0) v = std::ldexp(man, -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(1024 + man, exp - 25);
  return static_cast<float>(sign ? -v : v);
}

inline std::vector<uint16_t> toBf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = floatToBf16Ref(v[i]);
  return out;
}

/// |a - b| <= atol + rtol * |b|, element by element, with the first mismatch named.
inline ::testing::AssertionResult near(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                                       double atol = 1e-5) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= atol + rtol * std::fabs(static_cast<double>(want[i]))))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sktest
