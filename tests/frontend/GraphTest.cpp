// Graph / Scope recorder.
#include <gtest/gtest.h>

#include "superkernel/frontend/Graph.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

const fs::path kPlanData = fs::path(SK_SOURCE_ROOT) / "tests/plan/data";

KernelDecl ew() {
  KernelDecl k;
  k.name = "ew";
  k.source = "kernels/k.cpp";
  k.entry = "ew";
  k.params = {{"x", ParamKind::Buffer, DType::F32, Access::Read, Partition::Block},
              {"y", ParamKind::Buffer, DType::F32, Access::Write, Partition::Block},
              {"n", ParamKind::Scalar, DType::I64, Access::Read, Partition::All}};
  return k;
}

struct GraphTest : ::testing::Test {
  void SetUp() override {
    g.setBaseDir(kPlanData);
    ASSERT_TRUE(g.addKernel(ew()).ok());
    ASSERT_TRUE(g.addBuffer("a", DType::F32, {64}, &storage).ok());
    ASSERT_TRUE(g.addBuffer("b", DType::F32, {64}).ok());
  }
  LaunchDesc op(std::string name, std::string x = "a", std::string y = "b") {
    return LaunchDesc{std::move(name), "ew", 4, 0, {{"x", arg(x)}, {"y", arg(y)}, {"n", arg(64)}}, {}, true};
  }
  Graph g;
  float storage[64] = {};
};

TEST_F(GraphTest, RecordsScopesAndNesting) {
  std::vector<size_t> ran;
  g.setLaunchHook([&](const OpList& l, size_t i) {
    EXPECT_EQ(l.ops[i].kind, Op::Kind::Launch);
    ran.push_back(i);
    return Status::success();
  });
  ASSERT_TRUE(g.launch(op("u0")).ok());  // unscoped: runs now
  {
    Scope outer(g, "outer", "early-start=2");
    ASSERT_TRUE(outer.status().ok());
    ASSERT_TRUE(g.launch(op("o1")).ok());
    {
      Scope inner(g, "inner");
      ASSERT_TRUE(g.launch(op("i1")).ok());
      {
        auto never = Scope::never(g);
        ASSERT_TRUE(g.launch(op("n1")).ok());
      }
      ASSERT_TRUE(g.launch(op("i2")).ok());
    }
    ASSERT_TRUE(g.launch(op("o2")).ok());
  }
  ASSERT_TRUE(g.launch(op("u1")).ok());
  const OpList& l = g.opList();
  ASSERT_EQ(l.ops.size(), 7u);
  EXPECT_FALSE(l.ops[0].scope);
  EXPECT_FALSE(l.ops[0].scopeNull);
  EXPECT_EQ(l.ops[1].scope, "outer");
  EXPECT_EQ(l.ops[2].scope, "inner");
  EXPECT_TRUE(l.ops[3].scopeNull);
  EXPECT_FALSE(l.ops[3].scope);
  EXPECT_EQ(l.ops[4].scope, "inner");
  EXPECT_EQ(l.ops[5].scope, "outer");
  EXPECT_FALSE(l.ops[6].scope);
  EXPECT_EQ(ran, (std::vector<size_t>{0, 6}));
  EXPECT_TRUE(g.ranImmediately(0));
  EXPECT_FALSE(g.ranImmediately(1));
  EXPECT_EQ(l.scopes.at("outer").options, "early-start=2");
  EXPECT_EQ(g.hostPointer("a"), storage);
  EXPECT_EQ(g.hostPointer("b"), nullptr);
  EXPECT_TRUE(validateOpList(l).ok());
}

TEST_F(GraphTest, HookErrorIsReturned) {
  g.setLaunchHook([](const OpList&, size_t) { return Status(runtimeError("boom")); });
  Status s = g.launch(op("u0"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "boom");
}

TEST_F(GraphTest, RecordTimeErrors) {
  Status s = g.launch(op("x", "a", "c_out"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "ops[0].args.y: unknown buffer \"c_out\"");
  EXPECT_TRUE(g.opList().ops.empty());  // nothing recorded
  LaunchDesc d = op("x");
  d.args.pop_back();
  EXPECT_EQ(g.launch(d).error().message(), "ops[0].args: missing argument \"n\" (scalar parameter of kernel \"ew\")");
  d = op("x");
  d.kernel = "nope";
  EXPECT_EQ(g.launch(d).error().message(), "ops[0].kernel: unknown kernel \"nope\"");
  d = op("x");
  d.blockDim = 0;
  EXPECT_EQ(g.launch(d).error().message(), "ops[0].block_dim: block_dim 0 out of range 1..65536");
  d = op("x");
  d.args[0].second = arg("a", 60, 8);
  EXPECT_EQ(g.launch(d).error().message(),
            "ops[0].args.x: view [60, +8) is out of bounds of buffer \"a\" (64 elements)");
  ASSERT_TRUE(g.launch(op("x")).ok());
  EXPECT_EQ(g.launch(op("x")).error().message(), "ops[1].name: duplicate op name \"x\"");
  EXPECT_EQ(g.wait("e9", 1).error().message(), "ops[1].wait: event \"e9\" is waited for before it is recorded");
  EXPECT_EQ(g.addBuffer("a", DType::F32, {1}).error().message(), "buffers.a: duplicate buffer \"a\"");
  EXPECT_EQ(g.addBuffer("z", DType::F32, {0}).error().message(), "buffers.z.shape[0]: dimension 0 must be >= 1");
  KernelDecl k = ew();
  k.name = "k2";
  k.source = "kernels/none.cpp";
  EXPECT_NE(g.addKernel(k).error().message().find("kernels.k2.source: source file"), std::string::npos);
  EXPECT_NE(g.addBuiltinKernel("b", "no_such_builtin").error().message().find("unknown builtin kernel"),
            std::string::npos);
  Status badOptions = g.setOptions("early-start=5");
  ASSERT_FALSE(badOptions.ok());
  EXPECT_EQ(badOptions.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(badOptions.error().message().find("option \"early-start\": invalid value \"5\" (accepted: 0, 1, 2)"),
            std::string::npos)
      << badOptions.error().message();
  {
    Scope bad(g, "bad", "nope=1");
    EXPECT_FALSE(bad.status().ok());
    Status inside = g.launch(op("y"));
    ASSERT_FALSE(inside.ok());
    EXPECT_NE(inside.error().message().find("scopes.bad.options: unknown option \"nope\""), std::string::npos);
  }
  EXPECT_TRUE(g.launch(op("y")).ok());
}

TEST_F(GraphTest, WriteJsonReadsBackEqual) {
  uint32_t s1 = g.newStream();
  {
    Scope sc(g, "sk1", "stream-fusion=1");
    ASSERT_TRUE(g.launch(op("p0")).ok());
    ASSERT_TRUE(g.record("e0", 0).ok());
    ASSERT_TRUE(g.wait("e0", s1).ok());
    LaunchDesc d = op("p1", "b", "a");
    d.stream = s1;
    d.macros = {{"TILE", "8"}};
    d.args[0].second = arg("b", 8, 16);
    ASSERT_TRUE(g.launch(d).ok());
    LaunchDesc f = op("p2");
    f.fusible = false;
    ASSERT_TRUE(g.launch(f).ok());
  }
  std::string text = g.writeJson();
  auto back = parseOpList(text, "", g.opList().baseDir);
  ASSERT_TRUE(back.ok()) << back.error().message() << "\n" << text;
  EXPECT_TRUE(*back == g.opList()) << text;
}

}  // namespace
}  // namespace sk
