// The cuda simulator's engine (runtime/cuda/sim, CudaSim.h) on kernels
// compiled as simulated CUDA (sim_kernels.cpp): barriers and shuffles mean
// what they mean on a GPU, and everything a GPU would silently get wrong or
// hang on is one error of the launch naming the CTA.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "sim/sim_kernels.h"
#include "superkernel/cuda/CudaSim.h"

namespace {
using namespace sk::cuda_sim;
using ::testing::HasSubstr;

struct SimGuard {
  explicit SimGuard(Config c) : saved(config()) {
    setConfig(c);
    simBind(ops());
  }
  ~SimGuard() { setConfig(saved); }
  Config saved;
};

int launch(SimKernelFn k, void* arg, unsigned grid, unsigned threads, size_t smem = 0) {
  return ops()->launch(simEnter, sk_cuda_sim_dim3{grid, 1, 1}, sk_cuda_sim_dim3{threads, 1, 1}, smem, k, arg);
}

Config small(uint32_t sms = 4) {
  Config c;
  c.multiprocessors = sms;
  c.watchdog = std::chrono::milliseconds(20000);
  return c;
}

TEST(CudaSim, CtaReductionsOverWarpsAndSharedMemory) {
  SimGuard g(small());
  const uint32_t blocks = 6, n = 1000;
  std::vector<float> x(blocks * n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  std::vector<float> sum(blocks, -1), mx(blocks, -1);
  SimReduceArgs a{x.data(), n, sum.data(), mx.data()};
  // 96 threads: three warps, so the cross-warp step of sk_cta_sum matters; 6 CTAs on 4 SMs run in two waves.
  ASSERT_EQ(launch(simReduceKernel, &a, blocks, 96), 0) << lastLaunchError();
  for (uint32_t b = 0; b < blocks; ++b) {
    double want = 0;
    float wantMax = -1e30f;
    for (uint32_t i = 0; i < n; ++i) want += x[b * n + i];
    for (uint32_t t = 0; t < 96; ++t) wantMax = std::max(wantMax, x[b * n + t % n]);
    EXPECT_NEAR(sum[b], want, 1e-2) << b;
    EXPECT_EQ(mx[b], wantMax) << b;
  }
}

TEST(CudaSim, SyncthreadsOrdersDynamicSharedMemory) {
  SimGuard g(small());
  const uint32_t blocks = 3, threads = 64;
  std::vector<uint32_t> out(blocks * threads, 0);
  SimSmemArgs a{out.data()};
  ASSERT_EQ(launch(simSmemKernel, &a, blocks, threads, threads * 4), 0) << lastLaunchError();
  for (uint32_t b = 0; b < blocks; ++b)
    for (uint32_t t = 0; t < threads; ++t) EXPECT_EQ(out[b * threads + t], ((t + 1) % threads) * 3u + b);
}

TEST(CudaSim, ExitedThreadsDoNotHoldABarrier) {
  SimGuard g(small());
  std::vector<uint32_t> out(64, 0);
  SimSmemArgs a{out.data()};
  ASSERT_EQ(launch(simEarlyReturnKernel, &a, 1, 64), 0) << lastLaunchError();
  EXPECT_EQ(std::accumulate(out.begin(), out.end(), 0u), 40u);
}

TEST(CudaSim, ABarrierNotEveryThreadReachesIsAnError) {
  SimGuard g(small());
  EXPECT_EQ(launch(simDivergentKernel, nullptr, 2, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("16 wait at __syncthreads"));
  EXPECT_THAT(lastLaunchError(), HasSubstr("16 at a warp shuffle or __syncwarp"));
}

TEST(CudaSim, LanesAtDifferentWarpOperationsAreAnError) {
  SimGuard g(small());
  EXPECT_EQ(launch(simWarpMixKernel, nullptr, 1, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("lanes wait at different warp operations"));
}

// A thread spinning without __nanosleep cannot be stopped: after the watchdog fails the launch and a grace period,
// the report goes to onHang (the tools exit there); here the handler lets the spinner go, and the launch fails.
TEST(CudaSim, ACtaThatCannotBeStoppedGoesToTheHangHandler) {
  Config c = small();
  // The report says what each CTA is doing when the watchdog fires; CTA 1 must have reached its wait by then,
  // and under TSan on a loaded machine its thread took more than 200 ms to get there (CI saw "is running").
  c.watchdog = std::chrono::milliseconds(1000);
  int stop = 0;
  std::string told;
  c.onHang = [&](const std::string& report) {
    told = report;
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
  };
  SimGuard g(c);
  unsigned long long flag = 0;
  SimSpinArgs a{&stop, &flag};
  EXPECT_EQ(launch(simSpinKernel, &a, 2, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(told, HasSubstr("never return"));
  EXPECT_THAT(told, HasSubstr("CTA 0 is running"));
  EXPECT_THAT(told, HasSubstr("CTA 1 waits for the word at"));
  EXPECT_THAT(lastLaunchError(), HasSubstr("no progress for 1000 ms"));
}

TEST(CudaSim, APartialWarpMaskIsAnError) {
  SimGuard g(small());
  EXPECT_EQ(launch(simPartialMaskKernel, nullptr, 1, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("mask 0xffff"));
}

TEST(CudaSim, TrapFailsTheLaunchNamingTheThread) {
  SimGuard g(small());
  EXPECT_EQ(launch(simTrapKernel, nullptr, 4, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("CTA 2 thread 5: __trap()"));
  // The next launch is unaffected.
  std::vector<uint32_t> out(32, 0);
  SimSmemArgs a{out.data()};
  EXPECT_EQ(launch(simSmemKernel, &a, 1, 32, 128), 0) << lastLaunchError();
}

TEST(CudaSim, AHangIsReportedWithTheWordItWaitsOn) {
  Config c = small();
  c.watchdog = std::chrono::milliseconds(300);
  SimGuard g(c);
  unsigned long long flag = 0;
  SimFlagArgs a{&flag};
  EXPECT_EQ(launch(simHangKernel, &a, 2, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("no progress for 300 ms"));
  EXPECT_THAT(lastLaunchError(), HasSubstr("CTA 1 waits for the word at"));
  EXPECT_THAT(lastLaunchError(), HasSubstr(">= 1 (it is 0)"));
}

// On one multiprocessor CTA 1 waits for ever and CTA 2 never gets to start: the report counts it, so a grid
// that is not co-resident reads differently from a wait nobody satisfies.
TEST(CudaSim, AHangReportCountsTheCtasThatNeverStarted) {
  Config c = small(1);
  c.watchdog = std::chrono::milliseconds(300);
  SimGuard g(c);
  unsigned long long flag = 0;
  SimFlagArgs a{&flag};
  EXPECT_EQ(launch(simHangKernel, &a, 3, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("CTA 1 waits for the word at"));
  EXPECT_THAT(lastLaunchError(), HasSubstr("1 of 3 CTAs have not started"));
}

TEST(CudaSim, BadLaunchShapesAreRefused) {
  SimGuard g(small());
  EXPECT_EQ(launch(simSmemKernel, nullptr, 1, 2048), SK_CUDA_SIM_ERR_INVALID_VALUE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("1..1024 threads"));
  EXPECT_EQ(launch(simSmemKernel, nullptr, 0, 32), SK_CUDA_SIM_ERR_INVALID_VALUE);
}

// A chain of flags across co-resident CTAs gives the right order with its
// waits; without them, the skewed CTAs (later CTAs start earlier) break it.
// This is what makes a missing wait in generated code a wrong result.
TEST(CudaSim, SkewTurnsAMissingWaitIntoAWrongResult) {
  Config c = small(8);
  c.skewMicros = 2000;
  SimGuard g(c);
  for (int wait : {1, 0}) {
    std::vector<unsigned long long> flags(8, 0);
    std::vector<uint32_t> data(8, 0);
    SimChainArgs a{flags.data(), data.data(), wait};
    ASSERT_EQ(launch(simChainKernel, &a, 8, 32), 0) << lastLaunchError();
    bool ordered = true;
    for (uint32_t b = 0; b < 8; ++b) ordered = ordered && data[b] == b + 1;
    EXPECT_EQ(ordered, wait == 1) << "wait=" << wait;
  }
}

// Collectives (docs/COLLECTIVES.md, "On cuda-sim"): the CTA's thread hands the call to the engine, which runs it
// through the launching thread's Collectives (the device's communicator) while the other CTAs go on.
struct CollectiveCase {
  std::vector<float> in = std::vector<float>(8, 2.0f), out = std::vector<float>(8, 0.0f), seen = std::vector<float>(32, 0.0f);
  unsigned long long flag = 0;
  SimCollectiveArgs args{in.data(), out.data(), 8, 0x1234, &flag, seen.data()};
};

TEST(CudaSim, ACollectiveRunsOnItsCtaWhileTheOtherCtasGoOn) {
  SimGuard g(small());
  CollectiveCase t;
  uint64_t tag = 0;
  Collectives coll;
  coll.run = [&](const sk_cuda_sim_collective_args& a, const std::function<bool()>& stop) -> std::string {
    tag = a.tag;
    // CTA 1 sets the flag while CTA 0 is in here (early start): a collective blocks its CTA only.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!__atomic_load_n(&t.flag, __ATOMIC_ACQUIRE)) {
      if (stop() || std::chrono::steady_clock::now() > until) return "CTA 1 did not run beside the collective";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (int64_t i = 0; i < a.n_in; ++i) static_cast<float*>(a.out)[i] = 2 * static_cast<const float*>(a.in)[i];
    return "";
  };
  coll.name = [](const sk_cuda_sim_collective_args&) { return std::string("collective op \"t\""); };
  CollectivesScope scope(&coll);
  ASSERT_EQ(launch(simCollectiveKernel, &t.args, 2, 32), 0) << lastLaunchError();
  EXPECT_EQ(tag, 0x1234u);
  for (float v : t.out) EXPECT_EQ(v, 4.0f);
  for (float v : t.seen) EXPECT_EQ(v, 4.0f);  // every thread of the CTA, after the barrier
}

TEST(CudaSim, AFailedCollectiveFailsTheLaunchWithItsError) {
  SimGuard g(small());
  CollectiveCase t;
  {
    Collectives coll;
    coll.run = [](const sk_cuda_sim_collective_args&, const std::function<bool()>&) {
      return std::string("collective op \"t\" on rank 0 (...): rank 1 runs another op: ranks disagree on the plan");
    };
    CollectivesScope scope(&coll);
    EXPECT_EQ(launch(simCollectiveKernel, &t.args, 2, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
    EXPECT_THAT(lastLaunchError(), HasSubstr("collective op \"t\" on rank 0 (...): rank 1 runs another op"));
  }
  // A launch made outside any CollectivesScope has no communicator.
  EXPECT_EQ(launch(simCollectiveKernel, &t.args, 2, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("CTA 0: a collective op ran in a launch made without a communicator"));
}

TEST(CudaSim, ACollectiveThatNeverCompletesIsNamedInTheHangReport) {
  Config c = small();
  c.watchdog = std::chrono::milliseconds(300);
  SimGuard g(c);
  CollectiveCase t;
  Collectives coll;
  coll.run = [](const sk_cuda_sim_collective_args&, const std::function<bool()>& stop) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!stop() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::string("stopped: the launch failed");
  };
  coll.name = [](const sk_cuda_sim_collective_args&) { return std::string("collective op \"t\""); };
  CollectivesScope scope(&coll);
  EXPECT_EQ(launch(simCollectiveKernel, &t.args, 2, 32), SK_CUDA_SIM_ERR_LAUNCH_FAILURE);
  EXPECT_THAT(lastLaunchError(), HasSubstr("no progress for 300 ms"));
  EXPECT_THAT(lastLaunchError(), HasSubstr("CTA 0 runs collective op \"t\" (waiting for the other ranks)"));
}

}  // namespace
