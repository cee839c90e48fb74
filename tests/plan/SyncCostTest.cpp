// The sync cost model (src/plan/SyncCost.cpp) on hand-built plans: each choice it makes must win under the
// costs given, each choice it refuses must be refused for its reason, and sync-model=off (or a target
// without costs) leaves the correctness rules' plan exactly as it was.
#include <gtest/gtest.h>

#include "superkernel/frontend/Graph.h"
#include "superkernel/plan/Plan.h"

namespace sk {
namespace sync_cost_test {

const std::filesystem::path kData = std::filesystem::path(SK_SOURCE_ROOT) / "tests/plan/data";

MachineModel machine(double barrier, double counter, double flag, uint32_t cores = 4) {
  MachineModel m = MachineModel::singlePool("cpu", cores, "executor", "workers");
  m.syncCosts = {barrier, counter, flag, "test"};
  return m;
}

// "A->B counter" per edge, with "<-flag" when the model changed it from flag.
std::vector<std::string> edges(const SuperKernelPlan& sk) {
  std::vector<std::string> out;
  for (const auto& e : sk.edges)
    out.push_back(sk.ops[e.producer].name + "->" + sk.ops[e.consumer].name + " " + syncKindName(e.sync) +
                  (e.modelFrom == SyncKind::None ? "" : std::string("<-") + syncKindName(e.modelFrom)));
  return out;
}

std::vector<std::string> barriersBefore(const SuperKernelPlan& sk) {
  std::vector<std::string> out;
  for (const auto& op : sk.ops)
    if (op.barrierBefore) out.push_back(op.name);
  return out;
}

using V = std::vector<std::string>;

struct SyncCost : ::testing::Test {
  void SetUp() override {
    g.setBaseDir(kData);
    auto decl = [&](const char* name, Partition in, bool early) {
      KernelDecl k;
      k.name = name;
      k.source = "kernels/k.cpp";
      k.entry = "ew";
      k.earlyStart = early;
      k.params = {{"x", ParamKind::Buffer, DType::F32, Access::Read, in},
                  {"y", ParamKind::Buffer, DType::F32, Access::Write, Partition::Block}};
      ASSERT_TRUE(g.addKernel(k).ok());
    };
    decl("ew", Partition::Block, false);       // block b reads slice b: same block dims are local
    decl("ew_all", Partition::All, false);     // every block reads all of x: an all-to-all (counter) edge
    decl("ew_all_early", Partition::All, true);
    for (const char* b : {"a", "b", "c", "d", "e", "f"}) ASSERT_TRUE(g.addBuffer(b, DType::F32, {256}).ok());
  }
  void op(const std::string& name, const std::string& kernel, const std::string& x, const std::string& y,
          uint32_t bd = 4) {
    ASSERT_TRUE(g.launch({name, kernel, bd, 0, {{"x", arg(x)}, {"y", arg(y)}}, {}, true}).ok());
  }
  FusionPlan plan(const MachineModel& m, const std::string& opts = "") {
    auto o = parseOptions(opts);
    EXPECT_TRUE(o.ok());
    auto p = planOpList(g.opList(), *o, PlanConfig{m, true});
    EXPECT_TRUE(p.ok()) << (p ? "" : p.error().message());
    return p ? *p : FusionPlan{};
  }
  Graph g;
};

// An all-to-all edge with one counter per producer costs more than the barrier that waits for the same
// blocks: both boundaries of the chain become barriers.
TEST_F(SyncCost, AllToAllChainTakesTheCheaperBarrier) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b");
    op("B", "ew_all", "b", "c");
    op("C", "ew_all", "c", "d");
  }
  FusionPlan p = plan(machine(300, 400, 380));
  const SuperKernelPlan& sk = p.steps.at(0);
  EXPECT_EQ(edges(sk), (V{"A->B barrier<-counter", "B->C barrier<-counter"}));
  EXPECT_EQ(barriersBefore(sk), (V{"B", "C"}));
  const SyncModelReport& r = p.report.syncModel;
  EXPECT_TRUE(r.on);
  EXPECT_EQ(r.boundaries, 2u);
  EXPECT_EQ(r.toBarrier, 2u);
  EXPECT_EQ(r.keptCheaper + r.keptIndependent + r.keptEarlyStart + r.dropped, 0u);
  EXPECT_EQ(p.report.syncs.edges.at(SyncKind::Barrier), 2u);
  EXPECT_EQ(p.report.syncs.barriers, 2u);
  const std::string text = formatPlanReport(p);
  EXPECT_NE(text.find("sync model: 2 boundaries made barriers (2 flag/counter edges replaced"), std::string::npos)
      << text;
  EXPECT_NE(text.find("A -> B: barrier RAW on b (sync model: counter -> barrier, cheaper)"), std::string::npos) << text;
  EXPECT_NE(text.find("costs barrier 300 ns, counter 400 ns, flag 380 ns (test)"), std::string::npos) << text;
}

