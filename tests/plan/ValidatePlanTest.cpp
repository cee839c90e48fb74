// validatePlan on hand-built SuperKernelPlans: a plan that could hang or
// race is an error.
#include <gtest/gtest.h>

#include "superkernel/plan/Plan.h"

namespace sk {
namespace {

BoundArg buf(int b, Access a, Partition p = Partition::Block, uint64_t count = 64) {
  BoundArg x;
  x.kind = ParamKind::Buffer;
  x.buffer = b;
  x.access = a;
  x.partition = p;
  x.count = count;
  return x;
}

// Two ops on one queue of 2 cores: P writes buffer 0 (4 blocks), C reads it (2 blocks).
SuperKernelPlan good() {
  SuperKernelPlan sk;
  sk.name = "t";
  sk.fused = true;
  sk.numCores = 2;
  sk.buffers = {PlanBuffer{"a", DType::F32, 64, 0}, PlanBuffer{"b", DType::F32, 64, 1}};
  PlannedOp p;
  p.name = "P";
  p.blockDim = 4;
  p.args = {buf(1, Access::Read), buf(0, Access::Write)};
  PlannedOp c;
  c.name = "C";
  c.blockDim = 2;
  c.args = {buf(0, Access::Read), buf(1, Access::Write)};
  sk.ops = {p, c};
  sk.queues = {Queue{0, 0, 2, {0, 1}}};
  Edge e;
  e.producer = 0;
  e.consumer = 1;
  e.sync = SyncKind::Flag;
  e.buffer = "a";
  e.flagRanges = {{0, 1}, {2, 3}};
  sk.edges = {e};
  return sk;
}

std::string failure(const SuperKernelPlan& sk) {
  Status s = validatePlan(sk);
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.error().message();
}

TEST(ValidatePlan, GoodPlanPasses) {
  Status s = validatePlan(good());
  EXPECT_TRUE(s.ok()) << s.error().message();
  SuperKernelPlan c = good();
  c.edges[0].sync = SyncKind::Counter;
  c.edges[0].flagRanges.clear();
  EXPECT_TRUE(validatePlan(c).ok());
  c.edges[0].sync = SyncKind::Barrier;
  c.ops[1].barrierBefore = true;
  EXPECT_TRUE(validatePlan(c).ok());
}

TEST(ValidatePlan, WaitWithoutSignaller) {
  SuperKernelPlan sk = good();
  sk.edges[0].producer = 7;
  EXPECT_NE(failure(sk).find("missing op (no signaller)"), std::string::npos);
  sk = good();
  std::swap(sk.edges[0].producer, sk.edges[0].consumer);
  EXPECT_NE(failure(sk).find("producer does not precede consumer"), std::string::npos);
  sk = good();
  sk.edges[0].flagRanges = {{0, 1}, {2, 4}};
  EXPECT_NE(failure(sk).find("producer block that does not exist"), std::string::npos);
  sk = good();
  sk.edges[0].sync = SyncKind::None;
  EXPECT_NE(failure(sk).find("sync kind none"), std::string::npos);
}

TEST(ValidatePlan, FlagRangesSizedAndCovering) {
  SuperKernelPlan sk = good();
  sk.edges[0].flagRanges = {{0, 1}};
  EXPECT_NE(failure(sk).find("1 flag ranges for 2 consumer blocks"), std::string::npos);
  sk = good();
  sk.edges[0].flagRanges = {{0, 1}, {2, 2}};  // consumer block 1 also needs producer block 3
  EXPECT_NE(failure(sk).find("flag range of consumer block 1 misses producer blocks"), std::string::npos);
}

TEST(ValidatePlan, LocalMustBeLocal) {
  SuperKernelPlan sk = good();
  sk.edges[0].sync = SyncKind::Local;
  sk.edges[0].flagRanges.clear();
  EXPECT_NE(failure(sk).find("local edge but consumer block 0 needs producer block 1 of another core"),
            std::string::npos);
  // With one core it is local.
  sk.numCores = 1;
  sk.queues[0].numCores = 1;
  EXPECT_TRUE(validatePlan(sk).ok());
}

TEST(ValidatePlan, BarrierNeedsBarrierBefore) {
  SuperKernelPlan sk = good();
  sk.edges[0].sync = SyncKind::Barrier;
  EXPECT_NE(failure(sk).find("barrier edge without barrierBefore"), std::string::npos);
}

TEST(ValidatePlan, KernelSyncMustFitItsQueue) {
  SuperKernelPlan sk = good();
  sk.ops[0].kernelSync = true;  // 4 blocks, 2 cores: blocks 0 and 2 share a core and would wait for each other
  Status s = validatePlan(sk);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(s.error().message().find("kernel_sync op 0 (P) has 4 blocks but its queue only 2 cores"),
            std::string::npos);
}

TEST(ValidatePlan, QueueShape) {
  SuperKernelPlan sk = good();
  sk.queues[0].ops = {1, 0};
  EXPECT_FALSE(validatePlan(sk).ok());
  sk = good();
  sk.queues[0].ops = {0};
  EXPECT_NE(failure(sk).find("op 1 (C) is in 0 queues"), std::string::npos);
  sk = good();
  sk.queues.push_back(Queue{1, 1, 1, {}});
  EXPECT_NE(failure(sk).find("core 1 belongs to two queues"), std::string::npos);
  sk = good();
  sk.queues[0].numCores = 3;
  EXPECT_NE(failure(sk).find("cores outside"), std::string::npos);
  sk = good();
  sk.ops[1].args[0].buffer = 5;
  EXPECT_NE(failure(sk).find("missing buffer"), std::string::npos);
  sk = good();
  sk.ops[1].queue = 1;
  EXPECT_NE(failure(sk).find("is listed in queue 0 but says queue 1"), std::string::npos) << failure(sk);
  // Cross-queue edges must be events.
  sk = good();
  sk.numCores = 3;
  sk.queues = {Queue{0, 0, 2, {0}}, Queue{1, 2, 1, {1}}};
  sk.ops[1].queue = 1;
  EXPECT_NE(failure(sk).find("flag edge across queues"), std::string::npos);
  sk.edges[0].sync = SyncKind::Event;
  sk.edges[0].flagRanges.clear();
  EXPECT_TRUE(validatePlan(sk).ok());
}

// Side launches: what they wait for and what waits for them must exist, ascend, and never cross (a
// SuperKernel op that waits for a side launch which waits for a later op of the same SuperKernel).
TEST(ValidatePlan, SideLaunchesMustNotWaitInACycle) {
  SuperKernelPlan ok = good();
  ok.sides = {SideLaunch{1, 1, {0}, {1}}};
  Status s = validatePlan(ok);
  EXPECT_TRUE(s.ok()) << s.error().message();

  SuperKernelPlan crossed = good();
  crossed.sides = {SideLaunch{1, 1, {1}, {0}}};
  EXPECT_NE(failure(crossed).find("waits for op 1 (C), which runs after op 0 (P) that waits for it"), std::string::npos)
      << failure(crossed);
  SuperKernelPlan missing = good();
  missing.sides = {SideLaunch{1, 1, {2}, {}}};
  EXPECT_NE(failure(missing).find("names a missing op"), std::string::npos);
  SuperKernelPlan unordered = good();
  unordered.sides = {SideLaunch{1, 1, {}, {1, 0}}};
  EXPECT_NE(failure(unordered).find("not ascending"), std::string::npos);
  SuperKernelPlan unfused = good();
  unfused.fused = false;
  unfused.sides = {SideLaunch{1, 1, {}, {}}};
  EXPECT_NE(failure(unfused).find("an unfused step with side launches"), std::string::npos);
}

}  // namespace
}  // namespace sk
