// Planner: exact segments, edges and sync kinds for hand-written op lists
// (tests/plan/data) and Graph recordings.
#include <gtest/gtest.h>

#include "superkernel/frontend/Graph.h"
#include "superkernel/plan/Plan.h"

namespace sk {
namespace planner_test {
namespace fs = std::filesystem;

const fs::path kData = fs::path(SK_SOURCE_ROOT) / "tests/plan/data";

OpList load(const std::string& name) {
  auto l = loadOpList(kData / name);
  EXPECT_TRUE(l.ok()) << (l ? "" : l.error().message());
  return l ? *l : OpList{};
}

Expected<FusionPlan> planWith(const OpList& l, const std::string& opts, uint32_t workers = 4, bool fuse = true) {
  auto o = parseOptions(opts);
  if (!o) return o.error();
  return planOpList(l, *o, PlanConfig{MachineModel::singlePool("cpu", workers, "executor", "workers"), fuse});
}

FusionPlan plan(const OpList& l, const std::string& opts = "", uint32_t workers = 4) {
  auto p = planWith(l, opts, workers);
  EXPECT_TRUE(p.ok()) << (p ? "" : p.error().message());
  return p ? *p : FusionPlan{};
}

// "A->B local RAW b" per edge, in plan order.
std::vector<std::string> edges(const SuperKernelPlan& sk) {
  std::vector<std::string> out;
  for (const auto& e : sk.edges)
    out.push_back(sk.ops[e.producer].name + "->" + sk.ops[e.consumer].name + " " + syncKindName(e.sync) + " " +
                  depKindName(e.dep) + (e.buffer.empty() ? "" : " " + e.buffer));
  return out;
}

// "name[op,op]" per step, "*" marking unfused steps.
std::vector<std::string> steps(const FusionPlan& p) {
  std::vector<std::string> out;
  for (const auto& sk : p.steps) {
    std::string s = (sk.fused ? "" : "*") + sk.name + "[";
    for (size_t i = 0; i < sk.ops.size(); ++i) s += (i ? "," : "") + sk.ops[i].name;
    out.push_back(s + "]");
  }
  return out;
}

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;
using V = std::vector<std::string>;

TEST(Planner, ChainEqualBlockDimsAllLocal) {
  FusionPlan p = plan(load("chain.json"));
  EXPECT_EQ(steps(p), V{"s[A,B,C]"});
  const auto& sk = p.steps[0];
  EXPECT_EQ(edges(sk), (V{"A->B local RAW b", "B->C local RAW c"}));
  EXPECT_EQ(sk.numCores, 4u);
  ASSERT_EQ(sk.queues.size(), 1u);
  EXPECT_EQ(sk.queues[0].ops, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(p.report.opsBefore, 3u);
  EXPECT_EQ(p.report.launchesAfter, 1u);
  EXPECT_EQ(p.report.superKernels, 1u);
  EXPECT_EQ(p.report.syncs.edges.at(SyncKind::Local), 2u);
  EXPECT_EQ(p.report.syncs.barriers, 0u);
  EXPECT_EQ(p.variants.size(), 1u);  // one kernel, one variant
  EXPECT_EQ(p.variants[0].symbol.rfind("ew__v", 0), 0u);
  EXPECT_EQ(p.variants[0].symbol.size(), 5u + 12u);
  for (const auto& op : sk.ops) EXPECT_EQ(op.preloadVariant, -1);  // same variant throughout
}

TEST(Planner, MixedBlockDimsFlag) {
  FusionPlan p = plan(load("mixed.json"));
  const auto& sk = p.steps.at(0);
  EXPECT_EQ(edges(sk), V{"A->B flag RAW b"});
  EXPECT_EQ(sk.edges[0].flagRanges, (Ranges{{0, 1}, {2, 3}}));
}

TEST(Planner, ReadAllConsumerCounter) {
  FusionPlan p = plan(load("readall.json"));
  EXPECT_EQ(edges(p.steps.at(0)), V{"A->B counter RAW b"});
  EXPECT_TRUE(p.steps[0].edges[0].flagRanges.empty());
  // Two kernels, two variants: each op preloads the other's code.
  EXPECT_EQ(p.steps[0].ops[0].preloadVariant, static_cast<int>(p.steps[0].ops[1].variant));
  EXPECT_EQ(p.steps[0].ops[1].preloadVariant, -1);
  auto none = planWith(load("readall.json"), "preload-code=none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->steps[0].ops[0].preloadVariant, -1);
}

TEST(Planner, InPlaceWriteAfterRead) {
  FusionPlan p = plan(load("inplace.json"));
  const auto& sk = p.steps.at(0);
  EXPECT_EQ(edges(sk), (V{"A->B flag WAR a", "B->C counter RAW a"}));
  EXPECT_EQ(sk.edges[0].flagRanges, (Ranges{{0, 1}, {2, 3}}));
}

TEST(Planner, DisjointAndOverlappingViews) {
  FusionPlan p = plan(load("views.json"));
  const auto& sk = p.steps.at(0);
  // A and B write disjoint halves of big: no edge between them.
  EXPECT_EQ(edges(sk), (V{"A->C flag RAW big", "B->C flag RAW big"}));
  EXPECT_EQ(sk.edges[0].flagRanges, (Ranges{{2, 2}, {3, 3}, {1, 0}, {1, 0}}));
  EXPECT_EQ(sk.edges[1].flagRanges, (Ranges{{1, 0}, {1, 0}, {0, 0}, {1, 1}}));
  ASSERT_EQ(sk.buffers.size(), 4u);  // manifest in op-list order
  EXPECT_EQ(sk.buffers[3].name, "big");
  EXPECT_EQ(sk.ops[1].args[1].offset, 1024u);
  EXPECT_EQ(sk.ops[1].args[1].count, 1024u);
}

TEST(Planner, DiamondTransitiveReduction) {
  FusionPlan p = plan(load("diamond.json"));
  // A->D (D reads all of b) is implied: D's blocks each follow a B block,
  // and every B block waited for all of A.
  EXPECT_EQ(edges(p.steps.at(0)),
            (V{"A->B counter RAW b", "A->C counter RAW b", "B->D local RAW c", "C->D local RAW d"}));
}

TEST(Planner, PartialPathDoesNotImplyCounter) {
  // A->B->C is local all the way, which orders C block b only after A block
  // b: C reading all of b still needs its own counter on A.
  FusionPlan p = plan(load("partial_path.json"));
  EXPECT_EQ(edges(p.steps.at(0)), (V{"A->B local RAW b", "A->C counter RAW b", "B->C local RAW c"}));
}

TEST(Planner, TwoStreamsWithoutStreamFusionSplitAtWait) {
  FusionPlan p = plan(load("streams.json"));
  EXPECT_EQ(steps(p), (V{"s[P0]", "s#2[P1,P2]", "s#3[P3]"}));
  EXPECT_NE(p.steps[0].endReason.find("ops[2] (wait e0): cross-stream wait on event \"e0\""), std::string::npos)
      << p.steps[0].endReason;
  EXPECT_EQ(p.report.warnings.size(), 2u);
  EXPECT_TRUE(p.steps[1].edges.empty());
  auto abort = planWith(load("streams.json"), "strict-scope-check=abort");
  ASSERT_FALSE(abort.ok());
  EXPECT_NE(abort.error().message().find("ops[2] (wait e0): cross-stream wait"), std::string::npos);
}

TEST(Planner, TwoStreamsWithStreamFusionEvents) {
  FusionPlan p = plan(load("streams.json"), "stream-fusion=1");
  EXPECT_EQ(steps(p), V{"s[P0,P1,P2,P3]"});
  const auto& sk = p.steps[0];
  ASSERT_EQ(sk.queues.size(), 2u);
  EXPECT_EQ(sk.queues[0].stream, 0u);
  EXPECT_EQ(sk.queues[0].firstCore, 0u);
  EXPECT_EQ(sk.queues[0].numCores, 2u);
  EXPECT_EQ(sk.queues[0].ops, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(sk.queues[1].firstCore, 2u);
  EXPECT_EQ(sk.queues[1].ops, (std::vector<uint32_t>{1, 3}));
  // P0->P1 is data across queues; P2->P3 has no data, only the event order.
  EXPECT_EQ(edges(sk), (V{"P0->P1 event RAW b", "P1->P3 local RAW c", "P2->P3 event RAW"}));
  EXPECT_TRUE(p.report.warnings.empty());
  EXPECT_EQ(p.report.syncs.edges.at(SyncKind::Event), 2u);
}

TEST(Planner, MoreStreamsThanCoresSplits) {
  FusionPlan p = plan(load("streams.json"), "stream-fusion=1", 1);
  EXPECT_EQ(steps(p), (V{"s[P0]", "s#2[P1]", "s#3[P2]", "s#4[P3]"}));
  EXPECT_NE(p.steps[0].endReason.find("2 streams need more than the 1 cores"), std::string::npos);
}

TEST(Planner, UnfusibleOpInScope) {
  FusionPlan p = plan(load("unfusible.json"));
  EXPECT_EQ(steps(p), (V{"s[A]", "*B[B]", "s#2[C]"}));
  EXPECT_EQ(p.steps[0].endReason, "ops[1] (B): unfusible op (fusible: false)");
  EXPECT_EQ(p.report.splits[0], "s ended at ops[1] (B): unfusible op (fusible: false)");
  ASSERT_EQ(p.report.warnings.size(), 1u);
  EXPECT_NE(p.report.warnings[0].find("scope \"s\" split"), std::string::npos);
  EXPECT_EQ(p.steps[1].numCores, 4u);
  auto abort = planWith(load("unfusible.json"), "strict-scope-check=abort");
  ASSERT_FALSE(abort.ok());
  EXPECT_EQ(abort.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(abort.error().message().find("unfusible.json: scope \"s\" split: ops[1] (B): unfusible op"),
            std::string::npos)
      << abort.error().message();
}

TEST(Planner, UnfusedReferencePlan) {
  auto p = planWith(load("chain.json"), "", 2, /*fuse=*/false);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(steps(*p), (V{"*A[A]", "*B[B]", "*C[C]"}));
  EXPECT_EQ(p->steps[0].numCores, 2u);  // min(workers, block_dim)
  EXPECT_EQ(p->report.superKernels, 0u);
  EXPECT_TRUE(p->report.warnings.empty());
}

TEST(Planner, EarlyStartZeroMakesBarriers) {
  FusionPlan p = plan(load("diamond.json"), "early-start=0");
  const auto& sk = p.steps.at(0);
  // Every data edge is a barrier; A->D is implied by A->B->D as before.
  EXPECT_EQ(edges(sk), (V{"A->B barrier RAW b", "A->C barrier RAW b", "B->D barrier RAW c", "C->D barrier RAW d"}));
  EXPECT_FALSE(sk.ops[0].barrierBefore);
  EXPECT_TRUE(sk.ops[1].barrierBefore);
  EXPECT_TRUE(sk.ops[2].barrierBefore);
  EXPECT_TRUE(sk.ops[3].barrierBefore);
  EXPECT_EQ(p.report.syncs.barriers, 3u);
  EXPECT_EQ(p.report.syncs.edges.at(SyncKind::Barrier), 4u);
}

TEST(Planner, DebugSyncAll) {
  FusionPlan p = plan(load("chain.json"), "debug-sync-all=1");
  const auto& sk = p.steps.at(0);
  EXPECT_EQ(edges(sk), (V{"A->B local RAW b", "B->C local RAW c"}));
  EXPECT_FALSE(sk.ops[0].barrierBefore);
  EXPECT_TRUE(sk.ops[1].barrierBefore);
  EXPECT_TRUE(sk.ops[2].barrierBefore);
  EXPECT_EQ(p.report.syncs.barriers, 2u);
  EXPECT_NE(formatPlanReport(p).find("barriers=2"), std::string::npos);
}

TEST(Planner, ScopeOptionsApplyPerSuperKernel) {
  OpList l = load("chain.json");
  l.scopes["s"].options = "early-start=0";
  FusionPlan p = plan(l);
  EXPECT_EQ(p.steps[0].options.earlyStart, 0);
  EXPECT_EQ(edges(p.steps[0]), (V{"A->B barrier RAW b", "B->C barrier RAW c"}));
}

TEST(Planner, DebugCoreNum) {
  FusionPlan p = plan(load("chain.json"), "debug-core-num=2");
  EXPECT_EQ(p.steps[0].numCores, 2u);
  EXPECT_EQ(edges(p.steps[0]), (V{"A->B local RAW b", "B->C local RAW c"}));
  auto tooMany = planWith(load("chain.json"), "debug-core-num=8", 4);
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.error().message().find("debug-core-num=8 exceeds the executor's 4 workers"), std::string::npos);
  // One core: every edge is local.
  FusionPlan one = plan(load("mixed.json"), "debug-core-num=1");
  EXPECT_EQ(edges(one.steps[0]), V{"A->B local RAW b"});
}

// --- Graph recordings ---

struct GraphPlan : ::testing::Test {
  void SetUp() override {
    g.setBaseDir(kData);
    KernelDecl k;
    k.name = "ew";
    k.source = "kernels/k.cpp";
    k.entry = "ew";
    k.params = {{"x", ParamKind::Buffer, DType::F32, Access::Read, Partition::Block},
                {"y", ParamKind::Buffer, DType::F32, Access::Write, Partition::Block}};
    ASSERT_TRUE(g.addKernel(k).ok());
    KernelDecl s;
    s.name = "ksync";
    s.source = "kernels/k.cpp";
    s.entry = "ksync";
    s.kernelSync = true;
    s.earlyStart = true;
    s.params = {{"x", ParamKind::Buffer, DType::F32, Access::ReadWrite, Partition::Block}};
    ASSERT_TRUE(g.addKernel(s).ok());
    for (const char* b : {"a", "b", "c", "d", "e"}) ASSERT_TRUE(g.addBuffer(b, DType::F32, {256}).ok());
  }
  void ew(const std::string& name, const std::string& x, const std::string& y, uint32_t bd = 4) {
    ASSERT_TRUE(g.launch({name, "ew", bd, 0, {{"x", arg(x)}, {"y", arg(y)}}, {}, true}).ok());
  }
  Graph g;
};

TEST_F(GraphPlan, NestedScopes) {
  {
    Scope o(g, "outer");
    ew("A", "a", "b");
    {
      Scope i(g, "inner");
      ew("B", "b", "c");
      ew("C", "c", "d");
    }
    ew("D", "d", "e");
  }
  FusionPlan p = plan(g.opList());
  EXPECT_EQ(steps(p), (V{"outer[A]", "inner[B,C]", "outer#2[D]"}));
  EXPECT_NE(p.steps[0].endReason.find("scope change to \"inner\""), std::string::npos);
  EXPECT_EQ(edges(p.steps[1]), V{"B->C local RAW c"});
  EXPECT_TRUE(p.report.warnings.empty());
}

TEST_F(GraphPlan, NeverFuseOp) {
  {
    Scope s(g, "s", "strict-scope-check=abort");
    ew("A", "a", "b");
    {
      auto n = Scope::never(g);
      ew("B", "b", "c");
    }
    ew("C", "c", "d");
  }
  ew("U", "d", "e");  // unscoped
  FusionPlan p = plan(g.opList());  // never-fuse is intended: no abort
  EXPECT_EQ(steps(p), (V{"s[A]", "*B[B]", "s#2[C]", "*U[U]"}));
  EXPECT_NE(p.steps[1].endReason.find("never-fuse"), std::string::npos);
  EXPECT_NE(p.steps[3].endReason.find("unscoped"), std::string::npos);
  EXPECT_TRUE(p.report.warnings.empty());
}

TEST_F(GraphPlan, StrictScopeAbortOnUnfusible) {
  {
    Scope s(g, "s", "strict-scope-check=abort");
    ew("A", "a", "b");
    ASSERT_TRUE(g.launch({"B", "ew", 4, 0, {{"x", arg("b")}, {"y", arg("c")}}, {}, false}).ok());
    ew("C", "c", "d");
  }
  auto p = planWith(g.opList(), "");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message(),
            "scope \"s\" split: ops[1] (B): unfusible op (fusible: false) (strict-scope-check=abort)");
}

TEST_F(GraphPlan, KernelSync) {
  {
    Scope s(g, "s");
    ew("A", "a", "b");
    ASSERT_TRUE(g.launch({"K", "ksync", 4, 0, {{"x", arg("b")}}, {}, true}).ok());
  }
  FusionPlan p = plan(g.opList());
  EXPECT_EQ(steps(p), V{"s[A,K]"});
  EXPECT_TRUE(p.steps[0].ops[1].kernelSync);
  EXPECT_TRUE(p.steps[0].ops[1].earlyStart);
  EXPECT_EQ(edges(p.steps[0]), V{"A->K local RAW b"});
  auto es2 = planWith(g.opList(), "early-start=2");
  ASSERT_TRUE(es2.ok());
  EXPECT_FALSE(es2->steps[0].ops[1].earlyStart);
  // Two cores for the SuperKernel: K cannot be fused, runs unfused on 4 workers.
  FusionPlan narrow = plan(g.opList(), "debug-core-num=2");
  EXPECT_EQ(steps(narrow), (V{"s[A]", "*K[K]"}));
  EXPECT_NE(narrow.steps[1].endReason.find("kernel_sync op needs 4 cores at once, the SuperKernel has 2"),
            std::string::npos);
  EXPECT_EQ(narrow.report.warnings.size(), 1u);
  // Three workers: can never run.
  auto never = planWith(g.opList(), "", 3);
  ASSERT_FALSE(never.ok());
  EXPECT_EQ(never.error().message(),
            "ops[1]: kernel_sync kernel \"ksync\" needs all 4 blocks at once but the executor has 3 workers");
}

TEST_F(GraphPlan, ReportAndDot) {
  {
    Scope s(g, "s\"q");
    ew("A", "a", "b");
    ew("B", "b", "c", 2);
  }
  ew("U", "c", "d");
  FusionPlan p = plan(g.opList());
  std::string r = formatPlanReport(p);
  EXPECT_NE(r.find("3 ops -> 2 launches (1 SuperKernels, 1 unfused)"), std::string::npos) << r;
  EXPECT_NE(r.find("flag=1"), std::string::npos) << r;
  EXPECT_NE(r.find("A -> B: flag RAW on b"), std::string::npos) << r;
  EXPECT_NE(r.find("ended at ops[2] (U): unscoped op"), std::string::npos) << r;
  std::string dot = planToDot(p);
  EXPECT_EQ(dot.rfind("digraph superkernel_plan {", 0), 0u);
  EXPECT_NE(dot.find("label=\"s\\\"q (4 cores)\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("s0_o0 -> s0_o1 [label=\"flag RAW b\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("subgraph cluster_1"), std::string::npos);
}

TEST_F(GraphPlan, VariantsDedupeByMergedMacros) {
  {
    Scope s(g, "s");
    ASSERT_TRUE(g.launch({"A", "ew", 4, 0, {{"x", arg("a")}, {"y", arg("b")}}, {{"N", "1"}}, true}).ok());
    ASSERT_TRUE(g.launch({"B", "ew", 4, 0, {{"x", arg("c")}, {"y", arg("d")}}, {{"N", "2"}}, true}).ok());
    ASSERT_TRUE(g.launch({"C", "ew", 4, 0, {{"x", arg("a")}, {"y", arg("e")}}, {{"N", "1"}}, true}).ok());
  }
  FusionPlan p = plan(g.opList());
  ASSERT_EQ(p.variants.size(), 2u);
  EXPECT_EQ(p.steps[0].ops[0].variant, p.steps[0].ops[2].variant);
  EXPECT_NE(p.variants[0].symbol, p.variants[1].symbol);
  EXPECT_EQ(p.variants[1].macros.at("N"), "2");
  EXPECT_EQ(p.steps[0].ops[0].preloadVariant, 1);
  EXPECT_EQ(p.steps[0].ops[1].preloadVariant, -1);  // C's code is A's, which ran just before B: still hot
  EXPECT_EQ(p.steps[0].ops[2].preloadVariant, -1);
  // Stable across runs: same inputs, same symbol.
  EXPECT_EQ(plan(g.opList()).variants[0].symbol, p.variants[0].symbol);
}

// Code one of the two ops before this one ran is not preloaded again; code from three ops back is.
TEST_F(GraphPlan, PreloadSkipsCodeTheCoreRanOneOrTwoOpsAgo) {
  // Variants by the macro N: 1 2 1 2 3 4 1 (ops 0..6).
  const char* n[] = {"1", "2", "1", "2", "3", "4", "1"};
  {
    Scope s(g, "s");
    for (int i = 0; i < 7; ++i)
      ASSERT_TRUE(g.launch({"op" + std::to_string(i), "ew", 4, 0,
                            {{"x", arg(i % 2 ? "b" : "a")}, {"y", arg(i % 2 ? "a" : "b")}}, {{"N", n[i]}}, true})
                      .ok());
  }
  FusionPlan p = plan(g.opList());
  const auto& ops = p.steps.at(0).ops;
  ASSERT_EQ(ops.size(), 7u);
  ASSERT_EQ(p.variants.size(), 4u);
  auto v = [&](int i) { return static_cast<int>(ops[static_cast<size_t>(i)].variant); };
  EXPECT_EQ(ops[0].preloadVariant, v(1));  // 2: never ran
  EXPECT_EQ(ops[1].preloadVariant, -1);    // 1: ran by op 0
  EXPECT_EQ(ops[2].preloadVariant, -1);    // 2: ran by op 1
  EXPECT_EQ(ops[3].preloadVariant, v(4));  // 3: never ran
  EXPECT_EQ(ops[4].preloadVariant, v(5));  // 4: never ran
  EXPECT_EQ(ops[5].preloadVariant, v(6));  // 1: last ran by op 2, three ops before op 5
  EXPECT_EQ(ops[6].preloadVariant, -1);    // the last op
  // preload-code=none still preloads nothing, and the rule is the schedule's, not the emitter's.
  auto none = planWith(g.opList(), "preload-code=none");
  ASSERT_TRUE(none.ok());
  for (const auto& op : none->steps.at(0).ops) EXPECT_EQ(op.preloadVariant, -1);
}

// preload-code=auto (the default) is the machine's defaultPreloadCode, written into the step's options; a value
// the options set wins over the machine's.
TEST_F(GraphPlan, PreloadCodeAutoIsTheMachinesDefault) {
  {
    Scope s(g, "s");
    ASSERT_TRUE(g.launch({"A", "ew", 4, 0, {{"x", arg("a")}, {"y", arg("b")}}, {{"N", "1"}}, true}).ok());
    ASSERT_TRUE(g.launch({"B", "ew", 4, 0, {{"x", arg("b")}, {"y", arg("c")}}, {{"N", "2"}}, true}).ok());
  }
  MachineModel none = MachineModel::singlePool("cpu", 4, "executor", "workers");
  none.defaultPreloadCode = PreloadCode::None;
  auto planOn = [&](const MachineModel& m, const std::string& opts) {
    auto o = parseOptions(opts);
    EXPECT_TRUE(o.ok());
    auto p = planOpList(g.opList(), o ? *o : Options{}, PlanConfig{m, true});
    EXPECT_TRUE(p.ok()) << (p ? "" : p.error().message());
    return p ? *p : FusionPlan{};
  };
  FusionPlan byDefault = planOn(none, "");
  ASSERT_EQ(byDefault.steps.size(), 1u);
  EXPECT_EQ(byDefault.steps[0].options.preloadCode, PreloadCode::None);
  EXPECT_EQ(byDefault.steps[0].ops[0].preloadVariant, -1);
  FusionPlan asked = planOn(none, "preload-code=per-func");
  EXPECT_EQ(asked.steps.at(0).options.preloadCode, PreloadCode::PerFunc);
  EXPECT_EQ(asked.steps[0].ops[0].preloadVariant, static_cast<int>(asked.steps[0].ops[1].variant));
  FusionPlan perFuncMachine = planOn(MachineModel::singlePool("cpu", 4, "executor", "workers"), "preload-code=auto");
  EXPECT_EQ(perFuncMachine.steps.at(0).options.preloadCode, PreloadCode::PerFunc);
  EXPECT_GE(perFuncMachine.steps[0].ops[0].preloadVariant, 0);
}

}  // namespace planner_test
}  // namespace sk
