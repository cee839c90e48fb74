// Fused sub-kernels must not collide (issue 10): kernel sources are written
// as separate programs, so two of them may define the same non-static
// helper, one source may hold two entries, and an inline helper may differ
// between macro variants of one kernel. Fused into one SuperKernel, each
// must still call its own code (on today's main these failed to link with
// "multiple definition", or silently shared one inline body).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>

#include "session/SessionFixture.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using testing::msg;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fmt::format("sk-collide-{}-{}", ::getpid(), counter()++);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// y[i] = f(x[i]) for a kernel `entry` in `file`; its helper adds `k`.
std::string kernelSource(const std::string& entry, const std::string& helperBody) {
  return fmt::format(R"(#include <superkernel/cpu/kernel.h>
float helper(float v) {{ {body} }}
float table[2] = {{1.0f, 2.0f}};
SK_KERNEL void {entry}(const sk_ctx* ctx, const float* x, float* y, int64_t n) {{
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = helper(x[i]) + table[1];
}}
)",
                     fmt::arg("entry", entry), fmt::arg("body", helperBody));
}

std::string kernelDecl(const std::string& source, const std::string& entry, const std::string& macros = "{}") {
  return fmt::format(R"({{"source": "{}", "entry": "{}", "macros": {}, "params": [
    {{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"}},
    {{"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"}},
    {{"name": "n", "kind": "scalar", "dtype": "i64"}}]}})",
                     source, entry, macros);
}

// Two chained ops k0: a -> b, k1: b -> c, fused in one scope; returns c.
Expected<std::vector<float>> runChain(const fs::path& dir, const std::string& kernels, const std::string& k0,
                                      const std::string& k1, const std::string& opMacros1 = "{}") {
  const std::string list = fmt::format(R"({{"format": "superkernel.oplist", "version": 1, "kernels": {{{kernels}}},
    "buffers": {{"a": {{"dtype": "f32", "shape": [32]}}, "b": {{"dtype": "f32", "shape": [32]}},
                 "c": {{"dtype": "f32", "shape": [32]}}}},
    "ops": [
      {{"name": "op0", "kernel": "{k0}", "block_dim": 2, "scope": "s", "args": {{"x": "a", "y": "b", "n": 32}}}},
      {{"name": "op1", "kernel": "{k1}", "block_dim": 4, "scope": "s", "macros": {m1},
        "args": {{"x": "b", "y": "c", "n": 32}}}}]}})",
                                       fmt::arg("kernels", kernels), fmt::arg("k0", k0), fmt::arg("k1", k1),
                                       fmt::arg("m1", opMacros1));
  write(dir / "list.json", list);
  SK_ASSIGN_OR_RETURN(OpList l, loadOpList(dir / "list.json"));
  Session& s = testing::sessionFor(2);
  SK_ASSIGN_OR_RETURN(CompiledPlan plan, s.compile(l));
  if (plan.steps.size() != 1) return internalError(fmt::format("expected one SuperKernel, got {}", plan.steps.size()));
  std::vector<float> a(32), b(32, 0.0f), c(32, 0.0f);
  for (int i = 0; i < 32; ++i) a[i] = static_cast<float>(i);
  void* ptrs[3] = {a.data(), b.data(), c.data()};
  SK_RETURN_IF_ERROR(s.run(plan, ptrs, 3));
  return c;
}

TEST(SymbolCollision, TwoSourcesDefineTheSameHelper) {
  TempDir d;
  write(d.path / "one.cpp", kernelSource("k_one", "return v + 10.0f;"));
  write(d.path / "two.cpp", kernelSource("k_two", "return v * 3.0f;"));
  auto c = runChain(d.path,
                    "\"one\": " + kernelDecl("one.cpp", "k_one") + ", \"two\": " + kernelDecl("two.cpp", "k_two"),
                    "one", "two");
  ASSERT_TRUE(c) << msg(c.error());
  for (int i = 0; i < 32; ++i) EXPECT_EQ((*c)[i], ((i + 10.0f) + 2.0f) * 3.0f + 2.0f) << i;
}

TEST(SymbolCollision, OneSourceDeclaresTwoEntries) {
  TempDir d;
  write(d.path / "both.cpp", R"(#include <superkernel/cpu/kernel.h>
float shared_helper(float v) { return v + 1.0f; }
SK_KERNEL void k_first(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = shared_helper(x[i]);
}
SK_KERNEL void k_second(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = shared_helper(x[i]) * 2.0f;
}
)");
  auto c = runChain(d.path,
                    "\"first\": " + kernelDecl("both.cpp", "k_first") + ", \"second\": " +
                        kernelDecl("both.cpp", "k_second"),
                    "first", "second");
  ASSERT_TRUE(c) << msg(c.error());
  for (int i = 0; i < 32; ++i) EXPECT_EQ((*c)[i], ((i + 1.0f) + 1.0f) * 2.0f) << i;
}

TEST(SymbolCollision, MacroVariantsKeepTheirOwnInlineHelper) {
  // One kernel, two macro values: the inline helper has one mangled name and
  // two bodies. Without per-object names the linker keeps one COMDAT copy.
  TempDir d;
  write(d.path / "var.cpp", R"(#include <superkernel/cpu/kernel.h>
__attribute__((noinline)) inline float addk(float v) { return v + (float)(ADDK); }
template <int N> __attribute__((noinline)) float twice(float v) { return v * (float)N + (float)(ADDK); }
SK_KERNEL void k_var(const sk_ctx* ctx, const float* x, float* y, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) y[i] = twice<2>(addk(x[i]));
}
)");
  auto c = runChain(d.path, "\"var\": " + kernelDecl("var.cpp", "k_var", R"({"ADDK": "1"})"), "var", "var",
                    R"({"ADDK": "100"})");
  ASSERT_TRUE(c) << msg(c.error());
  for (int i = 0; i < 32; ++i) {
    const float b = (i + 1.0f) * 2.0f + 1.0f;
    EXPECT_EQ((*c)[i], (b + 100.0f) * 2.0f + 100.0f) << i;
  }
}

}  // namespace
}  // namespace sk
