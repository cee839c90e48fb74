// The machine model the planner reads (DESIGN section 9): core pools, the
// pool a core type runs on, the flag budget, and options a target does not
// implement. The cpu target is a single pool; these cases use made-up
// machines the way the cuda and ascend back ends will.
#include <gtest/gtest.h>

#include "superkernel/plan/Plan.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(SK_SOURCE_ROOT) / "tests/plan/data";

OpList load(const std::string& name) {
  auto l = loadOpList(kData / name);
  EXPECT_TRUE(l.ok()) << (l ? "" : l.error().message());
  return l ? *l : OpList{};
}

Expected<FusionPlan> planOn(const OpList& l, const MachineModel& m, const std::string& opts = "") {
  auto o = parseOptions(opts);
  if (!o) return o.error();
  return planOpList(l, *o, PlanConfig{m, true});
}

// chain.json (A -> B -> C, vector kernels, block_dim 4) with B a cube op: its own kernel entry, core_type cube.
OpList chainWithCubeMiddle() {
  OpList l = load("chain.json");
  KernelDecl cube = l.kernels.at(0);
  cube.name = "ew_cube";
  cube.coreType = CoreType::Cube;
  l.kernels.push_back(cube);
  l.ops.at(1).kernel = "ew_cube";
  return l;
}

// The step's cores, and its queues' [firstCore, firstCore + numCores) in order.
void expectLayout(const SuperKernelPlan& sk, uint32_t cores, const std::vector<std::pair<uint32_t, uint32_t>>& queues) {
  EXPECT_EQ(sk.numCores, cores);
  ASSERT_EQ(sk.queues.size(), queues.size());
  for (size_t q = 0; q < queues.size(); ++q) {
    EXPECT_EQ(sk.queues[q].firstCore, queues[q].first) << "queue " << q;
    EXPECT_EQ(sk.queues[q].numCores, queues[q].second) << "queue " << q;
  }
}

// A two-pool machine: 2 cube cores, 4 vector cores (ascend's 1:2).
MachineModel cubeVector() {
  MachineModel m;
  m.target = "twopool";
  m.pools = {CorePool{CoreType::Cube, 2}, CorePool{CoreType::Vector, 4}};
  return m;
}

TEST(MachineModel, PoolsAndTheCoreMapping) {
  MachineModel m = cubeVector();
  EXPECT_EQ(m.totalCores(), 6u);
  EXPECT_EQ(m.poolBase(0), 0u);
  EXPECT_EQ(m.poolBase(1), 2u);
  EXPECT_EQ(*m.poolFor(CoreType::Cube), 0u);
  EXPECT_EQ(*m.poolFor(CoreType::Vector), 1u);
  auto mix = m.poolFor(CoreType::Mix);
  ASSERT_FALSE(mix.ok());
  EXPECT_NE(mix.error().message().find("target twopool has no core pool for core_type mix (its pools: cube, vector)"),
            std::string::npos)
      << mix.error().message();
  // One pool runs every core type.
  EXPECT_EQ(*MachineModel::singlePool("cpu", 8).poolFor(CoreType::Cube), 0u);
  Queue q{0, 2, 4, {}, 1};
  EXPECT_EQ(coreOf(q, 0), 2u);
  EXPECT_EQ(coreOf(q, 5), 3u);
  MachineModel empty;
  empty.pools.clear();
  Status noPools = empty.check();
  ASSERT_FALSE(noPools.ok());
  EXPECT_EQ(noPools.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(noPools.error().message().find("the machine model has no core pool"), std::string::npos)
      << noPools.error().message();
  auto planned = planOn(load("chain.json"), empty);
  ASSERT_FALSE(planned.ok());
  EXPECT_NE(planned.error().message().find("the machine model has no core pool"), std::string::npos)
      << planned.error().message();
}

TEST(MachineModel, QueuesBelongToThePoolOfTheirCoreType) {
  OpList l = chainWithCubeMiddle();
  auto p = planOn(l, cubeVector());
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  const SuperKernelPlan& sk = p->steps[0];
  expectLayout(sk, 6, {{0, 2}, {2, 4}});  // cube: cores [0, 2), vector: [2, 6)
  ASSERT_EQ(sk.queues.size(), 2u);
  EXPECT_EQ(sk.queues[0].pool, 0u);
  EXPECT_EQ(sk.queues[1].pool, 1u);
  EXPECT_EQ(sk.ops[1].queue, 0u);
  EXPECT_EQ(sk.ops[0].queue, 1u);
  // Across pools an edge is never local: the consumer waits for the producer.
  for (const Edge& e : sk.edges) {
    EXPECT_NE(e.sync, SyncKind::Local);
    EXPECT_NE(e.sync, SyncKind::Barrier);
  }
  EXPECT_FALSE(sk.edges.empty());
  // debug-core-num on several pools counts the first pool's cores; the others keep their ratio.
  auto forced = planOn(l, cubeVector(), "debug-core-num=1");
  ASSERT_TRUE(forced.ok()) << forced.error().message();
  expectLayout(forced->steps.at(0), 3, {{0, 1}, {1, 2}});
  auto tooMany = planOn(l, cubeVector(), "debug-core-num=3");
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.error().message().find("debug-core-num=3 exceeds the target's 2 cores of its first pool (cube)"),
            std::string::npos)
      << tooMany.error().message();
}

