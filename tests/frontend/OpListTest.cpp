// Op list v1: parser, writer, validator, limits, builtins (DESIGN section 3).
// Every malformed-input rule is checked to name the file and the JSON path.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

#include "frontend/OpListInternal.h"
#include "superkernel/frontend/OpList.h"

namespace sk {
namespace oplist_test {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const fs::path kFrontendData = fs::path(SK_SOURCE_ROOT) / "tests/frontend/data";
const fs::path kPlanData = fs::path(SK_SOURCE_ROOT) / "tests/plan/data";

ojson base() {
  return ojson::parse(R"({
    "format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
    "kernels": {"ew": {"source": "kernels/k.cpp", "entry": "ew", "params": [
      {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
      {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
      {"name": "n", "kind": "scalar", "dtype": "i32"}]}},
    "buffers": {"a": {"dtype": "f32", "shape": [64]}, "b": {"dtype": "f32", "shape": [8, 8]},
                "h": {"dtype": "f16", "shape": [64]}},
    "ops": [{"name": "A", "kernel": "ew", "block_dim": 4, "scope": "s", "args": {"x": "a", "y": "b", "n": 64}}]
  })");
}

Expected<OpList> parse(const std::string& text, const OpListLimits& limits = {}) {
  return parseOpList(text, "tests/x.json", kPlanData, limits);
}

// The error message for a mutated base document.
std::string errorOf(const ojson& j, const OpListLimits& limits = {}) {
  auto l = parse(j.dump(), limits);
  EXPECT_FALSE(l.ok()) << j.dump();
  if (l) return "";
  EXPECT_EQ(l.error().kind(), ErrorKind::BadInput);
  return l.error().message();
}

#define EXPECT_ERROR(j, expected) EXPECT_EQ(errorOf(j), std::string("tests/x.json: ") + (expected))

TEST(OpList, BaseParses) {
  auto l = parse(base().dump());
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_EQ(l->ops.size(), 1u);
  EXPECT_EQ(l->buffers[1].elements(), 64u);
  EXPECT_EQ(l->kernels[0].sourcePath, (kPlanData / "kernels/k.cpp").lexically_normal());
}

TEST(OpList, ArgErrorsNamePath) {
  ojson j = base();
  j["ops"][0]["args"]["y"] = "c_out";
  EXPECT_ERROR(j, "ops[0].args.y: unknown buffer \"c_out\"");
  j = base();
  j["ops"][0]["args"].erase("n");
  EXPECT_ERROR(j, "ops[0].args: missing argument \"n\" (scalar parameter of kernel \"ew\")");
  j = base();
  j["ops"][0]["args"]["z"] = "a";
  EXPECT_ERROR(j, "ops[0].args.z: kernel \"ew\" has no parameter \"z\" (parameters: x, y, n)");
  j = base();
  j["ops"][0]["args"]["x"] = 3;
  EXPECT_ERROR(j, "ops[0].args.x: parameter \"x\" is a buffer (f32), got a number");
  j = base();
  j["ops"][0]["args"]["n"] = "a";
  EXPECT_ERROR(j, "ops[0].args.n: parameter \"n\" is a scalar (i32), got buffer \"a\"");
  j = base();
  j["ops"][0]["args"]["x"] = "h";
  EXPECT_ERROR(j, "ops[0].args.x: buffer \"h\" is f16 but parameter \"x\" of kernel \"ew\" is f32");
  j = base();
  j["ops"][0]["args"]["n"] = 1.5;
  EXPECT_ERROR(j, "ops[0].args.n: parameter \"n\" is i32, got a floating-point number");
  j = base();
  j["ops"][0]["args"]["n"] = int64_t{1} << 40;
  EXPECT_ERROR(j, "ops[0].args.n: value 1099511627776 out of range of i32");
  j = base();
  j["ops"][0]["args"]["x"] = true;
  EXPECT_NE(errorOf(j).find("ops[0].args.x: expected a buffer name, a view"), std::string::npos);
}

TEST(OpList, Views) {
  ojson j = base();
  j["ops"][0]["args"]["y"] = {{"buffer", "b"}, {"offset", 32}, {"count", 32}};
  EXPECT_TRUE(parse(j.dump()).ok());
  j["ops"][0]["args"]["y"] = {{"buffer", "b"}, {"offset", 40}, {"count", 32}};
  EXPECT_ERROR(j, "ops[0].args.y: view [40, +32) is out of bounds of buffer \"b\" (64 elements)");
  j["ops"][0]["args"]["y"] = {{"buffer", "b"}, {"offset", 0}, {"count", 0}};
  EXPECT_ERROR(j, "ops[0].args.y: view of buffer \"b\" has count 0");
  j["ops"][0]["args"]["y"] = {{"buffer", "b"}, {"offset", -1}, {"count", 1}};
  EXPECT_ERROR(j, "ops[0].args.y.offset: expected a non-negative integer, got -1");
  j["ops"][0]["args"]["y"] = {{"buffer", "b"}, {"offset", 18446744073709551615ull}, {"count", 2}};
  EXPECT_NE(errorOf(j).find("out of bounds"), std::string::npos);  // offset + count wraps: still rejected
  j["ops"][0]["args"]["y"] = {{"buffer", "b"}, {"count", 1}, {"stride", 2}};
  EXPECT_ERROR(j, "ops[0].args.y.stride: unknown key \"stride\" (expected one of: buffer, offset, count)");
  j["ops"][0]["args"]["y"] = {{"buffer", "zz"}, {"count", 1}};
  EXPECT_ERROR(j, "ops[0].args.y: unknown buffer \"zz\"");
}

TEST(OpList, UnknownKeysEverywhere) {
  ojson j = base();
  j["extra"] = 1;
  EXPECT_ERROR(j, "extra: unknown key \"extra\" (expected one of: format, version, target, arch, options, kernels, "
                  "buffers, ops, scopes, groups)");
  j = base();
  j["kernels"]["ew"]["srcs"] = "x";
  EXPECT_NE(errorOf(j).find("tests/x.json: kernels.ew.srcs: unknown key \"srcs\""), std::string::npos);
  // "sources" (one per target, DESIGN section 9) is known but replaces "source".
  j = base();
  j["kernels"]["ew"]["sources"] = {{"cpu", "kernels/k.cpp"}};
  EXPECT_NE(errorOf(j).find("kernels.ew: give \"source\" or \"sources\" (one per target), not both"),
            std::string::npos)
      << errorOf(j);
  j["kernels"]["ew"].erase("source");
  j["kernels"]["ew"]["sources"] = "x";
  EXPECT_NE(errorOf(j).find("kernels.ew.sources: expected an object"), std::string::npos) << errorOf(j);
  j = base();
  j["kernels"]["ew"]["params"][1]["layout"] = "x";
  EXPECT_NE(errorOf(j).find("tests/x.json: kernels.ew.params[1].layout: unknown key"), std::string::npos);
  j = base();
  j["buffers"]["a"]["strides"] = ojson::array();
  EXPECT_NE(errorOf(j).find("tests/x.json: buffers.a.strides: unknown key"), std::string::npos);
  j = base();
  j["ops"][0]["priority"] = 1;
  EXPECT_NE(errorOf(j).find("tests/x.json: ops[0].priority: unknown key"), std::string::npos);
  j = base();
  j["ops"].push_back({{"record", "e"}, {"stream", 0}, {"flags", 1}});
  EXPECT_NE(errorOf(j).find("tests/x.json: ops[1].flags: unknown key"), std::string::npos);
  j = base();
  j["scopes"] = {{"s", {{"option", "x"}}}};
  EXPECT_NE(errorOf(j).find("tests/x.json: scopes.s.option: unknown key"), std::string::npos);
  j = base();
  j["kernels"]["sc"] = {{"builtin", "scale_f32"}, {"entry", "x"}};
  EXPECT_NE(errorOf(j).find("tests/x.json: kernels.sc.entry: unknown key \"entry\" (expected one of: builtin, macros)"),
            std::string::npos);
}

TEST(OpList, KernelDeclarationErrors) {
  ojson j = base();
  j["kernels"]["ew"]["params"][0]["dtype"] = "f128";
  EXPECT_NE(errorOf(j).find("tests/x.json: kernels.ew.params[0].dtype: unknown dtype \"f128\""), std::string::npos);
  j = base();
  j["kernels"]["ew"]["params"][0]["access"] = "rw";
  EXPECT_NE(errorOf(j).find("kernels.ew.params[0].access: unknown access \"rw\""), std::string::npos);
  j = base();
  j["kernels"]["ew"]["params"][2]["partition"] = "block";
  EXPECT_ERROR(j, "kernels.ew.params[2].partition: only buffer parameters take \"partition\"");
  j = base();
  j["kernels"]["ew"]["params"][1]["name"] = "x";
  EXPECT_ERROR(j, "kernels.ew.params[1].name: duplicate parameter \"x\"");
  j = base();
  j["kernels"]["ew"]["entry"] = "bad-name";
  EXPECT_ERROR(j, "kernels.ew.entry: entry \"bad-name\" is not a C identifier");
  j = base();
  j["kernels"]["ew"]["source"] = "kernels/missing.cpp";
  EXPECT_ERROR(j, "kernels.ew.source: source file \"" + (kPlanData / "kernels/missing.cpp").lexically_normal().string() +
                      "\" not found");
  j = base();
  j["kernels"]["ew"]["macros"] = {{"1X", "2"}};
  EXPECT_ERROR(j, "kernels.ew.macros.1X: macro name \"1X\" is not a C identifier");
  j = base();
  j["kernels"]["ew"]["macros"] = {{"X", "a\nb"}};
  EXPECT_ERROR(j, "kernels.ew.macros.X: macro value \"a\\x0ab\" is not a single number or identifier (macros are "
                  "static shapes and switches: -DN=4096, -DT=float)");
  j = base();
  j["kernels"]["ew"]["core_type"] = "scalar";
  EXPECT_NE(errorOf(j).find("kernels.ew.core_type: unknown core_type"), std::string::npos);
  j = base();
  j["kernels"]["ew"].erase("entry");
  EXPECT_ERROR(j, "kernels.ew: missing key \"entry\"");
  j = base();
  j["ops"][0]["kernel"] = "nope";
  EXPECT_ERROR(j, "ops[0].kernel: unknown kernel \"nope\"");
}

TEST(OpList, OpErrors) {
  ojson j = base();
  j["ops"][0]["block_dim"] = 0;
  EXPECT_ERROR(j, "ops[0].block_dim: integer 0 out of range 1..65536");
  j["ops"][0]["block_dim"] = 70000;
  EXPECT_ERROR(j, "ops[0].block_dim: integer 70000 out of range 1..65536");
  j["ops"][0]["block_dim"] = 4.0;
  EXPECT_ERROR(j, "ops[0].block_dim: expected an integer in 1..65536, got 4.0");
  j = base();
  j["ops"][0]["stream"] = 5000;
  EXPECT_ERROR(j, "ops[0].stream: integer 5000 out of range 0..1023");
  j = base();
  j["ops"].push_back(j["ops"][0]);
  EXPECT_ERROR(j, "ops[1].name: duplicate op name \"A\" (also ops[0])");
  j = base();
  j["ops"].push_back({{"wait", "e0"}, {"stream", 1}});
  j["ops"].push_back({{"record", "e0"}, {"stream", 0}});
  EXPECT_ERROR(j, "ops[1].wait: event \"e0\" is waited for before it is recorded");
  j = base();
  j["ops"].push_back({{"wait", "e0"}, {"record", "e0"}});
  EXPECT_ERROR(j, "ops[1]: an op is a record or a wait, not both");
  j = base();
  j["ops"][0]["scope"] = 3;
  EXPECT_ERROR(j, "ops[0].scope: expected a string, got number");
  j = base();
  j["ops"][0]["fusible"] = "no";
  EXPECT_ERROR(j, "ops[0].fusible: expected true or false, got string");
  j = base();
  j["ops"][0].erase("args");
  EXPECT_ERROR(j, "ops[0]: missing key \"args\"");
}

TEST(OpList, BufferErrors) {
  ojson j = base();
  j["buffers"]["a"]["shape"] = {0};
  EXPECT_ERROR(j, "buffers.a.shape[0]: integer 0 out of range 1..9223372036854775807");
  j["buffers"]["a"]["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_ERROR(j, "buffers.a.shape: element count overflows 64 bits");
  j["buffers"]["a"]["shape"] = {int64_t{1} << 31, int64_t{1} << 31};
  EXPECT_ERROR(j, "buffers.a.shape: byte size overflows 64 bits");
  j["buffers"]["a"]["shape"] = {int64_t{1} << 33};
  EXPECT_ERROR(j, "buffers.a.shape: buffer of 34359738368 bytes exceeds the limit of 17179869184 bytes");
  j = base();
  OpListLimits small;
  small.maxTotalBytes = 400;
  EXPECT_EQ(errorOf(j, small), "tests/x.json: buffers.b.shape: all buffers together exceed the limit of 400 bytes");
  j = base();
  j["buffers"]["a"]["init"] = "twos";
  EXPECT_NE(errorOf(j).find("buffers.a.init: unknown init \"twos\""), std::string::npos);
  j["buffers"]["a"]["init"] = {{"file", "nope.bin"}};
  EXPECT_ERROR(j, "buffers.a.init.file: init file \"" + (kPlanData / "nope.bin").string() + "\" not found");
  j["buffers"]["a"]["dtype"] = "float";
  EXPECT_NE(errorOf(j).find("buffers.a.dtype: unknown dtype \"float\""), std::string::npos);
}

TEST(OpList, TopLevelErrors) {
  ojson j = base();
  j["version"] = 2;
  EXPECT_ERROR(j, "version: unsupported version 2 (supported: 1)");
  j = base();
  j["format"] = "other";
  EXPECT_ERROR(j, "format: unsupported format \"other\" (expected \"superkernel.oplist\")");
  j = base();
  j.erase("format");
  EXPECT_ERROR(j, "missing key \"format\" (expected \"superkernel.oplist\")");
  j = base();
  j["target"] = "tpu";
  EXPECT_ERROR(j, "target: unknown target \"tpu\" (accepted: ascend, ascend-sim, cpu, cuda, cuda-sim)");
  j = base();
  j["options"] = "early-start=9";
  EXPECT_ERROR(j, "options: option \"early-start\": invalid value \"9\" (accepted: 0, 1, 2)");
  j = base();
  j["scopes"] = {{"s", {{"options", "bogus=1"}}}};
  EXPECT_NE(errorOf(j).find("tests/x.json: scopes.s.options: unknown option \"bogus\""), std::string::npos);
  EXPECT_EQ(parse("[1]").error().message(), "tests/x.json: expected a JSON object at top level, got array");
  std::string bad = parse("{\"format\": ").error().message();
  EXPECT_EQ(bad.rfind("tests/x.json: invalid JSON: parse error at line 1, column 12", 0), 0u) << bad;
}

TEST(OpList, DuplicateKeysRejected) {
  std::string text = base().dump();
  text.replace(text.find("\"block_dim\":4"), 13, "\"block_dim\":4,\"block_dim\":8");
  EXPECT_EQ(parse(text).error().message(), "tests/x.json: ops[0].block_dim: duplicate key \"block_dim\"");
}

TEST(OpList, Limits) {
  OpListLimits l;
  l.maxFileBytes = 100;
  EXPECT_NE(parse(base().dump(), l).error().message().find("over the limit of 100"), std::string::npos);
  // Depth is refused while parsing, before a deep value is built: 100k levels.
  std::string deep = "{\"format\":\"superkernel.oplist\",\"version\":1,\"x\":" + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  EXPECT_EQ(parse(deep).error().message(), "tests/x.json: x[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nesting deeper "
                                           "than the limit of 16");
  l = OpListLimits{};
  l.maxOps = 1;
  ojson j = base();
  j["ops"].push_back({{"record", "e"}});
  EXPECT_EQ(errorOf(j, l), "tests/x.json: ops: 2 ops, over the limit of 1");
  l = OpListLimits{};
  l.maxBuffers = 2;
  EXPECT_EQ(errorOf(base(), l), "tests/x.json: buffers: 3 buffers, over the limit of 2");
  l = OpListLimits{};
  l.maxParams = 2;
  EXPECT_EQ(errorOf(base(), l), "tests/x.json: kernels.ew.params: 3 parameters, over the limit of 2");
  l = OpListLimits{};
  l.maxKernels = 0;
  EXPECT_EQ(errorOf(base(), l), "tests/x.json: kernels: 1 kernels, over the limit of 0");
}

TEST(OpList, HostileInputsNeverThrow) {
  for (const char* t : {"", "{", "null", "\"x\"", "{\"format\":\"superkernel.oplist\",\"version\":1e400}",
                        "{\"format\":\"superkernel.oplist\",\"version\":18446744073709551617}",
                        "{\"format\":\"superkernel.oplist\",\"version\":1,\"ops\":[{\"name\":\"\\u0000\"}]}",
                        "\xff\xfe", "{\"a\":\"\xc3\"}"}) {
    auto l = parse(t);
    ASSERT_FALSE(l.ok()) << t;
    // Rejected as input, naming the file: not an internal error from a caught exception.
    EXPECT_EQ(l.error().kind(), ErrorKind::BadInput) << t << ": " << l.error().message();
    EXPECT_EQ(l.error().message().rfind("tests/x.json", 0), 0u) << t << ": " << l.error().message();
  }
}

TEST(OpList, WriterRoundTrip) {
  ojson j = base();
  j["options"] = "early-start=2";
  j["kernels"]["ew"]["macros"] = {{"TILE", 64}};
  j["kernels"]["ew"]["early_start"] = true;
  j["buffers"]["a"]["init"] = "zeros";
  j["buffers"]["h"]["init"] = "iota";
  j["ops"][0]["args"]["y"] = {{"buffer", "b"}, {"offset", 8}, {"count", 16}};
  j["ops"][0]["macros"] = {{"N", "64"}};
  j["ops"].push_back({{"record", "e0"}, {"stream", 0}});
  j["ops"].push_back({{"wait", "e0"}, {"stream", 2}});
  j["ops"].push_back({{"name", "B"}, {"kernel", "ew"}, {"block_dim", 1}, {"scope", nullptr}, {"fusible", true},
                      {"args", {{"x", "a"}, {"y", "a"}, {"n", 7}}}});
  j["kernels"]["f"] = {{"source", "kernels/k.cpp"}, {"entry", "f"},
                       {"params", {{{"name", "s"}, {"kind", "scalar"}, {"dtype", "f64"}}}}};
  j["ops"].push_back({{"name", "C"}, {"kernel", "f"}, {"block_dim", 2}, {"args", {{"s", 1.0}}}});
  j["ops"].push_back({{"name", "D"}, {"kernel", "f"}, {"block_dim", 2}, {"args", {{"s", 0.1}}}});
  j["scopes"] = {{"s", {{"options", "debug-sync-all=1"}}}, {"t", ojson::object()}};
  auto a = parse(j.dump());
  ASSERT_TRUE(a.ok()) << a.error().message();
  std::string text = writeOpList(*a);
  auto b = parse(text);
  ASSERT_TRUE(b.ok()) << b.error().message() << "\n" << text;
  EXPECT_TRUE(*a == *b);
  EXPECT_EQ(writeOpList(*b), text);
  EXPECT_TRUE(std::holds_alternative<double>(b->ops[4].args[0].second.scalar()));
  EXPECT_EQ(std::get<double>(b->ops[5].args[0].second.scalar()), 0.1);
  EXPECT_TRUE(b->ops[3].scopeNull);
  EXPECT_TRUE(b->buffers[0].init.explicitZeros);
  EXPECT_EQ(b->kernels[0].macros.at("TILE"), "64");
}

class BuiltinFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("SK_KERNELS_DIR");
    if (old) saved_ = old;
    had_ = old != nullptr;
    setenv("SK_KERNELS_DIR", (kFrontendData / "kernels").c_str(), 1);
  }
  void TearDown() override {
    if (had_) setenv("SK_KERNELS_DIR", saved_.c_str(), 1);
    else unsetenv("SK_KERNELS_DIR");
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(BuiltinFixture, DesignExampleParsesAndRoundTrips) {
  auto l = loadOpList(kFrontendData / "design_example.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  EXPECT_EQ(l->kernels.size(), 2u);
  EXPECT_EQ(l->kernels[1].builtin, "scale_f32");
  EXPECT_EQ(l->ops.size(), 5u);
  EXPECT_EQ(l->ops[1].args[2].second.buffer().offset, 4096u);
  EXPECT_FALSE(l->ops[4].fusible);
  auto again = parseOpList(writeOpList(*l), l->origin, l->baseDir);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(*again == *l);
}

TEST_F(BuiltinFixture, FindBuiltin) {
  auto k = findBuiltinKernel("scale_f32");
  ASSERT_TRUE(k.ok()) << k.error().message();
  EXPECT_EQ(k->entry, "scale_f32");
  EXPECT_EQ(k->builtin, "scale_f32");
  EXPECT_TRUE(k->sourcePath.is_absolute());
  EXPECT_TRUE(fs::exists(k->sourcePath));
  EXPECT_EQ(builtinKernelNames(), std::vector<std::string>{"scale_f32"});
  EXPECT_EQ(findBuiltinKernel("nope").error().message(), "unknown builtin kernel \"nope\" (available: scale_f32)");
  EXPECT_NE(findBuiltinKernel("../x").error().message().find("invalid builtin kernel name"), std::string::npos);
  ojson j = base();
  j["kernels"]["sc"] = {{"builtin", "nope"}};
  EXPECT_ERROR(j, "kernels.sc.builtin: unknown builtin kernel \"nope\" (available: scale_f32)");
}

// A builtin referenced through the C++ API keeps the macros set on the
// referring declaration (over the builtin's own).
TEST_F(BuiltinFixture, BuiltinKeepsTheDeclarationsMacros) {
  KernelDecl ref;
  ref.name = "sc";
  ref.builtin = "scale_f32";
  ref.macros["SK_KERNELS_BASELINE"] = "1";
  auto k = detail::resolveKernel(ref, "cpu");
  ASSERT_TRUE(k.ok()) << k.error().message();
  EXPECT_EQ(k->name, "sc");
  EXPECT_EQ(k->entry, "scale_f32");
  ASSERT_EQ(k->macros.count("SK_KERNELS_BASELINE"), 1u);
  EXPECT_EQ(k->macros.at("SK_KERNELS_BASELINE"), "1");
}

// ... and the op-list text says so: written and parsed back, the macros are still there (every key computed
// from the text — cache metadata, the Session's immediate-launch plans — tells the two declarations apart).
TEST_F(BuiltinFixture, BuiltinMacrosSurviveWritingAndParsing) {
  ojson j = base();
  j["kernels"]["sc"] = {{"builtin", "scale_f32"}, {"macros", {{"SK_KERNELS_BASELINE", "1"}}}};
  auto l = parse(j.dump());
  ASSERT_TRUE(l.ok()) << l.error().message();
  auto sc = [](const OpList& list) { return *std::find_if(list.kernels.begin(), list.kernels.end(),
                                                         [](const KernelDecl& k) { return k.name == "sc"; }); };
  ASSERT_EQ(sc(*l).macros, (std::map<std::string, std::string>{{"SK_KERNELS_BASELINE", "1"}}));
  const std::string text = writeOpList(*l);
  EXPECT_NE(text.find("SK_KERNELS_BASELINE"), std::string::npos) << text;
  auto back = parse(text);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(sc(*back).macros, sc(*l).macros);
  EXPECT_TRUE(*back == *l);
  // Still nothing else next to "builtin"; and its macros are checked like any kernel's.
  j["kernels"]["sc"] = {{"builtin", "scale_f32"}, {"entry", "x"}};
  auto withEntry = parse(j.dump());
  ASSERT_FALSE(withEntry.ok());
  EXPECT_EQ(withEntry.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(withEntry.error().message().find("kernels.sc"), std::string::npos) << withEntry.error().message();
  EXPECT_NE(withEntry.error().message().find("entry"), std::string::npos) << withEntry.error().message();
  j["kernels"]["sc"] = {{"builtin", "scale_f32"}, {"macros", {{"sk_spin", "1"}}}};
  auto bad = parse(j.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("belongs to the superkernel runtime"), std::string::npos)
      << bad.error().message();
}

// A scalar parameter is the macro SK_<NAME> where scalars are compiled in (ascend): one that would switch off
// a runtime header (SK_ASCEND_KERNEL_H) or become the same macro as another scalar is bad input.
TEST(OpList, ScalarParametersObeyTheMacroRules) {
  ojson j = base();
  j["kernels"]["ew"]["params"][2]["name"] = "ascend_kernel_h";
  j["ops"][0]["args"] = {{"x", "a"}, {"y", "b"}, {"ascend_kernel_h", 64}};
  const std::string e = errorOf(j);
  EXPECT_NE(e.find("kernels.ew.params[2].name: scalar parameter \"ascend_kernel_h\" becomes the macro "
                   "SK_ASCEND_KERNEL_H on targets that compile scalars in (ascend): macro name"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("belongs to the superkernel runtime"), std::string::npos) << e;

  ojson k = base();
  k["kernels"]["ew"]["params"].push_back({{"name", "N"}, {"kind", "scalar"}, {"dtype", "i32"}});
  k["ops"][0]["args"]["N"] = 64;
  const std::string c = errorOf(k);
  EXPECT_NE(c.find("scalar parameter \"N\" becomes the macro SK_N, as another scalar parameter does"),
            std::string::npos)
      << c;
}

// The library's own builtin set must be declarations this parser accepts.
TEST(OpList, RealBuiltinsParse) {
  fs::path real = fs::path(SK_SOURCE_ROOT) / "kernels" / "cpu";
  for (const auto& e : fs::directory_iterator(real)) {
    if (e.path().extension() != ".json") continue;
    auto k = detail::findBuiltinKernelIn(real, e.path().stem().string());
    EXPECT_TRUE(k.ok()) << e.path() << ": " << (k ? "" : k.error().message());
  }
}

}  // namespace oplist_test
}  // namespace sk

// One dtype table serves the validator, the planner and codegen.
TEST(OpListDTypes, RangesAndKinds) {
  for (sk::DType t : {sk::DType::F32, sk::DType::F64, sk::DType::F16, sk::DType::BF16}) {
    EXPECT_TRUE(sk::dtypeIsFloat(t)) << sk::dtypeName(t);
  }
  EXPECT_FALSE(sk::dtypeIsFloat(sk::DType::I32));
  EXPECT_FALSE(sk::dtypeIsFloat(sk::DType::Bool));
  EXPECT_TRUE(sk::dtypeIntRange(sk::DType::I8) == (std::pair<__int128, __int128>{-128, 127}));
  EXPECT_TRUE(sk::dtypeIntRange(sk::DType::Bool) == (std::pair<__int128, __int128>{0, 1}));
  EXPECT_TRUE(sk::dtypeIntRange(sk::DType::U64).second == static_cast<__int128>(UINT64_MAX));
  EXPECT_TRUE(sk::dtypeIntRange(sk::DType::I64).first == static_cast<__int128>(INT64_MIN));
  EXPECT_STREQ(sk::dtypeCType(sk::DType::BF16), "uint16_t");
}
