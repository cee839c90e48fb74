// The Ascend simulator's semantics (runtime/ascend/sim): the identity
// registers per task type, each sync primitive used correctly, and each
// misuse a wrong SuperKernel could contain reported as an error — never a
// silent pass. Kernels are in SimKernels.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "superkernel/ascend/Simulator.h"
#include "SimLaunch.h"

extern "C" {
void sk_ascend_sim_enter(const sk_ascend_sim_core*);
void sim_identity(uint8_t*);
void sim_syncall_aiv(uint8_t*, uint8_t*, uint8_t*);
void sim_syncall_mix(uint8_t*, uint8_t*, uint8_t*);
void sim_mode2(uint8_t*, uint8_t*);
void sim_mode1(uint8_t*, uint8_t*);
void sim_early_start(uint8_t*, uint8_t*, uint8_t*);
void sim_wait_unset(uint8_t*);
void sim_wait_wrong_type(uint8_t*);
void sim_set_unwaited(uint8_t*);
void sim_overflow(uint8_t*);
void sim_mode0_partial(uint8_t*);
void sim_misuse(uint8_t*);
void sim_declares_mix12(uint8_t*);
void sim_gm_notify(uint8_t*, uint8_t*, uint8_t*);
void sim_trap(uint8_t*);
void sim_preload(uint8_t*);
void sim_syncall_some(uint8_t*, uint8_t*, uint8_t*);
}

