// Collective ops in the op list (docs/COLLECTIVES.md): parse -> write ->
// parse is lossless, each bad input is one error naming its JSON path, and
// the planner lowers a collective to one block that waits for its inputs
// while independent ops run beside it (the report says which).
#include <gtest/gtest.h>

#include <string>

#include "superkernel/superkernel.h"

namespace sk {
namespace {

std::string collectiveList(const std::string& op, const std::string& groups = R"({"tp": {"ranks": [0, 1]}})",
                           const std::string& outShape = "[64]") {
  return R"({"format": "superkernel.oplist", "version": 1,
  "kernels": {"scale": {"builtin": "scale_f32"}},
  "buffers": {"x": {"dtype": "f32", "shape": [64]}, "y": {"dtype": "f32", "shape": )" + outShape + R"(},
              "w": {"dtype": "f32", "shape": [64]}, "v": {"dtype": "f32", "shape": [64]},
              "i": {"dtype": "i32", "shape": [64]}},
  "groups": )" + groups + R"(,
  "ops": [
    {"name": "pre", "kernel": "scale", "block_dim": 2, "scope": "sk", "args": {"x": "w", "y": "x", "alpha": 1.0, "n": 64}},
    )" + op + R"(,
    {"name": "indep", "kernel": "scale", "block_dim": 2, "scope": "sk", "args": {"x": "w", "y": "v", "alpha": 2.0, "n": 64}}
  ]})";
}

std::string errorOf(const std::string& json) {
  auto l = parseOpList(json, "c.json", ".");
  return l ? std::string("(parsed)") : l.error().message();
}

TEST(CollectiveOpList, RoundTripsEveryKind) {
  for (const char* op : {
           R"({"name": "c", "collective": "all_reduce", "reduce": "sum", "group": "tp", "scope": "sk", "args": {"in": "x", "out": "x"}})",
           R"({"name": "c", "collective": "all_reduce", "reduce": "max", "group": "tp", "stream": 0, "fusible": false, "args": {"in": "x", "out": "y"}})",
           R"({"name": "c", "collective": "all_gather", "group": "tp", "scope": "sk", "args": {"in": {"buffer": "x", "offset": 0, "count": 32}, "out": "y"}})",
           R"({"name": "c", "collective": "reduce_scatter", "reduce": "sum", "group": "tp", "args": {"in": "x", "out": {"buffer": "y", "offset": 32, "count": 32}}})",
           R"({"name": "c", "collective": "all_to_all", "group": "tp", "scope": null, "args": {"in": "x", "out": "y"}})"}) {
    auto a = parseOpList(collectiveList(op), "c.json", ".");
    ASSERT_TRUE(a) << op << "\n" << a.error().message();
    EXPECT_EQ(a->ops[1].kind, Op::Kind::Collective);
    const std::string text = writeOpList(*a);
    auto b = parseOpList(text, "c.json", ".");
    ASSERT_TRUE(b) << text << "\n" << b.error().message();
    b->origin = a->origin;
    EXPECT_EQ(*a, *b) << text;
    EXPECT_EQ(writeOpList(*b), text);
  }
}