// MachineModel::oneBlockPerCore (ascend): inside a SuperKernel each block runs on a core of its own. A fused
// step then lays out only the cores its ops' blocks need, in the pools' ratio (the plan's cores are the
// launch's), and an op with more blocks than its pool has is a fusion break with its reason, or, when its kernel
// may be coarsened (block_dim_invariant), runs one block per core.
TEST(MachineModel, OneBlockPerCoreLaysOutTheLaunchAndBreaksForWiderOps) {
  MachineModel m;
  m.target = "twopool";
  m.pools = {CorePool{CoreType::Cube, 4}, CorePool{CoreType::Vector, 8}};
  m.oneBlockPerCore = true;
  OpList l = chainWithCubeMiddle();
  l.ops.at(0).blockDim = 3;  // vector
  l.ops.at(1).blockDim = 1;  // cube
  l.ops.at(2).blockDim = 3;  // vector
  auto p = planOn(l, m);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  // Cube needs 1, vector 3: two AI Cores' worth (2 cube + 4 vector), not the machine's 12.
  expectLayout(p->steps[0], 6, {{0, 2}, {2, 4}});
  // One pool: as many cores as the widest op, laid out from core 0.
  OpList vec = load("chain.json");
  vec.ops.at(1).blockDim = 5;
  p = planOn(vec, m);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  expectLayout(p->steps[0], 5, {{0, 5}});
  // Without the rule the same list runs on the whole machine.
  MachineModel whole = m;
  whole.oneBlockPerCore = false;
  auto w = planOn(vec, whole);
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->steps.at(0).numCores, 12u);

  // 9 blocks on 8 vector cores: B runs alone, a fusion break that says why (strict-scope-check=bypass: a
  // warning; abort: an error naming the op).
  vec.ops.at(1).blockDim = 9;
  p = planOn(vec, m);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 3u);
  EXPECT_FALSE(p->steps[1].fused);
  EXPECT_EQ(p->steps[1].ops.at(0).blockDim, 9u) << "alone, all its blocks (the device runs them in waves)";
  const std::string why = "9 blocks, more than the 8 vector cores of a SuperKernel";
  EXPECT_NE(p->steps[0].endReason.find("ops[1] (B): " + why), std::string::npos) << p->steps[0].endReason;
  ASSERT_FALSE(p->report.warnings.empty());
  EXPECT_NE(p->report.warnings[0].find(why), std::string::npos) << p->report.warnings[0];
  auto strict = planOn(vec, m, "strict-scope-check=abort");
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.error().message().find(why), std::string::npos) << strict.error().message();
  // debug-core-num shrinks the pools the rule reads: 2 AI Cores have 4 vector cores.
  vec.ops.at(1).blockDim = 5;
  p = planOn(vec, m, "debug-core-num=2");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->steps.size(), 3u);
  // A kernel whose outputs do not depend on block_dim is coarsened to the cores instead: still one step.
  vec.kernels.at(0).blockDimInvariant = true;
  vec.ops.at(1).blockDim = 9;
  p = planOn(vec, m);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->steps[0].numCores, 8u);
  EXPECT_EQ(p->steps[0].ops.at(1).blockDim, 8u);

  // stream-fusion=1: a block's core is its block index in the pool, so a pool's streams cannot have cores of
  // their own: one queue per pool still, the streams' ops in recorded order on the widest op's cores.
  OpList two = load("chain.json");
  two.ops.resize(2);
  two.ops.at(0).blockDim = 3;  // a -> b on stream 0
  two.ops.at(1).blockDim = 2;  // c -> d on stream 1, independent of it
  two.ops.at(1).stream = 1;
  two.ops.at(1).args.at(0).second.value = BufferRef{"c"};
  two.ops.at(1).args.at(1).second.value = BufferRef{"d"};
  p = planOn(two, m, "stream-fusion=1");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  const SuperKernelPlan& sf = p->steps[0];
  expectLayout(sf, 3, {{0, 3}});
  EXPECT_EQ(sf.queues.at(0).ops, (std::vector<uint32_t>{0, 1}));
  for (const PlannedOp& op : sf.ops) EXPECT_GE(sf.queues.at(op.queue).numCores, op.blockDim) << op.name;
  // Two streams on a one-core pool still fuse (without the rule each stream needs a core of its own).
  m.pools = {CorePool{CoreType::Cube, 1}, CorePool{CoreType::Vector, 1}};
  two.ops.at(0).blockDim = 1;
  two.ops.at(1).blockDim = 1;
  p = planOn(two, m, "stream-fusion=1");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  expectLayout(p->steps[0], 1, {{0, 1}});
}