namespace {

using sk::ascend_sim::LaunchSpec;
using sk::ascend_sim::TaskType;

using sktest::ascend::simOutcome;
using sktest::ascend::simSpec;

TEST(AscendSim, IdentityPerTaskType) {
  struct Case {
    TaskType type;
    uint32_t aic, aiv, subDim;
  };
  for (Case c : {Case{TaskType::AivOnly, 0, 3, 1}, Case{TaskType::AicOnly, 3, 0, 1}, Case{TaskType::MixAic1_1, 3, 3, 1},
                 Case{TaskType::MixAic1_2, 3, 6, 2}, Case{TaskType::MixAiv1_0, 0, 3, 1}}) {
    std::vector<int64_t> out(2000 * 8, -1);
    ASSERT_TRUE(sk::ascend_sim::launch(simSpec(sim_identity, c.type, 3, {out.data()})).ok());
    for (uint32_t g = 0; g < 3; ++g) {
      const int64_t* o = &out[g * 8];
      if (c.aic) {
        EXPECT_EQ(o[7], 1);
        EXPECT_EQ(o[0], 0);
        EXPECT_EQ(o[1], g);
        EXPECT_EQ(o[2], g);  // GetBlockIdx on a cube core is its block
        EXPECT_EQ(o[3], 3);
        EXPECT_EQ(o[5], c.subDim);
      } else {
        EXPECT_EQ(o[7], -1) << "no cube core ran";
      }
    }
    for (uint32_t j = 0; j < 6; ++j) {
      const int64_t* o = &out[(1000 + j) * 8];
      if (j >= c.aiv) {
        EXPECT_EQ(o[7], -1);
        continue;
      }
      EXPECT_EQ(o[0], 1);
      EXPECT_EQ(o[1], j / c.subDim);       // get_block_idx: the AI Core
      EXPECT_EQ(o[2], j);                  // GetBlockIdx: the vector core among all of them
      EXPECT_EQ(o[3], 3);                  // GetBlockNum: the launch's block dim
      EXPECT_EQ(o[4], j % c.subDim);
      EXPECT_EQ(o[5], c.subDim);
    }
  }
}

// A single-core-type launch with more blocks than the device's cores runs them in waves, as the hardware
// schedules blocks onto free cores: every block index once, GetBlockNum the launch's, the core ids those of
// the device. A sync of all blocks cannot complete that way (an error naming it); a mix launch (a SuperKernel)
// needs every block at once.
TEST(AscendSim, BlocksBeyondTheCoresRunInWaves) {
  // (type, blocks, the device's cores: 0 = as many as blocks; at most 128 run at once)
  for (const auto& [type, blocks, cores] : {std::tuple{TaskType::AivOnly, 40u, 16u}, std::tuple{TaskType::AicOnly, 20u, 8u},
                                            std::tuple{TaskType::AivOnly, 7u, 16u}, std::tuple{TaskType::AivOnly, 300u, 0u}}) {
    std::vector<int64_t> out(2000 * 8, -1);
    LaunchSpec spec = simSpec(sim_identity, type, blocks, {out.data()});
    spec.residentBlocks = cores;
    const uint32_t wave = std::min({blocks, cores ? cores : blocks, 128u});
    ASSERT_EQ(simOutcome(spec), "<ok>");
    const int64_t base = type == TaskType::AivOnly ? 1000 : 0;
    for (uint32_t b = 0; b < blocks; ++b) {
      const int64_t* o = &out[(base + b) * 8];
      EXPECT_EQ(o[7], 1) << "block " << b << " ran";
      EXPECT_EQ(o[2], b);
      EXPECT_EQ(o[3], blocks);
      EXPECT_EQ(o[6], b % wave) << "the core it ran on";
    }
    EXPECT_EQ(out[(base + blocks) * 8 + 7], -1) << "no block past the block dim";
  }
  std::vector<int64_t> data(64), out(4096, -1), params{1};
  LaunchSpec sync = simSpec(sim_syncall_aiv, TaskType::AivOnly, 20, {data.data(), out.data(), params.data()});
  sync.residentBlocks = 8;
  const std::string waved = simOutcome(sync);
  EXPECT_NE(waved.find("a sync of every core of the launch, whose 20 blocks run in waves of 8"), std::string::npos)
      << waved;
  sync.residentBlocks = 20;  // all resident: the same kernel is fine
  EXPECT_EQ(simOutcome(sync), "<ok>");
  LaunchSpec mix = simSpec(sim_identity, TaskType::MixAic1_2, 5, {out.data()});
  mix.residentBlocks = 4;
  const std::string wide = simOutcome(mix);
  EXPECT_NE(wide.find("KERNEL_TYPE_MIX_AIC_1_2 with block dim 5, but the device runs 4 at once"), std::string::npos)
      << wide;
  LaunchSpec huge = simSpec(sim_identity, TaskType::AivOnly, 70000, {out.data()});
  EXPECT_NE(simOutcome(huge).find("block dim 70000 (a launch has 1..65535 blocks)"), std::string::npos);
}

TEST(AscendSim, SyncAllVectorOnlyOrdersEveryRound) {
  constexpr int64_t rounds = 40, n = 5;  // 80 barriers: the counters must drain every time
  std::vector<int64_t> data(n), out(rounds * n, -1), params{rounds};
  sk::ascend_sim::LaunchStats st;
  ASSERT_TRUE(sk::ascend_sim::launch(simSpec(sim_syncall_aiv, TaskType::AivOnly, n, {data.data(), out.data(), params.data()}),
                                     &st)
                  .ok());
  for (int64_t r = 0; r < rounds; ++r)
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[r * n + i], r * 1000 + (i + 1) % n) << r << " " << i;
  EXPECT_EQ(st.sets, uint64_t(rounds * n * 2));
}

TEST(AscendSim, SyncAllMixCubeAndVector) {
  constexpr int64_t rounds = 20;
  std::vector<int64_t> data(64), out(4000, -1), params{rounds};
  ASSERT_TRUE(sk::ascend_sim::launch(simSpec(sim_syncall_mix, TaskType::MixAic1_2, 3, {data.data(), out.data(), params.data()}))
                  .ok());
  for (int64_t r = 0; r < rounds; ++r)
    for (int64_t g = 0; g < 3; ++g) EXPECT_EQ(out[r * 64 + g], r * 100 + g + 1);
}

