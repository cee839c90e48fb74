// driver/LocalizeSymbols: a cached kernel object exports its entry only, with
// both objcopy flavours; and the driver's last gate on argv inputs.
#include "backends/cpu/LocalizeSymbols.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cache/TestUtil.h"
#include "superkernel/driver/Driver.h"

namespace sk {
namespace {

const char* kSource = R"(#include "superkernel/cpu/kernel.h"
float helper(float v) { return v + 1.0f; }
__attribute__((noinline)) inline float inl(float v) { return v * 2.0f; }
int counter;
SK_KERNEL void loc_kernel(const sk_ctx* ctx, float* z, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) z[i] = inl(helper(z[i]));
  ++counter;
}
)";

KernelVariant variant(const test::TempDir& dir) {
  test::writeFile(dir / "loc.cpp", kSource);
  KernelVariant v;
  v.decl.name = "loc";
  v.decl.entry = "loc_kernel";
  v.decl.sourcePath = dir / "loc.cpp";
  v.symbol = "loc_kernel__v0123456789ab";
  return v;
}

std::shared_ptr<Cache> cacheIn(const test::TempDir& dir) {
  CacheConfig c;
  c.root = dir / "cache";
  return *Cache::open(c);
}

TEST(LocalizeSymbols, ObjectsExportOnlyTheirEntry) {
  for (const char* objcopy : {"llvm-objcopy", "objcopy"}) {
    if (findExecutable(objcopy).empty()) continue;
    SCOPED_TRACE(objcopy);
    ::setenv("SK_OBJCOPY", objcopy, 1);
    auto tc = findToolchain();
    ASSERT_TRUE(tc) << tc.error().message();
    test::TempDir dir("loc");
    Driver d(*tc, cacheIn(dir));
    auto obj = d.compileObject(variant(dir), Options{});
    ASSERT_TRUE(obj) << obj.error().message();
    auto globals = definedGlobalSymbols(*obj->bytes);
    ASSERT_TRUE(globals) << globals.error().message();
    EXPECT_EQ(*globals, std::vector<std::string>{"loc_kernel__v0123456789ab"});
    EXPECT_GT(obj->symbolSize, 0u);  // the entry is still there, with its size
  }
  ::unsetenv("SK_OBJCOPY");
}

TEST(LocalizeSymbols, TheToolIsPartOfTheObjectKey) {
  auto tc = findToolchain();
  ASSERT_TRUE(tc) << tc.error().message();
  test::TempDir dir("lockey");
  Driver d(*tc, cacheIn(dir));
  KernelVariant v = variant(dir);
  auto tool = findObjcopy(*tc);
  ASSERT_TRUE(tool) << tool.error().message();
  EXPECT_NE(tool->identity.find("localize-v1"), std::string::npos);
  ::setenv("SK_OBJCOPY", "/nonexistent/objcopy", 1);
  auto missing = d.objectKey(v, Options{});
  ::unsetenv("SK_OBJCOPY");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("SK_OBJCOPY=/nonexistent/objcopy not found"), std::string::npos);
}

TEST(DriverGate, CompileOptionsAndMacrosOutsideTheGrammarNeverReachArgv) {
  auto tc = findToolchain();
  ASSERT_TRUE(tc) << tc.error().message();
  test::TempDir dir("gate");
  Driver d(*tc, cacheIn(dir));
  Options o;
  o.compileOptions = {"-O2", "-fplugin=./evil.so"};
  auto r = d.compileObjects({variant(dir)}, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(r.error().message().find("compile-options item \"-fplugin=./evil.so\" is not allowed"), std::string::npos)
      << r.error().message();
  KernelVariant v = variant(dir);
  v.macros = {{"N", "1); abort(); (0"}};
  auto m = d.compileObjects({v}, Options{});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(m.error().message().find("kernel 'loc': macro N: macro value"), std::string::npos) << m.error().message();
  auto sk = d.buildSuperKernel("int x;", {}, o, "{}");
  ASSERT_FALSE(sk);
  EXPECT_EQ(sk.error().kind(), ErrorKind::BadInput);
}

}  // namespace
}  // namespace sk