TEST(MachineModel, FlagEdgesPastTheBudgetUseCounters) {
  OpList l = load("mixed.json");
  auto free = planOn(l, MachineModel::singlePool("cpu", 4));
  ASSERT_TRUE(free.ok()) << free.error().message();
  size_t flags = 0;
  for (const auto& sk : free->steps)
    for (const Edge& e : sk.edges) flags += e.sync == SyncKind::Flag;
  ASSERT_GT(flags, 0u) << "mixed.json is expected to plan a flag edge";
  MachineModel tight = MachineModel::singlePool("tight", 4);
  tight.maxFlagSlots = 1;
  auto p = planOn(l, tight);
  ASSERT_TRUE(p.ok()) << p.error().message();
  for (const auto& sk : p->steps)
    for (const Edge& e : sk.edges) EXPECT_NE(e.sync, SyncKind::Flag);
  bool warned = false;
  for (const auto& w : p->report.warnings) warned |= w.find("use counters instead: target tight has 1 flag slots") != std::string::npos;
  EXPECT_TRUE(warned);
}

// A -> B -> C: A (4 blocks) and B (2 blocks) each feed a consumer with another block count, so on a
// 4-core pool both edges are Flag edges: 4 + 2 = 6 flag slots unbounded.
OpList twoFlagProducers() {
  auto l = parseOpList(R"({"format": "superkernel.oplist", "version": 1,
    "kernels": {"ew": {"source": "kernels/k.cpp", "entry": "ew", "params": [
      {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
      {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}]}},
    "buffers": {"a": {"dtype": "f32", "shape": [1024]}, "b": {"dtype": "f32", "shape": [1024]},
                "c": {"dtype": "f32", "shape": [1024]}, "d": {"dtype": "f32", "shape": [1024]}},
    "ops": [
      {"name": "A", "kernel": "ew", "block_dim": 4, "scope": "s", "args": {"x": "a", "y": "b"}},
      {"name": "B", "kernel": "ew", "block_dim": 2, "scope": "s", "args": {"x": "b", "y": "c"}},
      {"name": "C", "kernel": "ew", "block_dim": 4, "scope": "s", "args": {"x": "c", "y": "d"}}]})",
                       "two_flags.json", kData);
  EXPECT_TRUE(l.ok()) << (l ? "" : l.error().message());
  return l ? *l : OpList{};
}

