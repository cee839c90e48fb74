// Strings that become compiler argv items (macros, compile-options, arch)
// are checked against their grammar with an error naming the JSON path, in
// an op-list file and equally through the C++ Graph API (issue 10).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "superkernel/superkernel.h"

namespace sk {
namespace input_grammar_path_test {
using nlohmann::json;

json base() {
  return json::parse(R"({"format": "superkernel.oplist", "version": 1,
    "kernels": {"add": {"builtin": "add_f32"}},
    "buffers": {"x": {"dtype": "f32", "shape": [64]}, "y": {"dtype": "f32", "shape": [64]}},
    "ops": [{"name": "a0", "kernel": "add", "block_dim": 2, "scope": "s",
             "args": {"x": "x", "y": "x", "z": "y", "n": 64}}]})");
}

std::string errorOf(const json& j) {
  auto l = parseOpList(j.dump(), "x.json", ".");
  if (l) return "accepted";
  EXPECT_EQ(l.error().kind(), ErrorKind::BadInput) << l.error().message();
  return l.error().message();
}

TEST(InputGrammarPaths, MacrosInOps) {
  json j = base();
  j["ops"][0]["macros"] = {{"SK_N", "64); __builtin_trap(); (0"}};
  EXPECT_EQ(errorOf(j).rfind("x.json: ops[0].macros.SK_N: macro value \"64); __builtin_trap(); (0\" is not a single", 0),
            0u)
      << errorOf(j);
  j["ops"][0]["macros"] = {{"if", "1"}};
  EXPECT_EQ(errorOf(j), "x.json: ops[0].macros.if: macro name \"if\" is a C/C++ keyword");
  j["ops"][0]["macros"] = {{"sk_add_f32", "1"}};  // the builtin's entry: the driver's own -D
  EXPECT_EQ(errorOf(j), "x.json: ops[0].macros.sk_add_f32: macro name \"sk_add_f32\" belongs to the superkernel runtime");
  j["ops"][0]["macros"] = {{"SK_N", "64"}};
  EXPECT_EQ(errorOf(j), "accepted");
}

TEST(InputGrammarPaths, CompileOptionsInListAndScopeOptions) {
  json j = base();
  j["options"] = "early-start=1:compile-options=-O3,-fplugin=./evil.so";
  EXPECT_EQ(errorOf(j).rfind("x.json: options: compile-options item \"-fplugin=./evil.so\" is not allowed", 0), 0u)
      << errorOf(j);
  j = base();
  j["scopes"] = {{"s", {{"options", "compile-options=-Wl\\,-rpath\\,/tmp"}}}};
  EXPECT_EQ(errorOf(j).rfind("x.json: scopes.s.options: compile-options item \"-Wl,-rpath,/tmp\" is not allowed", 0), 0u)
      << errorOf(j);
  j = base();
  j["options"] = "compile-options=-DX=1";
  EXPECT_NE(errorOf(j).find("use the kernel's macros for -D"), std::string::npos) << errorOf(j);
  j["options"] = "compile-options=-O3,-ffast-math,-Wl\\,-z\\,now";
  EXPECT_EQ(errorOf(j), "accepted");
}

TEST(InputGrammarPaths, Arch) {
  json j = base();
  j["arch"] = "native -fplugin=x";
  EXPECT_EQ(errorOf(j), "x.json: arch: arch \"native -fplugin=x\" may contain only letters, digits and '._+-'");
}

TEST(InputGrammarPaths, GraphApiGetsTheSameChecks) {
  Graph g;
  ASSERT_TRUE(g.addBuiltinKernel("add", "add_f32"));
  ASSERT_TRUE(g.addBuffer("x", DType::F32, {64}));
  Status s = g.setOptions("compile-options=-include,/etc/passwd");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("options: compile-options item \"-include\" is not allowed"), std::string::npos)
      << s.error().message();
  s = g.record("e\nvil");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message(), "ops[0].record: name contains a control character");
  s = g.record("\xff");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message(), "ops[0].record: name is not valid UTF-8");
  {
    Scope bad(g, "s", "compile-options=-Xclang");
    EXPECT_FALSE(bad.status());
    Status l = g.launch({.name = "a0", .kernel = "add", .blockDim = 1,
                         .args = {{"x", arg("x")}, {"y", arg("x")}, {"z", arg("x")}, {"n", arg(64)}}, .macros = {}});
    ASSERT_FALSE(l);
    EXPECT_NE(l.error().message().find("scopes.s.options: compile-options item \"-Xclang\""), std::string::npos)
        << l.error().message();
  }
  {
    Scope bad(g, std::string("a\0b", 3));
    EXPECT_FALSE(bad.status());
  }
  Status l = g.launch({.name = "a1", .kernel = "add", .blockDim = 1,
                       .args = {{"x", arg("x")}, {"y", arg("x")}, {"z", arg("x")}, {"n", arg(64)}},
                       .macros = {{"SK_N", "64;"}}});
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().message().find("ops[0].macros.SK_N: macro value \"64;\""), std::string::npos)
      << l.error().message();
}

}  // namespace input_grammar_path_test
}  // namespace sk
