// Runtime scalars (OpList.h RuntimeScalar, docs/OPLIST.md): an argument
// {"from": buffer, "index": i} for a scalar parameter declared "runtime".
// The parser, writer and validator (every bad input one error naming the
// file, the JSON path and what to do), the Graph API (sk::argFrom), and what
// the planner makes of one: a read of that element, ordered after an op of
// the same plan that writes it, never a kernel's own early start.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "superkernel/frontend/Graph.h"
#include "superkernel/plan/Plan.h"

namespace sk {
namespace runtime_scalar_test {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const fs::path kPlanData = fs::path(SK_SOURCE_ROOT) / "tests/plan/data";

// Kernel "ew": y = f(x) over n elements, n runtime-capable, m not. Kernel "bump" writes the step buffer.
ojson base() {
  return ojson::parse(R"({
    "format": "superkernel.oplist", "version": 1,
    "kernels": {
      "ew": {"source": "kernels/k.cpp", "entry": "ew", "early_start": true, "params": [
        {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
        {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
        {"name": "n", "kind": "scalar", "dtype": "i64", "runtime": true},
        {"name": "m", "kind": "scalar", "dtype": "i64"}]},
      "bump": {"source": "kernels/k.cpp", "entry": "bump", "params": [
        {"name": "s", "kind": "buffer", "dtype": "i64", "access": "readwrite", "partition": "all"}]}},
    "buffers": {"a": {"dtype": "f32", "shape": [64]}, "b": {"dtype": "f32", "shape": [64]},
                "c": {"dtype": "f32", "shape": [64]},
                "step": {"dtype": "i64", "shape": [2]}, "step32": {"dtype": "i32", "shape": [2]}},
    "ops": [
      {"name": "A", "kernel": "ew", "block_dim": 4, "scope": "s",
       "args": {"x": "a", "y": "b", "n": {"from": "step", "index": 1}, "m": 64}},
      {"name": "B", "kernel": "bump", "block_dim": 1, "scope": "s", "args": {"s": "step"}},
      {"name": "C", "kernel": "ew", "block_dim": 4, "scope": "s",
       "args": {"x": "b", "y": "c", "n": {"from": "step"}, "m": 64}}]
  })");
}

Expected<OpList> parse(const ojson& j) { return parseOpList(j.dump(), "rt.json", kPlanData); }

std::string errorOf(const ojson& j) {
  auto l = parse(j);
  EXPECT_FALSE(l.ok()) << j.dump();
  if (l) return "";
  EXPECT_EQ(l.error().kind(), ErrorKind::BadInput);
  return l.error().message();
}

TEST(RuntimeScalar, ParsesAndRoundTrips) {
  auto l = parse(base());
  ASSERT_TRUE(l.ok()) << l.error().message();
  const ArgValue* n = l->ops[0].findArg("n");
  ASSERT_TRUE(n->isRuntime());
  EXPECT_FALSE(n->isScalar());
  EXPECT_FALSE(n->isBuffer());
  EXPECT_EQ(n->runtime().buffer, "step");
  EXPECT_EQ(n->runtime().index, 1u);
  EXPECT_EQ(l->ops[2].findArg("n")->runtime().index, 0u) << "index defaults to 0";
  EXPECT_TRUE(l->kernels[0].params[2].runtime);
  EXPECT_FALSE(l->kernels[0].params[3].runtime);

  const std::string text = writeOpList(*l);
  const ojson w = ojson::parse(text);
  EXPECT_EQ(w["ops"][0]["args"]["n"], ojson::parse(R"({"from": "step", "index": 1})"));
  EXPECT_EQ(w["kernels"]["ew"]["params"][2]["runtime"], true);
  EXPECT_FALSE(w["kernels"]["ew"]["params"][3].contains("runtime"));
  auto again = parseOpList(text, "again.json", kPlanData);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->ops, l->ops);
  EXPECT_EQ(again->kernels[0].params, l->kernels[0].params);
}

TEST(RuntimeScalar, BadInputNamesTheArgument) {
  ojson j = base();
  j["ops"][0]["args"]["n"]["from"] = "nowhere";
  EXPECT_EQ(errorOf(j), "rt.json: ops[0].args.n.from: unknown buffer \"nowhere\"");

  j = base();
  j["ops"][0]["args"]["n"]["from"] = "step32";
  EXPECT_EQ(errorOf(j), "rt.json: ops[0].args.n.from: buffer \"step32\" is i32 but parameter \"n\" of kernel \"ew\" "
                        "is i64 (a runtime scalar is read as the parameter's dtype)");

  j = base();
  j["ops"][0]["args"]["n"]["index"] = 2;
  EXPECT_EQ(errorOf(j), "rt.json: ops[0].args.n.index: index 2 is out of range of buffer \"step\" (2 elements)");

  j = base();
  j["ops"][0]["args"]["m"] = ojson::parse(R"({"from": "step"})");
  const std::string e = errorOf(j);
  EXPECT_EQ(e.rfind("rt.json: ops[0].args.m: parameter \"m\" of kernel \"ew\" is compile-time", 0), 0u) << e;
  EXPECT_NE(e.find("\"runtime\": true"), std::string::npos) << e;

  j = base();
  j["ops"][0]["args"]["x"] = ojson::parse(R"({"from": "a"})");
  EXPECT_EQ(errorOf(j).rfind("rt.json: ops[0].args.x: parameter \"x\" is a buffer (f32), got a runtime scalar", 0), 0u);

  j = base();
  j["ops"][0]["macros"] = ojson::parse(R"({"SK_N": "64"})");
  EXPECT_EQ(errorOf(j), "rt.json: ops[0].args.n: macro SK_N (the op's macros) fixes parameter \"n\" at compile "
                        "time, but its argument is a runtime value: drop one of the two");
  j = base();
  j["kernels"]["ew"]["macros"] = ojson::parse(R"({"SK_N": "64"})");
  EXPECT_EQ(errorOf(j), "rt.json: ops[0].args.n: macro SK_N (the kernel's macros) fixes parameter \"n\" at compile "
                        "time, but its argument is a runtime value: drop one of the two");

  j = base();
  j["ops"][0]["args"]["n"]["offset"] = 1;
  EXPECT_NE(errorOf(j).find("ops[0].args.n.offset"), std::string::npos) << errorOf(j);
  j = base();
  j["ops"][0]["args"]["n"]["index"] = -1;
  EXPECT_NE(errorOf(j).find("ops[0].args.n.index"), std::string::npos) << errorOf(j);
  j = base();
  j["ops"][0]["args"]["n"]["from"] = 3;
  EXPECT_NE(errorOf(j).find("ops[0].args.n.from"), std::string::npos) << errorOf(j);

  // The declaration key: scalars only, a boolean.
  j = base();
  j["kernels"]["ew"]["params"][0]["runtime"] = true;
  EXPECT_EQ(errorOf(j), "rt.json: kernels.ew.params[0].runtime: only scalar parameters take \"runtime\" (a buffer is "
                        "always read at run time)");
  j = base();
  j["kernels"]["ew"]["params"][2]["runtime"] = 1;
  EXPECT_NE(errorOf(j).find("kernels.ew.params[2].runtime: expected true or false"), std::string::npos);
}

TEST(RuntimeScalar, GraphRecordsAndChecksArgFrom) {
  Graph g;
  KernelDecl k;
  k.name = "ew";
  k.source = "kernels/k.cpp";
  k.entry = "ew";
  k.params = {ParamDecl{"x", ParamKind::Buffer, DType::F32, Access::Read, Partition::Block},
              ParamDecl{"y", ParamKind::Buffer, DType::F32, Access::Write, Partition::Block},
              ParamDecl{"n", ParamKind::Scalar, DType::I64, Access::Read, Partition::All, true}};
  g.setBaseDir(kPlanData);
  ASSERT_TRUE(g.addKernel(k));
  ASSERT_TRUE(g.addBuffer("a", DType::F32, {64}));
  ASSERT_TRUE(g.addBuffer("b", DType::F32, {64}));
  ASSERT_TRUE(g.addBuffer("pos", DType::I64, {1}));
  ASSERT_TRUE(g.addBuffer("pos32", DType::I32, {1}));
  Scope s(g, "s");
  auto launch = [&g](const char* name, ArgValue n) {
    LaunchDesc d;
    d.name = name;
    d.kernel = "ew";
    d.blockDim = 2;
    d.args = {{"x", arg("a")}, {"y", arg("b")}, {"n", std::move(n)}};
    return g.launch(d);
  };
  Status st = launch("A", argFrom("pos"));
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_TRUE(g.opList().ops[0].findArg("n")->isRuntime());
  const ojson w = ojson::parse(g.writeJson());
  EXPECT_EQ(w["ops"][0]["args"]["n"], ojson::parse(R"({"from": "pos", "index": 0})"));

  st = launch("B", argFrom("pos32"));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("ops[1].args.n.from: buffer \"pos32\" is i32"), std::string::npos)
      << st.error().message();
  st = launch("B", argFrom("pos", 1));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("ops[1].args.n.index: index 1 is out of range"), std::string::npos)
      << st.error().message();
  EXPECT_EQ(g.opList().ops.size(), 1u) << "a failed launch records nothing";
}