// The same chain where a counter wait is the cheaper one keeps its counters.
TEST_F(SyncCost, CheaperCountersAreKept) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b");
    op("B", "ew_all", "b", "c");
  }
  FusionPlan p = plan(machine(500, 400, 380));
  EXPECT_EQ(edges(p.steps.at(0)), V{"A->B counter"});
  EXPECT_TRUE(barriersBefore(p.steps[0]).empty());
  EXPECT_EQ(p.report.syncModel.keptCheaper, 1u);
  EXPECT_EQ(p.report.syncModel.boundaries, 0u);
}

// Fan-in: B (2 blocks) reads A (4 blocks); B's block 0 (core 0) needs A blocks 0-1 (one on another core),
// block 1 (core 1) needs A blocks 2-3 (both on other cores). The busiest core waits on 2 flags: 2 x 200 ns
// beats a 450 ns barrier and loses to a 350 ns one.
TEST_F(SyncCost, FlagFanInIsCountedPerCoreAgainstTheBarrier) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b");
    op("B", "ew", "b", "c", 2);
  }
  FusionPlan keep = plan(machine(450, 400, 200));
  EXPECT_EQ(edges(keep.steps.at(0)), V{"A->B flag"});
  EXPECT_EQ(keep.steps[0].edges[0].flagRanges.size(), 2u);
  EXPECT_EQ(keep.report.syncModel.keptCheaper, 1u);
  FusionPlan bar = plan(machine(350, 400, 200));
  EXPECT_EQ(edges(bar.steps.at(0)), V{"A->B barrier<-flag"});
  EXPECT_TRUE(bar.steps[0].edges[0].flagRanges.empty());
  EXPECT_EQ(barriersBefore(bar.steps[0]), V{"B"});
  // A flag whose producer block runs on the consumer's own core costs a load, not a wait: B at 4 blocks
  // reading A at 4 blocks is local and never considered.
}

// A barrier before C would also wait for B, which C does not depend on: C keeps its counter however cheap
// the barrier is.
TEST_F(SyncCost, ABarrierThatWouldWaitForIndependentWorkIsNotTaken) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b");
    op("B", "ew", "c", "d");      // independent of A and C
    op("C", "ew_all", "b", "e");  // needs all of A
  }
  FusionPlan p = plan(machine(1, 400, 380));
  EXPECT_EQ(edges(p.steps.at(0)), V{"A->C counter"});
  EXPECT_TRUE(barriersBefore(p.steps[0]).empty());
  EXPECT_EQ(p.report.syncModel.keptIndependent, 1u);
}

// An early-start consumer overlaps its waits with its kernel's prologue: its edges stay.
TEST_F(SyncCost, EarlyStartConsumersKeepTheirEdges) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b");
    op("B", "ew_all_early", "b", "c");
  }
  FusionPlan p = plan(machine(1, 400, 380));
  ASSERT_TRUE(p.steps.at(0).ops[1].earlyStart);
  EXPECT_EQ(edges(p.steps[0]), V{"A->B counter"});
  EXPECT_EQ(p.report.syncModel.keptEarlyStart, 1u);
  // early-start=2 waits before the call: then the barrier is taken.
  FusionPlan two = plan(machine(1, 400, 380), "early-start=2");
  EXPECT_EQ(edges(two.steps.at(0)), V{"A->B barrier<-counter"});
}