TEST(CollectiveOpList, BadInputNamesThePath) {
  struct Case {
    std::string op, groups, shape, message;
  };
  const std::string tp = R"({"tp": {"ranks": [0, 1]}})";
  for (const Case& c : std::vector<Case>{
           {R"({"name": "c", "collective": "all_reduce", "group": "tp", "args": {"in": "x", "out": "x"}})", tp, "[64]",
            "c.json: ops[1]: all_reduce needs \"reduce\": \"sum\" or \"max\""},
           {R"({"name": "c", "collective": "all_gather", "reduce": "sum", "group": "tp", "args": {"in": "x", "out": "y"}})", tp,
            "[128]", "ops[1].reduce: all_gather takes no \"reduce\""},
           {R"({"name": "c", "collective": "broadcast", "group": "tp", "args": {"in": "x", "out": "y"}})", tp, "[64]",
            "ops[1].collective: unknown collective \"broadcast\""},
           {R"({"name": "c", "collective": "all_gather", "group": "tp", "args": {"in": "x", "out": "y"}})", tp, "[64]",
            "ops[1].args: all_gather over group \"tp\" (2 ranks) needs out = ranks x in, got in 64 and out 64 elements"},
           {R"({"name": "c", "collective": "all_reduce", "reduce": "sum", "group": "dp", "args": {"in": "x", "out": "x"}})", tp,
            "[64]", "ops[1].group: unknown group \"dp\""},
           {R"({"name": "c", "collective": "all_reduce", "reduce": "sum", "group": "tp", "args": {"in": "x", "out": "i"}})", tp,
            "[64]", "ops[1].args.out: buffer \"i\" is i32 but \"in\" is f32"},
           {R"({"name": "c", "collective": "all_reduce", "reduce": "sum", "group": "tp", "args": {"in": "x", "out": {"buffer": "x", "offset": 1, "count": 63}}})",
            tp, "[64]", "ops[1].args: all_reduce over group \"tp\" (2 ranks) needs as many elements out as in"},
           {R"({"name": "c", "collective": "all_reduce", "reduce": "sum", "group": "tp", "kernel": "scale", "args": {"in": "x", "out": "x"}})",
            tp, "[64]", "ops[1].kernel: unknown key \"kernel\""},
           {R"({"name": "c", "collective": "all_reduce", "reduce": "sum", "group": "tp", "args": {"in": "x", "out": "x"}})",
            R"({"tp": {"ranks": [1, 0]}})", "[64]", "groups.tp.ranks[1]: ranks must be strictly ascending"},
           {R"({"name": "c", "collective": "all_reduce", "reduce": "sum", "group": "tp", "args": {"in": "x", "out": "x"}})",
            R"({"tp": {"ranks": [0, 64]}})", "[64]", "groups.tp.ranks[1]"},
       }) {
    const std::string e = errorOf(collectiveList(c.op, c.groups, c.shape));
    EXPECT_NE(e.find(c.message), std::string::npos) << "got: " << e << "\nwant: " << c.message;
  }
}

TEST(CollectiveOpList, PlanWaitsForInputsAndRunsIndependentOpsBeside) {
  auto l = parseOpList(collectiveList(R"({"name": "ar", "collective": "all_reduce", "reduce": "sum", "group": "tp", "scope": "sk", "args": {"in": "x", "out": "x"}})"),
                       "c.json", ".");
  ASSERT_TRUE(l) << l.error().message();
  PlanConfig cfg;
  cfg.machine = MachineModel::singlePool("cpu", 2);
  cfg.machine.collectiveSource = "/nowhere/collective_kernel.cpp";  // planning reads no source
  auto opts = parseOptions(l->options);
  ASSERT_TRUE(opts);
  auto p = planOpList(*l, *opts, cfg);
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  ASSERT_EQ(p->report.collectives.size(), 1u);
  EXPECT_NE(p->report.collectives[0].find("ar: all_reduce sum of 64 f32 over group tp (ranks 0,1), in [0] sk: waits for pre"),
            std::string::npos)
      << p->report.collectives[0];
  EXPECT_NE(p->report.collectives[0].find("runs beside indep (early start)"), std::string::npos) << p->report.collectives[0];
  EXPECT_NE(formatPlanReport(*p).find("collective ar: "), std::string::npos);

  // A target without collectives says so, naming the op.
  PlanConfig none;
  none.machine = MachineModel::singlePool("cpu", 2);
  auto q = planOpList(*l, *opts, none);
  ASSERT_FALSE(q);
  EXPECT_NE(q.error().message().find("ops[1]: target cpu has no collective ops yet (all_reduce \"ar\")"), std::string::npos)
      << q.error().message();
}