Expected<FusionPlan> planOf(const OpList& l, const std::string& opts) {
  auto o = parseOptions(opts);
  if (!o) return o.error();
  return planOpList(l, *o, PlanConfig{MachineModel::singlePool("cpu", 4, "executor", "workers"), true});
}

// The element a runtime scalar names is read by the op: the op that writes it orders before a later reader
// (RAW) and after an earlier one (WAR); the op's own early start is off (its argument is read at the call,
// before a kernel's sk_wait_inputs); the buffer is in the step's manifest.
TEST(RuntimeScalar, PlannerOrdersTheWriterAndDropsEarlyStart) {
  auto l = parse(base());
  ASSERT_TRUE(l.ok()) << l.error().message();
  auto p = planOf(*l, "early-start=1");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  const SuperKernelPlan& sk = p->steps[0];
  ASSERT_EQ(sk.ops.size(), 3u);
  bool war = false, raw = false;
  for (const Edge& e : sk.edges) {
    if (e.producer == 0 && e.consumer == 1 && e.buffer == "step") war = e.dep == DepKind::WAR;
    if (e.producer == 1 && e.consumer == 2 && e.buffer == "step") raw = e.dep == DepKind::RAW;
  }
  EXPECT_TRUE(war) << "A reads step[1] before B writes it";
  EXPECT_TRUE(raw) << "C reads step[0] after B writes it";
  EXPECT_FALSE(sk.ops[0].earlyStart);
  EXPECT_FALSE(sk.ops[2].earlyStart);
  const BoundArg& n = sk.ops[0].args[2];
  EXPECT_TRUE(n.runtime);
  EXPECT_TRUE(n.touchesBuffer());
  ASSERT_GE(n.buffer, 0);
  EXPECT_EQ(sk.buffers[static_cast<size_t>(n.buffer)].name, "step");
  EXPECT_EQ(n.offset, 1u);
  EXPECT_EQ(n.count, 1u);

  // Without runtime scalars the same early-start kernel does start early (the rule is the runtime scalar's).
  ojson j = base();
  j["ops"][0]["args"]["n"] = 64;
  j["ops"][2]["args"]["n"] = 64;
  auto l2 = parse(j);
  ASSERT_TRUE(l2.ok()) << l2.error().message();
  auto p2 = planOf(*l2, "early-start=1");
  ASSERT_TRUE(p2.ok()) << p2.error().message();
  EXPECT_TRUE(p2->steps[0].ops[0].earlyStart);
}