TEST(AscendSim, Mode2CubeToVectorAndBack) {
  for (TaskType t : {TaskType::MixAic1_2, TaskType::MixAic1_1}) {
    std::vector<int64_t> data(200, 0), out(8, -1);
    ASSERT_TRUE(sk::ascend_sim::launch(simSpec(sim_mode2, t, 4, {data.data(), out.data()})).ok());
    for (int64_t g = 0; g < 4; ++g) {
      // 1:2: both vector cores of AI Core g wrote (7 + g) * 10; 1:1: its one vector core did.
      const int64_t expect = (t == TaskType::MixAic1_2 ? 2 : 1) * (7 + g) * 10;
      EXPECT_EQ(out[g], expect);
    }
  }
}

TEST(AscendSim, Mode1PairsTheTwoVectorCores) {
  std::vector<int64_t> data(8), out(8, -1);
  ASSERT_TRUE(sk::ascend_sim::launch(simSpec(sim_mode1, TaskType::MixAic1_2, 3, {data.data(), out.data()})).ok());
  for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(out[j], 50 + (j ^ 1));
}

// Every (previous, current) device-type pair of a V2 early-start wait orders the two ops and leaves no flag behind.
class EarlyStartPairs : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(EarlyStartPairs, WaitPreTaskEndOrdersAndDrains) {
  const auto [prev, cur] = GetParam();
  std::vector<int64_t> data(200, 0), out(200, -1), params{prev, cur, (prev << 2) | cur};
  ASSERT_TRUE(sk::ascend_sim::launch(simSpec(sim_early_start, TaskType::MixAic1_2, 3, {data.data(), out.data(), params.data()}))
                  .ok());
  int64_t expect = 0;
  for (int64_t s = 0; s < 3; ++s) expect += prev != 1 ? 1000 + s : 0;
  for (int64_t s = 100; s < 106; ++s) expect += prev != 0 ? 1000 + s : 0;
  for (int64_t s = 0; s < 3; ++s) EXPECT_EQ(out[s], cur != 1 ? expect : -1);
  for (int64_t s = 100; s < 106; ++s) EXPECT_EQ(out[s], cur != 0 ? expect : -1);
}

INSTANTIATE_TEST_SUITE_P(AscendSim, EarlyStartPairs,
                         ::testing::Values(std::pair{0, 0}, std::pair{0, 1}, std::pair{0, 2}, std::pair{1, 0},
                                           std::pair{1, 1}, std::pair{1, 2}, std::pair{2, 0}, std::pair{2, 1},
                                           std::pair{2, 2}));

TEST(AscendSim, EarlyStartWithTheWrongPairIsCaught) {
  // The previous op ran on both core types but the wait is configured for vector -> vector: the cube cores'
  // SYNC_AIC_FLAG is never consumed.
  std::vector<int64_t> data(200, 0), out(200, -1), params{2, 1, (1 << 2) | 1};
  const std::string e = simOutcome(simSpec(sim_early_start, TaskType::MixAic1_2, 2, {data.data(), out.data(), params.data()}));
  EXPECT_NE(e.find("unconsumed set(s) of flag 11 (SYNC_AIC_FLAG)"), std::string::npos) << e;
}

TEST(AscendSim, AWaitNobodySetsIsADeadlock) {
  const std::string e = simOutcome(simSpec(sim_wait_unset, TaskType::MixAic1_2, 2, {nullptr}));
  EXPECT_NE(e.find("deadlock"), std::string::npos) << e;
  EXPECT_NE(e.find("AIV 3 (AI Core 1.1) waits flag 6"), std::string::npos) << e;
  EXPECT_NE(e.find("AIC 0 finished"), std::string::npos) << e;
}

TEST(AscendSim, AFlagWaitedOnTheWrongCoreTypeIsCaught) {
  const std::string e = simOutcome(simSpec(sim_wait_wrong_type, TaskType::MixAic1_2, 2, {nullptr}));
  EXPECT_NE(e.find("deadlock"), std::string::npos) << e;
  EXPECT_NE(e.find("AIC 0 waits flag 3"), std::string::npos) << e;
}