// Ranks pair collectives by order, so a step's collectives must start in recorded order on every rank. On two
// queues (stream-fusion=1, one stream each) nothing else orders two independent collectives: the planner adds an
// event edge from the first to the second. On one queue the queue's order is recorded order: no edge.
TEST(CollectiveOpList, CollectivesOnTwoStreamsRunInRecordedOrder) {
  auto listWith = [](const std::string& options) {
    return R"({"format": "superkernel.oplist", "version": 1, "options": ")" + options + R"(",
  "kernels": {"scale": {"builtin": "scale_f32"}},
  "buffers": {"a": {"dtype": "f32", "shape": [64]}, "b": {"dtype": "f32", "shape": [64]},
              "w": {"dtype": "f32", "shape": [64]}, "v": {"dtype": "f32", "shape": [64]}},
  "groups": {"tp": {"ranks": [0, 1]}, "dp": {"ranks": [0, 2]}},
  "ops": [
    {"name": "ar_tp", "collective": "all_reduce", "reduce": "sum", "group": "tp", "stream": 0, "scope": "sk", "args": {"in": "a", "out": "a"}},
    {"name": "ar_dp", "collective": "all_reduce", "reduce": "sum", "group": "dp", "stream": 1, "scope": "sk", "args": {"in": "b", "out": "b"}},
    {"name": "indep", "kernel": "scale", "block_dim": 2, "stream": 1, "scope": "sk", "args": {"x": "w", "y": "v", "alpha": 2.0, "n": 64}}
  ]})";
  };
  PlanConfig cfg;
  cfg.machine = MachineModel::singlePool("cpu", 4);
  cfg.machine.collectiveSource = "/nowhere/collective_kernel.cpp";
  for (const char* options : {"stream-fusion=1", "stream-fusion=0"}) {
    SCOPED_TRACE(options);
    auto l = parseOpList(listWith(options), "c.json", ".");
    ASSERT_TRUE(l) << l.error().message();
    auto opts = parseOptions(l->options);
    ASSERT_TRUE(opts);
    auto p = planOpList(*l, *opts, cfg);
    ASSERT_TRUE(p) << p.error().message();
    ASSERT_EQ(p->steps.size(), 1u);
    const SuperKernelPlan& sk = p->steps[0];
    ASSERT_EQ(sk.ops.size(), 3u);
    const bool twoQueues = std::string(options) == "stream-fusion=1";
    EXPECT_EQ(sk.ops[0].queue != sk.ops[1].queue, twoQueues);
    bool ordered = false;
    for (const Edge& e : sk.edges) ordered |= e.producer == 0 && e.consumer == 1;
    EXPECT_EQ(ordered, twoQueues) << "an edge ar_tp -> ar_dp";
    ASSERT_EQ(p->report.collectives.size(), 2u);
    // Either way the second waits for the first (an edge, or the queue's order); the other op still runs beside.
    if (twoQueues) {
      EXPECT_NE(p->report.collectives[1].find("waits for ar_tp (event)"), std::string::npos) << p->report.collectives[1];
      EXPECT_EQ(p->report.collectives[0].find("ar_dp"), std::string::npos) << p->report.collectives[0];
      EXPECT_NE(p->report.collectives[0].find("runs beside indep"), std::string::npos) << p->report.collectives[0];
    }
  }
}

TEST(CollectiveOpList, GraphRecordsWhatTheFileSays) {
  Graph g;
  ASSERT_TRUE(g.addBuffer("x", DType::F32, {64}));
  ASSERT_TRUE(g.addBuffer("y", DType::F32, {128}));
  ASSERT_TRUE(g.addGroup("tp", {0, 1}));
  EXPECT_FALSE(g.addGroup("bad", {1, 1}));
  {
    Scope s(g, "sk");
    ASSERT_TRUE(g.collective({"ag", CollectiveKind::AllGather, ReduceOp::None, "tp", arg("x"), arg("y")}));
    Status bad = g.collective({"ag2", CollectiveKind::AllGather, ReduceOp::None, "tp", arg("x"), arg("x")});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("needs out = ranks x in"), std::string::npos) << bad.error().message();
  }
  auto back = parseOpList(g.writeJson(), "g.json", ".");
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->ops.size(), 1u);
  EXPECT_EQ(back->ops[0].collective, CollectiveKind::AllGather);
  EXPECT_EQ(back->ops[0].scope, std::optional<std::string>("sk"));
  EXPECT_EQ(back->groups.at("tp").ranks, (std::vector<uint32_t>{0, 1}));
}

}  // namespace
}  // namespace sk