// D's flag edge from A crosses the barrier before B: that barrier already ordered all of A before D's
// blocks, so the edge is dropped (and D, with no wait left, gets no barrier of its own).
TEST_F(SyncCost, EdgesAcrossAnEarlierBarrierAreDropped) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b");
    op("B", "ew_all", "b", "c");  // barrier (tight: only A before it)
    op("C", "ew", "d", "e");      // independent
    op("D", "ew", "b", "f", 2);   // flag on A, across B's barrier
  }
  FusionPlan reference = plan(machine(300, 400, 380), "sync-model=off");
  EXPECT_EQ(edges(reference.steps.at(0)), (V{"A->B counter", "A->D flag"}));
  FusionPlan p = plan(machine(300, 400, 380));
  EXPECT_EQ(edges(p.steps.at(0)), V{"A->B barrier<-counter"});
  EXPECT_EQ(barriersBefore(p.steps[0]), V{"B"});
  EXPECT_EQ(p.report.syncModel.dropped, 1u);
  EXPECT_EQ(p.report.syncs.edges.count(SyncKind::Flag), 0u);
}

// sync-model=off, early-start=0, debug-sync-all=1 and a machine without costs all give the correctness
// rules' plan: every edge, kind, range and barrier as without the model.
TEST_F(SyncCost, OffAndUnknownCostsReproduceTheRulesChoices) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b");
    op("B", "ew_all", "b", "c");
    op("C", "ew", "c", "d", 2);
    op("D", "ew_all", "d", "e");
  }
  const MachineModel none = MachineModel::singlePool("cpu", 4, "executor", "workers");
  for (const char* opts : {"", "early-start=0", "debug-sync-all=1", "early-start=2"}) {
    SCOPED_TRACE(opts);
    FusionPlan rules = plan(none, opts);
    FusionPlan off = plan(machine(1, 400, 380), std::string(opts) + (*opts ? ":" : "") + "sync-model=off");
    ASSERT_EQ(rules.steps.size(), off.steps.size());
    for (size_t i = 0; i < rules.steps.size(); ++i) {
      EXPECT_EQ(edges(rules.steps[i]), edges(off.steps[i]));
      EXPECT_EQ(barriersBefore(rules.steps[i]), barriersBefore(off.steps[i]));
      for (size_t e = 0; e < rules.steps[i].edges.size(); ++e)
        EXPECT_EQ(rules.steps[i].edges[e].flagRanges, off.steps[i].edges[e].flagRanges);
    }
    EXPECT_FALSE(off.report.syncModel.on);
    EXPECT_FALSE(rules.report.syncModel.on);
    EXPECT_EQ(formatPlanReport(rules).find("sync model:"), std::string::npos);
  }
  // And with the model on, the same list changes (so the comparison above could fail).
  FusionPlan on = plan(machine(1, 400, 380));
  EXPECT_GT(on.report.syncModel.boundaries, 0u);
}

// A counter's cost grows with the cores on its line (its producer's arrivals, its consumer's waiters), a
// barrier's is always the whole queue's. With the costs measured on a 16-core Xeon (barrier 2105, counter
// 2258, flag 448 ns: both all-to-all), a 16-block producer feeding a 4-block consumer keeps its counter
// (2258 * (16 + 4) / 32 = 1411 ns < 2105), while the same edge into a 16-block consumer, an all-to-all of
// the whole queue, is what the barrier was measured against and takes it.
TEST_F(SyncCost, ACounterCostsItsShareOfTheQueue) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b", 16);
    op("B", "ew_all", "b", "c", 4);
    op("C", "ew_all", "c", "d", 16);
  }
  FusionPlan p = plan(machine(2105, 2258, 448, 16));
  EXPECT_EQ(edges(p.steps.at(0)), (V{"A->B counter", "B->C counter"}));
  EXPECT_EQ(p.report.syncModel.keptCheaper, 2u);
  EXPECT_TRUE(barriersBefore(p.steps[0]).empty());
}

TEST_F(SyncCost, AWholeQueueCounterStillTakesTheBarrier) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b", 16);
    op("B", "ew_all", "b", "c", 16);
  }
  FusionPlan p = plan(machine(2105, 2258, 448, 16));
  EXPECT_EQ(edges(p.steps.at(0)), V{"A->B barrier<-counter"});
  EXPECT_EQ(barriersBefore(p.steps[0]), V{"B"});
}

