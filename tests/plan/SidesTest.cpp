// Side launches (src/plan/Segments.cpp, src/plan/Sides.cpp): on a machine
// whose device runs launches of other streams beside a SuperKernel
// (MachineModel::sideLaunches), an op that would run unfused on a stream the
// open SuperKernel does not use runs beside it instead of splitting it, and
// the plan says which SuperKernel ops it waits for and which wait for it
// (data edges only). Without the capability, or when two side streams would
// need ordering between them, or when an op of a side stream joins after a
// cross-stream wait, the scope splits as before.
#include <gtest/gtest.h>

#include <algorithm>

#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

OpList sideList() {
  auto l = loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "side_launches.json");
  EXPECT_TRUE(l.ok()) << (l ? "" : l.error().message());
  return l ? *l : OpList{};
}

// Two pools like an ascend device with `aiCores` AI Cores, with or without side launches.
PlanConfig config(bool sideLaunches, uint32_t aiCores = 8) {
  MachineModel m;
  m.target = "ascend-sim";
  m.pools = {CorePool{CoreType::Cube, aiCores}, CorePool{CoreType::Vector, 2 * aiCores}};
  m.unitNoun = "AI Cores";
  m.staticArguments = true;
  m.sideLaunches = sideLaunches;
  return PlanConfig{m, true};
}

std::vector<std::string> names(const SuperKernelPlan& sk, const std::vector<uint32_t>& ops) {
  std::vector<std::string> n;
  for (uint32_t o : ops) n.push_back(sk.ops.at(o).name);
  return n;
}

Op* findOp(OpList& l, const std::string& name) {
  for (Op& op : l.ops)
    if (op.kind == Op::Kind::Launch && op.name == name) return &op;
  return nullptr;
}

TEST(SidePlan, OpsOfOtherStreamsRunBesideTheSuperKernel) {
  const OpList l = sideList();
  auto plan = planOpList(l, Options{}, config(true));
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_EQ(plan->steps.size(), 3u) << formatPlanReport(*plan);
  const SuperKernelPlan& sk = plan->steps[0];
  ASSERT_TRUE(sk.fused);
  EXPECT_EQ(sk.ops.size(), 5u);
  ASSERT_EQ(sk.sides.size(), 2u);
  // tiling (stream 1) reads proj's output; use_tiling reads tiling's.
  EXPECT_EQ(sk.sides[0].step, 1u);
  EXPECT_EQ(sk.sides[0].stream, 1u);
  EXPECT_EQ(names(sk, sk.sides[0].after), std::vector<std::string>{"proj"});
  EXPECT_EQ(names(sk, sk.sides[0].before), std::vector<std::string>{"use_tiling"});
  // prefetch (stream 2) only reads w, which the SuperKernel only reads: it waits for nothing.
  EXPECT_EQ(sk.sides[1].step, 2u);
  EXPECT_TRUE(sk.sides[1].after.empty());
  EXPECT_EQ(names(sk, sk.sides[1].before), std::vector<std::string>{"use_l2"});
  for (size_t s : {1u, 2u}) {
    EXPECT_FALSE(plan->steps[s].fused);
    EXPECT_EQ(plan->steps[s].besideStep, 0);
    EXPECT_NE(plan->steps[s].endReason.find("runs beside SuperKernel \"layer\""), std::string::npos);
  }
  EXPECT_EQ(plan->report.sideLaunches, 2u);
  // No scope was split; prefetch is a scoped op that leaves its scope (fusible: false), which warns as when
  // it runs alone.
  ASSERT_EQ(plan->report.warnings.size(), 1u);
  EXPECT_NE(plan->report.warnings[0].find("scope \"layer\": ops[5] (prefetch): unfusible op (fusible: false), "
                                          "runs beside SuperKernel \"layer\""),
            std::string::npos)
      << plan->report.warnings[0];
  const std::string report = formatPlanReport(*plan);
  EXPECT_NE(report.find("side launch [1] tiling on stream 1: starts after proj; before use_tiling"), std::string::npos)
      << report;
  EXPECT_NE(report.find("[2] beside [0]: prefetch"), std::string::npos) << report;
  const std::string dot = planToDot(*plan);
  EXPECT_NE(dot.find("s0_o0 -> s1_o0 [label=\"gm notify\""), std::string::npos) << dot;  // proj -> tiling
  EXPECT_NE(dot.find("s1_o0 -> s0_o2 [label=\"gm wait\""), std::string::npos) << dot;    // tiling -> use_tiling
  EXPECT_NE(dot.find("beside step 0: prefetch"), std::string::npos) << dot;

  // The unfused reference has no side launches: every op is its own step, in recorded order.
  PlanConfig ref = config(true);
  ref.fuse = false;
  auto unfused = planOpList(l, Options{}, ref);
  ASSERT_TRUE(unfused.ok());
  for (const SuperKernelPlan& s : unfused->steps) {
    EXPECT_TRUE(s.sides.empty());
    EXPECT_EQ(s.besideStep, -1);
  }
}

TEST(SidePlan, AScopedOpLeavingItsScopeAbortsUnderStrictScopeCheck) {
  auto o = parseOptions("strict-scope-check=abort");
  ASSERT_TRUE(o.ok());
  auto plan = planOpList(sideList(), *o, config(true));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message().find("ops[5] (prefetch): unfusible op (fusible: false), runs beside SuperKernel"),
            std::string::npos)
      << plan.error().message();
}