TEST(AscendSim, ASetNobodyWaitsForIsCaught) {
  const std::string e = simOutcome(simSpec(sim_set_unwaited, TaskType::MixAic1_2, 2, {nullptr}));
  EXPECT_NE(e.find("flags left pending"), std::string::npos) << e;
  EXPECT_NE(e.find("AIV 0 (AI Core 0.0) holds 1 unconsumed set(s) of flag 3"), std::string::npos) << e;
}

TEST(AscendSim, CounterOverflowIsCaught) {
  const std::string e = simOutcome(simSpec(sim_overflow, TaskType::AivOnly, 1, {nullptr}));
  EXPECT_NE(e.find("flag 3 of AIV 0 overflows its 4-bit counter"), std::string::npos) << e;
}

TEST(AscendSim, AllCoreSyncOnSomeCoresOnlyIsCaught) {
  const std::string e = simOutcome(simSpec(sim_mode0_partial, TaskType::AivOnly, 4, {nullptr}));
  EXPECT_NE(e.find("AIV 0 made 1 mode-0 set(s) of flag 7 that not every vector core matched"), std::string::npos) << e;
}

// SyncAll is a barrier over every core of the launch (feed-sync-all's premise): a "sub-kernel" on 3 of the
// 4 vector cores syncs correctly when the fourth feeds its SyncAll, and hangs -- reported as a deadlock that
// names the likely cause -- when it does not. Vector-only SyncAll<true>, and SyncAll<false> with cube cores.
TEST(AscendSim, SyncAllIsABarrierOverEveryCoreOfTheLaunch) {
  struct Case {
    TaskType type;
    uint32_t blockDim;  // 4 vector cores either way
    int64_t aivOnly;
  };
  for (Case c : {Case{TaskType::MixAiv1_0, 4, 1}, Case{TaskType::AivOnly, 4, 1}, Case{TaskType::MixAic1_2, 2, 1},
                 Case{TaskType::MixAic1_2, 2, 0}}) {
    SCOPED_TRACE(::testing::Message() << sk::ascend_sim::taskTypeName(c.type) << " SyncAll<" << (c.aivOnly ? "true" : "false")
                                      << ">");
    std::vector<int64_t> data(128, 0), out(128, -1), fed{3, 1, c.aivOnly}, unfed{3, 0, c.aivOnly};
    ASSERT_EQ(simOutcome(simSpec(sim_syncall_some, c.type, c.blockDim, {data.data(), out.data(), fed.data()})), "<ok>");
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t b = 0; b < 3; ++b) EXPECT_EQ(out[r * 64 + b], (r + 1) * 6) << "round " << r << " core " << b;
    const std::string e = simOutcome(simSpec(sim_syncall_some, c.type, c.blockDim, {data.data(), out.data(), unfed.data()}));
    EXPECT_NE(e.find("deadlock"), std::string::npos) << e;
    EXPECT_NE(e.find("feed-sync-all"), std::string::npos) << e;
    EXPECT_NE(e.find("AIV 3" + std::string(c.type == TaskType::MixAic1_2 ? " (AI Core 1.1)" : "") + " finished"),
              std::string::npos)
        << e;
  }
}

TEST(AscendSim, MisusesAreErrors) {
  struct Case {
    int64_t what;
    TaskType type;
    const char* expect;
  };
  for (Case c : {Case{1, TaskType::AivOnly, "mode 1 pairs the two vector cores"},
                 Case{1, TaskType::MixAic1_1, "mode 1 pairs the two vector cores"},
                 Case{2, TaskType::AivOnly, "has only vector cores"},
                 Case{3, TaskType::AivOnly, "is not 1 | mode << 4 | flag << 8"},
                 Case{4, TaskType::AivOnly, "mode 3 does not exist"},
                 Case{5, TaskType::AivOnly, "flag ids are 0..15"},
                 Case{6, TaskType::MixAic1_2, "PIPE_V (1): that pipe does not exist on a cube core"},
                 Case{7, TaskType::MixAic1_2, "PIPE_FIX (10): that pipe does not exist on a vector core"}}) {
    std::vector<int64_t> params{c.what};
    const std::string e = simOutcome(simSpec(sim_misuse, c.type, 2, {params.data()}));
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.what << ": " << e;
  }
}