// On 2 cores every counter has both cores on its line: the share is 1 (no side counts below 2 cores), so
// the fan-in-16 shape (16 blocks -> 1 block -> 16 blocks) makes the barriers it made before, where the
// 2-core VM measured them a win (docs/PERFORMANCE.md section 13).
TEST_F(SyncCost, TwoCoresPayTheWholeCounter) {
  {
    Scope s(g, "s");
    op("A", "ew", "a", "b", 16);
    op("B", "ew_all", "b", "c", 1);
    op("C", "ew_all", "c", "d", 16);
  }
  FusionPlan p = plan(machine(340, 400, 380, 2));
  EXPECT_EQ(edges(p.steps.at(0)), (V{"A->B barrier<-counter", "B->C barrier<-counter"}));
  EXPECT_EQ(p.report.syncModel.boundaries, 2u);
}

// The decode stacks the benchmarks run (examples/decode_stack, 61 layers, 1,525 ops; bench/gen_sweep.py
// copies them) and their edge counts. On 16 cores, with the costs measured there, the model keeps every
// flag and counter edge of the rules (with barriers in their place the fused step measured 0.81-0.84x the
// rules' own syncs), and at 8 cores it keeps most. On 2 cores, with the 2-core costs, it still makes the
// 609 barriers (670 edges) it made when the model was measured on decode_small there.
TEST(SyncCostDecode, StacksKeepTheirEdgesOnManyCoresAndTheirBarriersOnTwo) {
  const std::filesystem::path dir = std::filesystem::path(SK_SOURCE_ROOT) / "examples/decode_stack";
  auto counts = [](const FusionPlan& p) {
    const auto& e = p.report.syncs.edges;
    auto n = [&](SyncKind k) { return e.count(k) ? e.at(k) : size_t{0}; };
    return std::vector<size_t>{n(SyncKind::Local), n(SyncKind::Flag), n(SyncKind::Counter), n(SyncKind::Barrier),
                               static_cast<size_t>(p.report.syncs.barriers)};
  };
  auto planAt = [&](const OpList& l, const std::string& opts, MachineModel m) {
    auto o = parseOptions(opts);
    EXPECT_TRUE(o.ok());
    auto p = planOpList(l, *o, PlanConfig{std::move(m), true});
    EXPECT_TRUE(p.ok()) << (p ? "" : p.error().message());
    return p ? *p : FusionPlan{};
  };
  for (const char* name : {"decode_stack.json", "decode_stack_shared_weights.json"}) {
    SCOPED_TRACE(name);
    auto l = loadOpList(dir / name);
    ASSERT_TRUE(l.ok()) << l.error().message();
    // 16 cores, the boundary benchmark's costs there: exactly the rules' plan (local, flag, counter, barrier
    // edges; barriers).
    const MachineModel w16 = machine(2105, 2258, 448, 16);
    const FusionPlan off16 = planAt(*l, "early-start=1:sync-model=off", w16);
    EXPECT_EQ(counts(off16), (std::vector<size_t>{122, 427, 1280, 0, 0}));
    const FusionPlan on16 = planAt(*l, "early-start=1", w16);
    EXPECT_EQ(counts(on16), counts(off16));
    EXPECT_TRUE(on16.report.syncModel.on);
    EXPECT_EQ(on16.report.syncModel.boundaries, 0u);
    // 8 cores, the costs measured there: 244 of the 609 barriers the model made before.
    const FusionPlan on8 = planAt(*l, "early-start=1", machine(1000, 1139, 449, 8));
    EXPECT_EQ(counts(on8), (std::vector<size_t>{488, 0, 914, 305, 244}));
    // 2 cores, the 2-core costs: as before the counter share.
    const FusionPlan on2 = planAt(*l, "early-start=1", machine(340, 400, 380, 2));
    EXPECT_EQ(counts(on2), (std::vector<size_t>{488, 0, 366, 670, 609}));
    EXPECT_EQ(on2.report.syncModel.boundaries, 609u);
  }
}

}  // namespace sync_cost_test
}  // namespace sk