// The value is never part of the plan: lists that differ only in what the step buffer holds, or in which
// element names the position, plan to variants of the same symbols (so the same objects and keys).
TEST(RuntimeScalar, VariantsDoNotDependOnTheValue) {
  ojson j = base();
  j["buffers"]["step"]["init"] = "iota";
  auto a = parse(base()), b = parse(j);
  ASSERT_TRUE(a.ok() && b.ok());
  auto pa = planOf(*a, ""), pb = planOf(*b, "");
  ASSERT_TRUE(pa.ok() && pb.ok());
  ASSERT_EQ(pa->variants.size(), pb->variants.size());
  for (size_t i = 0; i < pa->variants.size(); ++i) EXPECT_EQ(pa->variants[i].symbol, pb->variants[i].symbol);
}

// On a machine whose sub-kernels take scalars at compile time (MachineModel::staticArguments, ascend), a
// runtime scalar is part of an op's specialisation by slot only: ops reading the same element share a slot
// (SuperKernelPlan::runtimeValues), the variant records (parameter, slot) and no value; where the device
// cannot pass slots (runtimeScalars false) it is one error naming the op and the argument.
TEST(RuntimeScalar, StaticArgumentMachinesSpecialiseBySlotOrRefuse) {
  auto l = parse(base());
  ASSERT_TRUE(l.ok()) << l.error().message();
  PlanConfig pc{MachineModel::singlePool("static-test", 4), true};
  pc.machine.staticArguments = true;
  pc.machine.runtimeScalars = true;
  auto p = planOpList(*l, Options{}, pc);
  ASSERT_TRUE(p.ok()) << p.error().message();
  const SuperKernelPlan& sk = p->steps.at(0);
  ASSERT_EQ(sk.runtimeValues.size(), 2u) << "step[1] (op A) and step[0] (op C)";
  EXPECT_EQ(sk.buffers[static_cast<size_t>(sk.runtimeValues[0].buffer)].name, "step");
  EXPECT_EQ(sk.runtimeValues[0].element, 1u);
  EXPECT_EQ(sk.runtimeValues[1].element, 0u);
  EXPECT_EQ(sk.runtimeValues[0].dtype, DType::I64);
  const KernelVariant& a = p->variants.at(sk.ops[0].variant);
  const KernelVariant& c = p->variants.at(sk.ops[2].variant);
  ASSERT_EQ(a.runtimeScalars.size(), 1u);
  EXPECT_EQ(a.runtimeScalars[0], (std::pair<std::string, uint32_t>{"n", 0}));
  EXPECT_EQ(c.runtimeScalars[0], (std::pair<std::string, uint32_t>{"n", 1}));
  EXPECT_EQ(a.staticScalars, std::vector<ScalarValue>{ScalarValue{int64_t{64}}}) << "only m is compiled in";
  EXPECT_NE(a.symbol, c.symbol) << "different slots, different objects";

  // Two ops reading the same element share the slot and, with equal literals, the object.
  ojson j = base();
  j["ops"][2]["args"]["n"]["index"] = 1;
  j["ops"][2]["args"]["x"] = "a";
  auto l2 = parse(j);
  ASSERT_TRUE(l2.ok()) << l2.error().message();
  auto p2 = planOpList(*l2, Options{}, pc);
  ASSERT_TRUE(p2.ok()) << p2.error().message();
  EXPECT_EQ(p2->steps.at(0).runtimeValues.size(), 1u);

  pc.machine.runtimeScalars = false;
  auto refused = planOpList(*l, Options{}, pc);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(refused.error().message().find("op A argument n: a runtime value (\"from\") on target static-test"),
            std::string::npos)
      << refused.error().message();
}

}  // namespace runtime_scalar_test
}  // namespace sk