TEST(AscendSim, DeclaredTaskTypeMustMatchTheLaunch) {
  EXPECT_EQ(simOutcome(simSpec(sim_declares_mix12, TaskType::MixAic1_2, 2, {nullptr})), "<ok>");
  const std::string e = simOutcome(simSpec(sim_declares_mix12, TaskType::MixAiv1_0, 2, {nullptr}));
  EXPECT_NE(e.find("declares KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2) but was launched as "
                   "KERNEL_TYPE_MIX_AIV_1_0"),
            std::string::npos)
      << e;
}

TEST(AscendSim, GmNotifyWaitWorksAndAMissingNotifyTripsTheWatchdog) {
  std::vector<uint64_t> lock{0};
  std::vector<int64_t> out(2, 0), params{1};
  ASSERT_TRUE(sk::ascend_sim::launch(simSpec(sim_gm_notify, TaskType::AivOnly, 3, {lock.data(), out.data(), params.data()}))
                  .ok());
  EXPECT_EQ(out[0], 42);
  lock[0] = 0;
  params[0] = 0;
  LaunchSpec s = simSpec(sim_gm_notify, TaskType::AivOnly, 3, {lock.data(), out.data(), params.data()});
  s.watchdog = std::chrono::milliseconds(200);
  const std::string e = simOutcome(s);
  EXPECT_NE(e.find("watchdog: no core made progress for 200 ms"), std::string::npos) << e;
  EXPECT_NE(e.find("AIV 0 polling GM"), std::string::npos) << e;
}

TEST(AscendSim, TrapFailsTheLaunch) {
  const std::string e = simOutcome(simSpec(sim_trap, TaskType::MixAic1_2, 2, {nullptr}));
  EXPECT_NE(e.find("trap() on AIV 1 (AI Core 0.1)"), std::string::npos) << e;
}

TEST(AscendSim, PreloadChecksUnitsAndTarget) {
  std::vector<int64_t> ok{8, 0}, tooMany{9, 0}, notAFunction{1, 1};
  EXPECT_EQ(simOutcome(simSpec(sim_preload, TaskType::AivOnly, 1, {ok.data()})), "<ok>");
  EXPECT_EQ(simOutcome(simSpec(sim_preload, TaskType::AicOnly, 1, {std::vector<int64_t>{16, 0}.data()})), "<ok>");
  EXPECT_NE(simOutcome(simSpec(sim_preload, TaskType::AivOnly, 1, {tooMany.data()})).find("holds 1..8 units"), std::string::npos);
  EXPECT_NE(simOutcome(simSpec(sim_preload, TaskType::AivOnly, 1, {notAFunction.data()})).find("not the start of a function"),
            std::string::npos);
}

TEST(AscendSim, BadLaunchesAreRejected) {
  LaunchSpec s = simSpec(sim_trap, TaskType::AivOnly, 0, {nullptr});
  sk::Status zero = sk::ascend_sim::launch(s);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind(), sk::ErrorKind::BadInput) << zero.error().message();
  EXPECT_NE(zero.error().message().find("block dim 0 (a launch has 1..65535 blocks)"), std::string::npos)
      << zero.error().message();
  s.type = TaskType::MixAic1_2;  // a mix launch runs every block at once: past what the simulator runs
  s.blockDim = 129;
  sk::Status wide = sk::ascend_sim::launch(s);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message().find("129 blocks at once (the simulator runs 1..128 AI Cores)"), std::string::npos)
      << wide.error().message();
  s.type = TaskType::AivOnly;
  s.blockDim = 1;
  s.entry = nullptr;
  sk::Status noEntry = sk::ascend_sim::launch(s);
  ASSERT_FALSE(noEntry.ok());
  EXPECT_EQ(noEntry.error().kind(), sk::ErrorKind::BadInput) << noEntry.error().message();
  EXPECT_NE(noEntry.error().message().find("no kernel entry or enter hook"), std::string::npos)
      << noEntry.error().message();
}

}  // namespace
