// codegen/SyncLayout: the pool-wide sync points (poolSyncPoints), by hand and from a plan (layoutPoolSync).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "superkernel/codegen/SyncLayout.h"
#include "codegen/TestPlans.h"

namespace {

using sk::PoolSyncEdge;
using sk::PoolSyncOp;
using sk::PoolSyncPoint;

std::vector<uint32_t> poolsOf(const std::vector<PoolSyncPoint>& points) {
  std::vector<uint32_t> out;
  for (const PoolSyncPoint& p : points) out.push_back(p.pools);
  return out;
}

TEST(PoolSyncPoints, LocalEdgesNeedNoPointAndCrossCoreOnesNeedTheProducersPools) {
  // a (pool 0) -> b (pool 1) -> c (pool 1, local) -> d (pool 0)
  const std::vector<PoolSyncOp> ops{{"a", 0, false}, {"b", 1, false}, {"c", 1, false}, {"d", 0, false}};
  const std::vector<PoolSyncEdge> edges{{0, 1, false, "b <- a"}, {1, 2, true, "c <- b"}, {2, 3, false, "d <- c"}};
  auto points = sk::poolSyncPoints(ops, edges, false);
  ASSERT_TRUE(points.ok()) << points.error().message();
  EXPECT_EQ(poolsOf(*points), (std::vector<uint32_t>{0, 1u << 0, 0, 1u << 1}));
  EXPECT_EQ((*points)[1].why, (std::vector<std::string>{"b <- a"}));
  EXPECT_EQ((*points)[3].why, (std::vector<std::string>{"d <- c"}));
}

TEST(PoolSyncPoints, OnePointCoversLaterEdgesFromWhatItSignalled) {
  // a, b (pool 0) -> c (pool 1) needs one point; d (pool 1) reading a again needs none (pool 1 knows a
  // completed), e (pool 0) reading c needs one, and its cores then know c: f (pool 0) reading c needs none.
  const std::vector<PoolSyncOp> ops{{"a", 0, false}, {"b", 0, false}, {"c", 1, false},
                                    {"d", 1, false}, {"e", 0, false}, {"f", 0, false}};
  const std::vector<PoolSyncEdge> edges{{0, 2, false, "c <- a"}, {1, 2, false, "c <- b"}, {0, 3, false, "d <- a"},
                                        {2, 4, false, "e <- c"}, {2, 5, false, "f <- c"}};
  auto points = sk::poolSyncPoints(ops, edges, false);
  ASSERT_TRUE(points.ok()) << points.error().message();
  EXPECT_EQ(poolsOf(*points), (std::vector<uint32_t>{0, 0, 1u << 0, 0, 1u << 1, 0}));
  EXPECT_EQ((*points)[2].why, (std::vector<std::string>{"c <- a", "c <- b"}));
}

TEST(PoolSyncPoints, AnOpThatStartsEarlyItselfGetsAPointBeforeAndAfter) {
  // b signals and waits itself: a point before it (even without an edge) and one before c that completes its
  // signal on the pool's other cores.
  const std::vector<PoolSyncOp> ops{{"a", 1, false}, {"b", 0, true}, {"c", 1, false}};
  auto points = sk::poolSyncPoints(ops, {}, false);
  ASSERT_TRUE(points.ok()) << points.error().message();
  EXPECT_EQ(poolsOf(*points), (std::vector<uint32_t>{0, 1u << 1, 1u << 0}));
  EXPECT_EQ((*points)[1].why, (std::vector<std::string>{"b waits for early start itself"}));
  EXPECT_EQ((*points)[2].why, (std::vector<std::string>{"b signals early start itself"}));
  // The first op waiting itself waits at a point of its own pool.
  auto first = sk::poolSyncPoints({{"a", 1, true}}, {}, false);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(poolsOf(*first), (std::vector<uint32_t>{1u << 1}));
}

TEST(PoolSyncPoints, ABarrierAfterEveryOpLeavesNothingToSync) {
  const std::vector<PoolSyncOp> ops{{"a", 0, false}, {"b", 1, false}, {"c", 0, false}};
  const std::vector<PoolSyncEdge> edges{{0, 1, false, "b <- a"}, {1, 2, false, "c <- b"}};
  auto points = sk::poolSyncPoints(ops, edges, true);
  ASSERT_TRUE(points.ok());
  EXPECT_EQ(poolsOf(*points), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(PoolSyncPoints, BadIndicesAreInternalErrors) {
  const std::vector<PoolSyncOp> ops{{"a", 0, false}, {"b", 0, false}};
  for (const PoolSyncEdge& e : {PoolSyncEdge{0, 2, false, "out of range"}, PoolSyncEdge{1, 0, false, "backwards"},
                                PoolSyncEdge{1, 1, false, "to itself"}}) {
    auto points = sk::poolSyncPoints(ops, {e}, false);
    ASSERT_FALSE(points.ok()) << e.what;
    EXPECT_EQ(points.error().kind(), sk::ErrorKind::Internal);
  }
  auto pool = sk::poolSyncPoints({{"a", 32, false}}, {}, false);
  ASSERT_FALSE(pool.ok());
  EXPECT_NE(pool.error().message().find("op a: pool 32"), std::string::npos) << pool.error().message();
}

TEST(LayoutPoolSync, PoolPointsFollowThePlannersLocalVerdictsAndQueuePools) {
  // twoStreamsPlan with its second queue in a second pool: s0_first (pool 0) -> s1_join (pool 1, event),
  // s1_first -> s1_join (local), s1_join -> s0_last (pool 1 -> 0, flag).
  sk::FusionPlan plan = sk::testplans::twoStreamsPlan();
  plan.steps[0].queues[1].pool = 1;
  auto layout = sk::layoutPoolSync(plan, plan.steps[0]);
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  EXPECT_EQ(poolsOf((*layout)), (std::vector<uint32_t>{0, 0, 1u << 0, 1u << 1}));
  EXPECT_EQ((*layout)[2].why, (std::vector<std::string>{"s1_join <- s0_first (RAW on t1)"}));
  EXPECT_EQ((*layout)[3].why, (std::vector<std::string>{"s0_last <- s1_join (RAW on out)"}));

  // One pool: every non-local edge and the early-starting gather_c place points; the second edge of a pair
  // is one more reason, not a second point.
  sk::FusionPlan kinds = sk::testplans::syncKindsPlan();
  auto one = sk::layoutPoolSync(kinds, kinds.steps[0]);
  ASSERT_TRUE(one.ok()) << one.error().message();
  EXPECT_EQ(poolsOf((*one)), (std::vector<uint32_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ((*one)[1].why,
            (std::vector<std::string>{"scale_b <- add_a (RAW on t1)", "scale_b <- add_a (WAR on t1)"}));
  EXPECT_EQ((*one)[3].why,
            (std::vector<std::string>{"norm_d <- gather_c (RAW on t3)", "gather_c signals early start itself"}));
}

}  // namespace
