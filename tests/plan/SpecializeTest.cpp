// Variant specialisation (src/plan/Specialize.cpp): on a machine whose
// sub-kernels take scalars and block counts at compile time
// (MachineModel::staticArguments), ops that differ in scalars, in block count
// inside a SuperKernel, or in fused/unfused never share a variant; equal ops
// do; nothing changes on a machine without it.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <unordered_map>

#include "superkernel/plan/Plan.h"
#include "support/Fnv1a.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

constexpr const char* kList = R"({
  "format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
  "kernels": {"sc": {"source": "kernels/k.cpp", "entry": "sc", "params": [
    {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
    {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
    {"name": "n", "kind": "scalar", "dtype": "i64"},
    {"name": "alpha", "kind": "scalar", "dtype": "f32"}]}},
  "buffers": {"a": {"dtype": "f32", "shape": [1024]}, "b": {"dtype": "f32", "shape": [1024]},
              "c": {"dtype": "f32", "shape": [1024]}, "d": {"dtype": "f32", "shape": [1024]},
              "e": {"dtype": "f32", "shape": [1024]}},
  "ops": [
    {"name": "s0", "kernel": "sc", "block_dim": 4, "scope": "sk", "args": {"x": "a", "y": "b", "n": 1024, "alpha": 0.5}},
    {"name": "s1", "kernel": "sc", "block_dim": 4, "scope": "sk", "args": {"x": "b", "y": "c", "n": 1024, "alpha": 0.5}},
    {"name": "s2", "kernel": "sc", "block_dim": 4, "scope": "sk", "args": {"x": "c", "y": "d", "n": 1024, "alpha": 0.25}},
    {"name": "s3", "kernel": "sc", "block_dim": 2, "scope": "sk", "args": {"x": "d", "y": "e", "n": 1024, "alpha": 0.25}},
    {"name": "u0", "kernel": "sc", "block_dim": 4, "args": {"x": "a", "y": "b", "n": 1024, "alpha": 0.5}}
  ]})";

OpList list() {
  auto l = parseOpList(kList, "specialize.json", fs::path(SK_SOURCE_ROOT) / "tests/plan/data");
  EXPECT_TRUE(l.ok()) << (l ? "" : l.error().message());
  return l ? *l : OpList{};
}

FusionPlan planOn(bool staticArguments) {
  PlanConfig pc{MachineModel::singlePool("test", 8), true};
  pc.machine.staticArguments = staticArguments;
  auto p = planOpList(list(), Options{}, pc);
  EXPECT_TRUE(p.ok()) << (p ? "" : p.error().message());
  return p ? *p : FusionPlan{};
}

TEST(Specialize, OpsDifferingInScalarsOrBlocksGetTheirOwnVariant) {
  const FusionPlan p = planOn(true);
  ASSERT_EQ(p.steps.size(), 2u);
  const SuperKernelPlan& sk = p.steps[0];
  ASSERT_EQ(sk.ops.size(), 4u);
  auto var = [&](const PlannedOp& op) -> const KernelVariant& { return p.variants.at(op.variant); };
  EXPECT_EQ(sk.ops[0].variant, sk.ops[1].variant);  // equal scalars and blocks: one object
  EXPECT_NE(sk.ops[1].variant, sk.ops[2].variant);  // alpha differs
  EXPECT_NE(sk.ops[2].variant, sk.ops[3].variant);  // block count differs
  const PlannedOp& unfused = p.steps[1].ops.at(0);
  EXPECT_NE(unfused.variant, sk.ops[0].variant);    // same scalars, but an unfused launch
  for (const PlannedOp& op : sk.ops) {
    EXPECT_TRUE(var(op).specialised);
    EXPECT_EQ(var(op).staticBlocks, op.blockDim);
    ASSERT_EQ(var(op).staticScalars.size(), 2u);
    EXPECT_EQ(var(op).staticScalars[0], ScalarValue{int64_t{1024}});
  }
  EXPECT_EQ(var(sk.ops[2]).staticScalars[1], ScalarValue{0.25});
  EXPECT_EQ(var(unfused).staticBlocks, 0u);
  // Only referenced variants remain, symbols distinct.
  EXPECT_EQ(p.variants.size(), 4u);
  std::set<std::string> symbols;
  for (const KernelVariant& v : p.variants) EXPECT_TRUE(symbols.insert(v.symbol).second) << v.symbol;
}