// The sync kind of the edge producer -> consumer (by op name) in the one SuperKernel, None if there is none.
SyncKind syncOf(const FusionPlan& p, const std::string& producer, const std::string& consumer) {
  for (const auto& sk : p.steps)
    for (const Edge& e : sk.edges)
      if (sk.ops[e.producer].name == producer && sk.ops[e.consumer].name == consumer) return e.sync;
  return SyncKind::None;
}

size_t budgetWarnings(const FusionPlan& p) {
  size_t n = 0;
  for (const auto& w : p.report.warnings) n += w.find("use counters instead") != std::string::npos;
  return n;
}

// The budget is inclusive and first-fit in op order: a budget of exactly the slots needed demotes nothing (a
// `<` for `<=` would demote B), a budget too small for both keeps A's flags and demotes only B's edge, and a
// budget too small for A still keeps B's (a later producer that fits is not demoted with the one that did not).
TEST(MachineModel, FlagBudgetIsInclusiveAndFirstFitInOpOrder) {
  OpList l = twoFlagProducers();
  MachineModel m = MachineModel::singlePool("tight", 4);
  auto free = planOn(l, m);
  ASSERT_TRUE(free.ok()) << free.error().message();
  ASSERT_EQ(syncOf(*free, "A", "B"), SyncKind::Flag);
  ASSERT_EQ(syncOf(*free, "B", "C"), SyncKind::Flag);
  EXPECT_EQ(budgetWarnings(*free), 0u);

  m.maxFlagSlots = 6;  // exactly A's 4 + B's 2
  auto exact = planOn(l, m);
  ASSERT_TRUE(exact.ok()) << exact.error().message();
  EXPECT_EQ(syncOf(*exact, "A", "B"), SyncKind::Flag);
  EXPECT_EQ(syncOf(*exact, "B", "C"), SyncKind::Flag);
  EXPECT_EQ(budgetWarnings(*exact), 0u) << formatPlanReport(*exact);

  m.maxFlagSlots = 5;  // A fits, B does not
  auto five = planOn(l, m);
  ASSERT_TRUE(five.ok()) << five.error().message();
  EXPECT_EQ(syncOf(*five, "A", "B"), SyncKind::Flag);
  EXPECT_EQ(syncOf(*five, "B", "C"), SyncKind::Counter);
  ASSERT_EQ(budgetWarnings(*five), 1u) << formatPlanReport(*five);
  bool named = false;
  for (const auto& w : five->report.warnings)
    named |= w.find(": 1 flag edge(s) use counters instead: target tight has 5 flag slots") != std::string::npos;
  EXPECT_TRUE(named) << formatPlanReport(*five);

  m.maxFlagSlots = 3;  // A does not fit, B still does
  auto three = planOn(l, m);
  ASSERT_TRUE(three.ok()) << three.error().message();
  EXPECT_EQ(syncOf(*three, "A", "B"), SyncKind::Counter);
  EXPECT_EQ(syncOf(*three, "B", "C"), SyncKind::Flag);
  EXPECT_EQ(budgetWarnings(*three), 1u) << formatPlanReport(*three);
}

TEST(MachineModel, InapplicableOptionsAreReportedNotIgnored) {
  OpList l = load("chain.json");
  MachineModel m = MachineModel::singlePool("cpu", 4);
  m.inapplicable = {{"split-mode", "one code copy per sub-kernel"}, {"feed-sync-all", "no idle-core syncs"}};
  auto quiet = planOn(l, m, "split-mode=1");  // the target's default: nothing to say
  ASSERT_TRUE(quiet.ok());
  EXPECT_TRUE(quiet->report.warnings.empty());
  auto p = planOn(l, m, "split-mode=4:feed-sync-all=1");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->report.warnings.size(), 2u);
  EXPECT_EQ(p->report.warnings[0], "option split-mode=4 does not apply to target cpu (one code copy per sub-kernel); ignored");
  EXPECT_EQ(p->report.warnings[1], "option feed-sync-all=1 does not apply to target cpu (no idle-core syncs); ignored");
  EXPECT_NE(formatPlanReport(*p).find("warning: option split-mode=4 does not apply to target cpu"), std::string::npos);
}

}  // namespace
}  // namespace sk