TEST(SidePlan, AnOpThatWaitsForASideLaunchLeavesItCores) {
  // 4 AI Cores: mix (8 vector blocks) holds all 4 when use_tiling would wait for tiling, which needs one to
  // run on a device: the SuperKernel ends before use_tiling (tiling still runs beside the first part, and
  // the second part runs after it, in step order).
  auto plan = planOpList(sideList(), Options{}, config(true, 4));
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_EQ(plan->steps.size(), 4u) << formatPlanReport(*plan);
  const SuperKernelPlan& first = plan->steps[0];
  EXPECT_EQ(names(first, {0, 1}), (std::vector<std::string>{"proj", "mix"}));
  ASSERT_EQ(first.sides.size(), 2u);
  EXPECT_TRUE(first.sides[0].before.empty());
  EXPECT_NE(first.endReason.find("ops[8] (use_tiling): waits for side launch(es) \"tiling\", which need 1 of the "
                                 "device's 4 AI Cores while SuperKernel \"layer\" holds 4"),
            std::string::npos)
      << first.endReason;
  EXPECT_EQ(plan->steps[3].name, "layer#2");
  EXPECT_TRUE(plan->steps[3].sides.empty());
}

TEST(SidePlan, WithoutTheCapabilityTheScopeSplits) {
  auto plan = planOpList(sideList(), Options{}, config(false));
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_GT(plan->report.superKernels, 1u) << formatPlanReport(*plan);
  for (const SuperKernelPlan& s : plan->steps) {
    EXPECT_TRUE(s.sides.empty());
    EXPECT_EQ(s.besideStep, -1);
  }
}

TEST(SidePlan, SideLaunchesOfTwoStreamsThatConflictSplitTheScope) {
  // prefetch now reads tiling's output: streams 1 and 2 would have to wait for each other outside the
  // SuperKernel, which nothing orders, so the segment ends before prefetch.
  OpList l = sideList();
  Op* prefetch = findOp(l, "prefetch");
  ASSERT_TRUE(prefetch);
  for (auto& [name, value] : prefetch->args)
    if (name == "y") value.value = BufferRef{"tiling"};
  auto plan = planOpList(l, Options{}, config(true));
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_GE(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[0].sides.size(), 1u) << formatPlanReport(*plan);
  EXPECT_EQ(plan->steps[0].ops.size(), 1u) << "layer ends before prefetch";
  EXPECT_EQ(plan->steps[plan->steps[0].sides[0].step].name, "tiling");
}

TEST(SidePlan, AnUnfusedOpOnTheSuperKernelsOwnStreamStillSplits) {
  OpList l = sideList();
  Op* tiling = findOp(l, "tiling");
  ASSERT_TRUE(tiling);
  tiling->stream = 0;  // now it is recorded between proj and mix on the SuperKernel's stream
  auto plan = planOpList(l, Options{}, config(true));
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_GE(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].ops.size(), 1u) << formatPlanReport(*plan);
  EXPECT_TRUE(plan->steps[0].sides.empty());
  EXPECT_EQ(plan->steps[1].name, "tiling");
  EXPECT_EQ(plan->steps[1].besideStep, -1);
}

TEST(SidePlan, AnOpJoiningFromAStreamThatWaitedSplits) {
  // After stream 1 waited for proj (stream-fusion=0), a scoped op of stream 1 joins: the one-queue
  // SuperKernel cannot express that wait, so the segment ends there, as without side launches.
  OpList l = sideList();
  Op* useTiling = findOp(l, "use_tiling");
  ASSERT_TRUE(useTiling);
  useTiling->stream = 1;
  auto plan = planOpList(l, Options{}, config(true));
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  bool saw = false;
  for (const std::string& w : plan->report.warnings) saw = saw || w.find("cross-stream wait on event \"a_ready\"") != std::string::npos;
  EXPECT_TRUE(saw) << formatPlanReport(*plan);
}

TEST(SidePlan, AWaitThroughASideStreamStillOrders) {
  // mix runs on stream 3 and then waits for tiling_ready (stream 1, recorded after stream 1 waited for
  // stream 0's proj): through the side stream, stream 3 now waits for stream 0, which one queue cannot
  // express (stream-fusion=0) — the same split as a direct wait on stream 0.
  OpList l = sideList();
  Op* mix = findOp(l, "mix");
  ASSERT_TRUE(mix);
  mix->stream = 3;
  size_t at = 0;
  while (l.ops[at].kind != Op::Kind::Launch || l.ops[at].name != "mix") ++at;
  Op wait;
  wait.kind = Op::Kind::Wait;
  wait.event = "tiling_ready";
  wait.stream = 3;
  l.ops.insert(l.ops.begin() + static_cast<std::ptrdiff_t>(at) + 1, wait);
  auto plan = planOpList(l, Options{}, config(true));
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_NE(plan->steps[0].endReason.find("cross-stream wait on event \"tiling_ready\" (stream 3 waits for stream 1)"),
            std::string::npos)
      << formatPlanReport(*plan);
}

}  // namespace
}  // namespace sk
