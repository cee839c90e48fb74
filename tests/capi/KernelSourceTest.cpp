// Kernel sources from memory (session/KernelSource.h): content-addressed
// storage, reuse, rejection of bad names, repair of a tampered file, and a
// kernel compiled and run from text through the C++ API.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "CompilerPresent.h"
#include "superkernel/session/KernelSource.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "sk-ksrc-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(KernelSource, StoresContentAddressedAndReuses) {
  TempDir d;
  auto a = storeKernelSource(d.path / "sources", "k.cpp", "int x;\n");
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->filename(), "k.cpp");
  EXPECT_EQ(slurp(*a), "int x;\n");
  struct stat st{};
  ASSERT_EQ(::stat(a->parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto again = storeKernelSource(d.path / "sources", "k.cpp", "int x;\n");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *a);
  auto other = storeKernelSource(d.path / "sources", "k.cpp", "int y;\n");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *a);
  auto renamed = storeKernelSource(d.path / "sources", "k.c", "int x;\n");
  ASSERT_TRUE(renamed.ok());
  EXPECT_NE(renamed->parent_path(), a->parent_path());
}

TEST(KernelSource, RepairsATamperedFile) {
  TempDir d;
  auto a = storeKernelSource(d.path, "k.c", "int x;\n");
  ASSERT_TRUE(a.ok());
  { std::ofstream(*a, std::ios::trunc) << "int evil;\n"; }
  auto b = storeKernelSource(d.path, "k.c", "int x;\n");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, *a);
  EXPECT_EQ(slurp(*b), "int x;\n");
}

TEST(KernelSource, RejectsNamesThatAreNotPlainSourceFiles) {
  TempDir d;
  for (const char* bad : {"", "../x.c", "a/b.c", "x.h", "x", "..", "x.c\n", "x y.c"}) {
    auto r = storeKernelSource(d.path, bad, "int x;");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind(), ErrorKind::BadInput) << bad;
  }
}

TEST(KernelSource, CompilesAndRunsAKernelGivenAsText) {
  TempDir d;
  SessionOptions so;
  so.cacheDir = d.path / "cache";
  so.workers = 2;
  auto session = Session::create(so);
  // Only an absent compiler skips (sktest::installed looks it up without the session's code).
  if (!session && !sktest::installed(sktest::defaultCompiler())) GTEST_SKIP() << session.error().message();
  ASSERT_TRUE(session.ok()) << session.error().message();
  std::vector<float> x(100), y(100);
  for (int i = 0; i < 100; ++i) x[i] = float(i);
  Graph g;
  KernelDecl k;
  k.name = "neg";
  k.source = "neg.cpp";
  k.entry = "neg";
  auto buffer = [](const char* name, Access access) {
    ParamDecl p;
    p.name = name;
    p.access = access;
    p.partition = Partition::Block;
    return p;
  };
  ParamDecl n;
  n.name = "n";
  n.kind = ParamKind::Scalar;
  n.dtype = DType::I64;
  k.params = {buffer("x", Access::Read), buffer("y", Access::Write), n};
  Status st = addKernelFromMemory(g, **session, k,
                                  "#include <superkernel/cpu/kernel.h>\n"
                                  "SK_KERNEL void neg(const sk_ctx* c, const float* x, float* y, int64_t n) {\n"
                                  "  int64_t b, e; sk_block_range(c, n, &b, &e);\n"
                                  "  for (int64_t i = b; i < e; ++i) y[i] = -x[i];\n}\n");
  ASSERT_TRUE(st.ok()) << st.error().message();
  ASSERT_TRUE(g.addBuffer("x", DType::F32, {100}, x.data()).ok());
  ASSERT_TRUE(g.addBuffer("y", DType::F32, {100}, y.data()).ok());
  {
    Scope scope(g, "s", "");
    LaunchDesc l;
    l.name = "neg0";
    l.kernel = "neg";
    l.blockDim = 3;
    l.args = {{"x", arg("x")}, {"y", arg("y")}, {"n", arg(100)}};
    ASSERT_TRUE(g.launch(l).ok());
  }
  auto plan = (*session)->compile(g);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_TRUE((*session)->run(*plan, g.hostPointers().data(), g.hostPointers().size()).ok());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(y[i], -float(i)) << i;
  // The stored file lives under the session's cache root.
  const std::string src = g.opList().kernels.at(0).sourcePath.string();
  EXPECT_EQ(src.rfind(((*session)->cache()->root() / "sources").string(), 0), 0u) << src;
}

}  // namespace
}  // namespace sk