// Two different specialisations whose 32-bit symbol hashes collide: the
// second gets the next free suffix instead of an internal error. The values
// of n that collide are searched here with the key Specialize.cpp hashes
// (base symbol, NUL, "i<n>;", the f32 alpha's double bits, blocks, own early
// start); if that key changes, the symbols below stop colliding and the test
// says so.
TEST(Specialize, CollidingHashesGetDistinctSymbols) {
  const std::string base = planOn(false).variants.at(0).symbol;
  const double alpha = 0.5;
  uint64_t bits;
  std::memcpy(&bits, &alpha, sizeof bits);
  auto hash32 = [&](int64_t n) {
    const std::string key = base + '\0' + "i" + std::to_string(n) + ";d" + std::to_string(bits) +
                            ";blocks=4;own_early_start=0";
    return static_cast<uint32_t>(fnv1a(key));
  };
  std::unordered_map<uint32_t, int64_t> seen;
  int64_t a = -1, b = -1;
  for (int64_t n = 1; n < 2'000'000 && a < 0; ++n) {
    auto [it, inserted] = seen.emplace(hash32(n), n);
    if (!inserted) a = it->second, b = n;
  }
  ASSERT_GE(a, 0) << "no 32-bit collision found";
  const std::string text = std::string(R"({
  "format": "superkernel.oplist", "version": 1, "target": "cpu", "arch": "native",
  "kernels": {"sc": {"source": "kernels/k.cpp", "entry": "sc", "params": [
    {"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
    {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
    {"name": "n", "kind": "scalar", "dtype": "i64"},
    {"name": "alpha", "kind": "scalar", "dtype": "f32"}]}},
  "buffers": {"a": {"dtype": "f32", "shape": [1024]}, "b": {"dtype": "f32", "shape": [1024]},
              "c": {"dtype": "f32", "shape": [1024]}},
  "ops": [
    {"name": "s0", "kernel": "sc", "block_dim": 4, "scope": "sk", "args": {"x": "a", "y": "b", "n": )") +
                           std::to_string(a) + R"(, "alpha": 0.5}},
    {"name": "s1", "kernel": "sc", "block_dim": 4, "scope": "sk", "args": {"x": "b", "y": "c", "n": )" +
                           std::to_string(b) + R"(, "alpha": 0.5}}
  ]})";
  auto l = parseOpList(text, "collide.json", fs::path(SK_SOURCE_ROOT) / "tests/plan/data");
  ASSERT_TRUE(l.ok()) << l.error().message();
  PlanConfig pc{MachineModel::singlePool("test", 8), true};
  pc.machine.staticArguments = true;
  auto p = planOpList(*l, Options{}, pc);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->steps.size(), 1u);
  const KernelVariant& v0 = p->variants.at(p->steps[0].ops.at(0).variant);
  const KernelVariant& v1 = p->variants.at(p->steps[0].ops.at(1).variant);
  EXPECT_EQ(v1.symbol, v0.symbol + "_1") << "n = " << a << " and " << b << " no longer collide";
  EXPECT_EQ(v0.staticScalars.at(0), ScalarValue{a});
  EXPECT_EQ(v1.staticScalars.at(0), ScalarValue{b});
}

TEST(Specialize, NothingChangesWithoutStaticArguments) {
  const FusionPlan p = planOn(false);
  ASSERT_EQ(p.variants.size(), 1u);
  EXPECT_FALSE(p.variants[0].specialised);
  for (const SuperKernelPlan& sk : p.steps)
    for (const PlannedOp& op : sk.ops) EXPECT_EQ(op.variant, 0u);
}

}  // namespace
}  // namespace sk
