// Calibration of the cpu SyncCosts: what one worker spends at an op boundary on a barrier, a counter wait
// and a flag wait, measured on the executor present, with the runtime's own primitives (the generated
// code's sk_barrier, sk_counter_arrive, sk_flag_set and sk_wait_ge).
//
// Why this shape: the cost that matters is not a primitive in a tight loop (bench/runtime_primitives.cpp
// has those) but what a boundary adds to a chain of small ops that stream their own data, as a fused step
// does: each op evicts the sync lines the previous ones touched, and a counter or flag wait reads a line of
// its own per op where a barrier reuses one, and it waits for the slower core's jitter. So every sample is a
// chain of small ops per worker, each computing y = x * a + b on its own 8 KiB slices of buffers larger
// than the caches (the shape of the boundary benchmark's chains), with one kind of boundary after every
// op: none (the ideal), a barrier of all workers, an all-to-all counter (one line per op), a flag wait on
// the next worker's block (one line per op and worker). Cost per boundary = (chain - ideal) / ops, the
// median over repetitions in which the four chains run interleaved (in a rotating order), so load on a
// shared machine shifts all four alike.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <vector>

#include "superkernel/cpu/superkernel_rt.h"
#include "superkernel/runtime/Executor.h"
#include "backends/cpu/CpuBackend.h"
#include "support/Untrusted.h"

namespace sk {

namespace {

constexpr uint32_t kMaxOps = 1000;     // boundaries per chain (fewer on many workers: kMaxBytes)
constexpr size_t kSliceFloats = 2048;  // per op and worker: y = x * a + b over 8 KiB in, 8 KiB out
constexpr size_t kMaxBytes = size_t{64} << 20;
constexpr int kReps = 31;              // interleaved repetitions (after kWarmup)
constexpr int kWarmup = 2;
// What a usable measurement is (a steady sync-free chain, no boundary cheaper than a hand-off): SyncChains.h.

enum Kind : uint32_t { kIdeal, kBarrier, kCounter, kFlag, kKinds };

struct Chain {
  const sk_services* s = nullptr;
  uint32_t workers = 0;
  Kind kind = kIdeal;
  uint64_t epoch[kKinds] = {};           // launches of each chain so far (targets are multiples of it)
  uint32_t ops = 0;                      // boundaries per chain
  std::vector<float> x, y;               // ops * workers slices each
  std::vector<sk_counter> counters;      // one per op
  std::vector<sk_counter> flags;         // one per op and worker
  sk_counter barrier{};
  int failed = 0;
};

void runChain(void* arg, uint32_t core) {
  auto* ch = static_cast<Chain*>(arg);
  const sk_services* s = ch->s;
  const uint32_t w = ch->workers;
  const uint64_t e = ch->epoch[ch->kind];
  const uint32_t ops = ch->ops;
  for (uint32_t i = 0; i < ops; ++i) {
    const size_t at = (size_t{i} * w + core) * kSliceFloats;
    const float* x = ch->x.data() + at;
    float* y = ch->y.data() + at;
    for (size_t k = 0; k < kSliceFloats; ++k) y[k] = x[k] * 1.0001f + 0.5f;
    int rc = 0;
    switch (ch->kind) {
      case kIdeal:
        break;
      case kBarrier:
        rc = sk_barrier(s, &ch->barrier, w, (e - 1) * ops + i + 1, "sync calibration: barrier");
        break;
      case kCounter:
        sk_counter_arrive(s, &ch->counters[i]);
        rc = sk_wait_ge(s, &ch->counters[i], uint64_t{w} * e, "sync calibration: counter");
        break;
      case kFlag:
        sk_flag_set(s, &ch->flags[size_t{i} * w + core], e);
        rc = sk_wait_ge(s, &ch->flags[size_t{i} * w + (core + 1) % w], e, "sync calibration: flag");
        break;
      case kKinds:
        break;
    }
    if (rc != 0) {
      __atomic_store_n(&ch->failed, 1, __ATOMIC_RELAXED);
      return;
    }
  }
}

// kReps repetitions of the four chains, interleaved in a rotating order, after kWarmup.
Expected<SyncCalibrationTimes> measure(Executor& ex, Chain& ch) {
  SyncCalibrationTimes t;
  t.boundaries = ch.ops;
  t.workers = ch.workers;
  std::vector<double>* samples[kKinds] = {&t.ideal, &t.barrier, &t.counter, &t.flag};
  for (int r = 0; r < kWarmup + kReps; ++r) {
    for (uint32_t j = 0; j < kKinds; ++j) {
      ch.kind = static_cast<Kind>((j + static_cast<uint32_t>(r)) % kKinds);
      ++ch.epoch[ch.kind];
      const auto t0 = std::chrono::steady_clock::now();
      Status st = ex.runCores(ch.workers, runChain, &ch);
      const auto t1 = std::chrono::steady_clock::now();
      if (!st) return std::move(st).error().context("sync calibration");
      if (ch.failed) return internalError("sync calibration: a wait timed out (the executor's workers did not all run)");
      if (r >= kWarmup) samples[ch.kind]->push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
  }
  return t;
}

}  // namespace

Expected<SyncCosts> calibrateCpuSync(Device& device) {
  Executor* ex = cpuExecutor(device);
  if (!ex) return internalError("sync calibration: the device is not a cpu executor");
  Chain ch;
  ch.s = ex->services();
  ch.workers = ex->numWorkers();
  if (ch.workers < 2)
    return badInput(fmt::format("sync calibration needs at least 2 workers (the executor has {}): with one, every "
                                "edge is local and there is nothing to measure; set SK_NUM_WORKERS or --workers",
                                ch.workers));
  ch.ops = static_cast<uint32_t>(
      std::clamp<size_t>(kMaxBytes / (size_t{ch.workers} * kSliceFloats * 2 * sizeof(float)), 64, kMaxOps));
  ch.x.assign(size_t{ch.ops} * ch.workers * kSliceFloats, 1.0f);
  ch.y.assign(ch.x.size(), 0.0f);
  ch.counters.assign(ch.ops, sk_counter{});
  ch.flags.assign(size_t{ch.ops} * ch.workers, sk_counter{});

  return measureUntilTrusted([&] { return measure(*ex, ch); }, syncCostsFromTimes);
}

Expected<SyncCosts> syncCostsFromTimes(const SyncCalibrationTimes& t) {
  SK_ASSIGN_OR_RETURN(
      SyncCosts c,
      syncCostsFromChains(t, {fmt::format("on {} workers", t.workers),
                              "the machine was busy with other work, so nothing was saved: run sk-compile --calibrate "
                              "again when it is idle",
                              "cores", 0}));
  c.source = fmt::format("measured on {} workers", t.workers);
  return c;
}

}  // namespace sk
