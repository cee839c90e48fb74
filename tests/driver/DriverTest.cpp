#include "superkernel/driver/Driver.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "CompilerPresent.h"
#include "cache/TestUtil.h"
#include "superkernel/target/cpu/Cpu.h"
#include "backends/cpu/LoadedLibrary.h"
#include "superkernel/cpu/superkernel_rt.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace {

// The driver returns verified bytes; the cpu back end loads them.
struct LoadedRun {
  std::shared_ptr<const LoadedKernel> kernel;
  int operator()(uint32_t blockDim, void* stream, const sk_run_args* args) const {
    return cpuRunFunction(*kernel)(blockDim, stream, args);
  }
};
LoadedRun loadRun(const SuperKernelArtifact& a) {
  auto k = cpuLoad(*a.artifact);
  EXPECT_TRUE(k.ok()) << (k ? "" : k.error().message());
  return LoadedRun{k ? *k : nullptr};
}
namespace fs = std::filesystem;
using test::TempDir;

const char* kAddKernel = R"(#include "superkernel/cpu/kernel.h"
#include "scale.h"
SK_KERNEL void add_kernel(const sk_ctx* ctx, const float* x, float* z, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) z[i] = x[i] + (float)SCALE + EXTRA;
}
)";

const char* kCKernel = R"(#include "superkernel/cpu/kernel.h"
SK_KERNEL void twice_kernel(const sk_ctx* ctx, float* z, int64_t n) {
  int64_t b, e;
  sk_block_range(ctx, n, &b, &e);
  for (int64_t i = b; i < e; ++i) z[i] = z[i] * 2.0f;
}
)";

// What codegen emits, in miniature: declarations, a straight-line program,
// the exported run entry.
std::string superKernelSource(const std::string& addSym, const std::string& twiceSym) {
  return "#include \"superkernel/cpu/superkernel_rt.h\"\n"
         "extern \"C\" void " + addSym + "(const sk_ctx*, const float*, float*, int64_t);\n"
         "extern \"C\" void " + twiceSym + "(const sk_ctx*, float*, int64_t);\n"
         "extern \"C\" __attribute__((visibility(\"default\"))) int run(uint32_t block_dim, void* stream,\n"
         "                                                            const sk_run_args* args) {\n"
         "  (void)stream;\n"
         "  if (!args || args->abi_version != SK_ABI_VERSION || args->num_buffers != 2) return -1;\n"
         "  sk_ctx ctx = {0, block_dim, nullptr};\n"
         "  for (uint32_t b = 0; b < block_dim; ++b) {\n"
         "    ctx.block_idx = b;\n"
         "    " + addSym + "(&ctx, (const float*)args->buffers[0], (float*)args->buffers[1], 64);\n"
         "    sk_wait_inputs(&ctx);\n"
         "  }\n"
         "  for (uint32_t b = 0; b < block_dim; ++b) {\n"
         "    ctx.block_idx = b;\n"
         "    " + twiceSym + "(&ctx, (float*)args->buffers[1], 64);\n"
         "  }\n"
         "  return 0;\n"
         "}\n";
}

struct Fixture {
  TempDir dir{"drv"};
  fs::path kernels = dir / "kernels";
  Fixture() {
    test::writeFile(kernels / "add.cpp", kAddKernel);
    test::writeFile(kernels / "scale.h", "#define EXTRA 0.5f\n");
    test::writeFile(kernels / "twice.c", kCKernel);
  }
  KernelVariant add(const std::string& scale = "2", const std::string& symbol = "add_kernel__v000000000001") const {
    KernelVariant v;
    v.decl.name = "add";
    v.decl.entry = "add_kernel";
    v.decl.sourcePath = kernels / "add.cpp";
    v.macros = {{"SCALE", scale}};
    v.symbol = symbol;
    return v;
  }
  KernelVariant twice() const {
    KernelVariant v;
    v.decl.name = "twice";
    v.decl.entry = "twice_kernel";
    v.decl.sourcePath = kernels / "twice.c";
    v.symbol = "twice_kernel__v000000000002";
    return v;
  }
  std::shared_ptr<Cache> cache(const std::string& name = "cache") const {
    CacheConfig c;
    c.root = dir / name;
    return *Cache::open(c);
  }
};

using sktest::defaultCompiler;
using sktest::installed;

// findToolchain for an installed compiler: its failure is a test failure (an empty Toolchain comes back).
Toolchain toolchainOf(const std::string& compiler, std::vector<std::string> launcher = {}) {
  ToolchainRequest r;
  r.compiler = compiler;
  r.launcher = std::move(launcher);
  auto tc = findToolchain(r);
  EXPECT_TRUE(tc.ok()) << compiler << " is installed, yet: " << tc.error().message();
  return tc ? *tc : Toolchain{};
}

#define REQUIRE_TOOLCHAIN(tc, name)                                                \
  if (!installed(name)) GTEST_SKIP() << name << " is not installed (not on PATH)"; \
  Toolchain tc = toolchainOf(name);                                                \
  ASSERT_FALSE(tc.path.empty())

// ---------------------------------------------------------------------------
// processes

// The version shown in reports: clang's first line, nvcc's release line after its banner, else line one.
TEST(DriverToolchain, VersionLineNamesTheVersion) {
  Toolchain t;
  t.version = "Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\n";
  EXPECT_EQ(t.versionLine(), "Debian clang version 14.0.6");
  t.version = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
              "Built on Wed_Aug_20\nCuda compilation tools, release 13.0, V13.0.88\n";
  EXPECT_EQ(t.versionLine(), "Cuda compilation tools, release 13.0, V13.0.88");
  t.version = "g++ (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n";
  EXPECT_EQ(t.versionLine(), "g++ (Debian 12.2.0-14) 12.2.0");
  t.version = "";
  EXPECT_EQ(t.versionLine(), "");
}

TEST(DriverProcess, CapturesOutputAndExitCode) {
  auto r = runProcess({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exitCode, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(r->describe(), "exit code 3");
}

TEST(DriverProcess, TimeoutKillsTheProcessGroup) {
  ProcessOptions po;
  po.timeout = std::chrono::milliseconds(300);
  auto t0 = std::chrono::steady_clock::now();
  auto r = runProcess({"sh", "-c", "sleep 30 & sleep 30; echo never"}, po);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timedOut);
  EXPECT_FALSE(r->succeeded());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_NE(r->describe().find("timed out"), std::string::npos);
}

TEST(DriverProcess, MissingProgramIsAnError) {
  auto r = runProcess({"/nonexistent/sk-no-such-program", "x"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::Compile);
  EXPECT_NE(r.error().message().find("sk-no-such-program"), std::string::npos);
}

TEST(DriverProcess, ArgvIsNotInterpretedByAShell) {
  auto r = runProcess({"printf", "%s|", "a b", "$(echo no)", "*"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "a b|$(echo no)|*|");
}

TEST(DriverProcess, QuotingAndLauncherSplitting) {
  EXPECT_EQ(shellQuote("abc-1.o"), "abc-1.o");
  EXPECT_EQ(shellQuote("a b"), "'a b'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(formatCommand({"cc", "-DX=a b", "-c"}), "cc '-DX=a b' -c");
  EXPECT_EQ(splitLauncher("  distcc   -j4 "), (std::vector<std::string>{"distcc", "-j4"}));
  EXPECT_TRUE(splitLauncher("").empty());
}

// ---------------------------------------------------------------------------
// toolchains

TEST(DriverToolchain, MissingCompilerIsAClearError) {
  auto tc = findToolchain("cpu", "sk-no-such-compiler");
  ASSERT_FALSE(tc.ok());
  EXPECT_EQ(tc.error().kind(), ErrorKind::Compile);
  EXPECT_NE(tc.error().message().find("compiler 'sk-no-such-compiler' not found on PATH; set SK_CXX or install clang"),
            std::string::npos)
      << tc.error().message();
  test::ScopedEnv e("SK_CXX", "/opt/none/bin/c++");
  auto tc2 = findToolchain();
  ASSERT_FALSE(tc2.ok());
  EXPECT_NE(tc2.error().message().find("/opt/none/bin/c++"), std::string::npos);
  EXPECT_NE(tc2.error().message().find("SK_CXX"), std::string::npos);
}

TEST(DriverToolchain, IdentityOfClangAndGcc) {
  REQUIRE_TOOLCHAIN(clang, "clang++");
  EXPECT_EQ(clang.family, CompilerFamily::Clang);
  EXPECT_TRUE(clang.path.is_absolute());
  EXPECT_EQ(clang.path, fs::canonical(clang.path));
  EXPECT_TRUE(isValidCacheKey(clang.contentHash));
  EXPECT_NE(clang.version.find("clang"), std::string::npos);
  EXPECT_NE(clang.identity().find(clang.contentHash), std::string::npos);
  // Memoised and stable.
  auto again = findToolchain("cpu", "clang++");
  EXPECT_EQ(again->identity(), clang.identity());
  REQUIRE_TOOLCHAIN(gcc, "g++");
  EXPECT_EQ(gcc.family, CompilerFamily::Gcc);
  EXPECT_NE(gcc.identity(), clang.identity());
}

TEST(DriverToolchain, DefaultIsClangAndSkCxxOverrides) {
  {
    test::ScopedEnv e("SK_CXX", nullptr);
    if (!installed("clang++")) GTEST_SKIP() << "clang++ is not installed (not on PATH)";
    auto tc = findToolchain();
    ASSERT_TRUE(tc.ok()) << tc.error().message();
    EXPECT_EQ(tc->requested, "clang++");
    // Spawned under the name it was asked for: clang++ resolves to the clang
    // binary, which would link C++ objects without libstdc++ if run as clang.
    EXPECT_EQ(tc->invocation.filename(), "clang++");
    EXPECT_NE(tc->identity().find("\nclang++\n"), std::string::npos);
  }
  test::ScopedEnv e("SK_CXX", "g++");
  if (!installed("g++")) GTEST_SKIP() << "g++ is not installed (not on PATH)";
  auto tc = findToolchain();
  ASSERT_TRUE(tc.ok()) << tc.error().message();
  EXPECT_EQ(tc->family, CompilerFamily::Gcc);
}

TEST(DriverToolchain, LauncherFromEnvironment) {
  test::ScopedEnv e("SK_COMPILER_LAUNCHER", "env  -u SK_NOTHING");
  if (!installed(defaultCompiler())) GTEST_SKIP() << defaultCompiler() << " is not installed (not on PATH)";
  auto tc = findToolchain("cpu", "");
  ASSERT_TRUE(tc.ok()) << tc.error().message();
  EXPECT_EQ(tc->launcher, (std::vector<std::string>{"env", "-u", "SK_NOTHING"}));
  EXPECT_EQ(tc->identity().find("env"), std::string::npos);
  test::ScopedEnv e2("SK_COMPILER_LAUNCHER", "sk-no-such-launcher");
  auto bad = findToolchain("cpu", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("sk-no-such-launcher"), std::string::npos);
}

// ---------------------------------------------------------------------------
// objects

class DriverCompilers : public ::testing::TestWithParam<std::string> {};

TEST_P(DriverCompilers, CompilesAnObjectAndReadsItsSymbolSize) {
  REQUIRE_TOOLCHAIN(tc, GetParam());
  Fixture f;
  Driver d(tc, f.cache());
  Options o;
  auto obj = d.compileObject(f.add(), o);
  ASSERT_TRUE(obj.ok()) << obj.error().message();
  EXPECT_FALSE(obj->cached);
  EXPECT_EQ(obj->symbol, "add_kernel__v000000000001");
  EXPECT_GT(obj->symbolSize, 8u);
  EXPECT_LT(obj->symbolSize, 4096u);
  auto sizes = readSymbolSizes(*obj->bytes);
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(sizes->at("add_kernel__v000000000001"), obj->symbolSize);
  EXPECT_EQ(sizes->count("add_kernel"), 0u);  // renamed by -D<entry>=<symbol>
  // C source with -std=c11.
  auto c = d.compileObject(f.twice(), o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_GT(c->symbolSize, 0u);
  // Second time: served by the cache.
  auto again = d.compileObject(f.add(), o);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cached);
  EXPECT_EQ(again->key, obj->key);
  // A new process (Cache instance) gets it from disk.
  Driver d2(tc, f.cache());
  auto disk = d2.compileObject(f.add(), o);
  ASSERT_TRUE(disk.ok());
  EXPECT_TRUE(disk->cached);
  EXPECT_EQ(*disk->bytes, *obj->bytes);
}

INSTANTIATE_TEST_SUITE_P(ClangAndGcc, DriverCompilers, ::testing::Values("clang++", "g++"));

TEST(DriverObjects, SymbolSizeErrors) {
  for (const char* notElf : {"not an object", ""}) {
    auto r = readSymbolSizes(notElf);
    ASSERT_FALSE(r.ok()) << notElf;
    EXPECT_EQ(r.error().kind(), ErrorKind::Compile);
    EXPECT_NE(r.error().message().find("no ELF magic"), std::string::npos) << r.error().message();
  }
  REQUIRE_TOOLCHAIN(tc, "clang++");
  Fixture f;
  Driver d(tc, f.cache());
  auto obj = d.compileObject(f.add(), Options{});
  ASSERT_TRUE(obj.ok());
  auto missing = readSymbolSize(*obj->bytes, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("nope"), std::string::npos);
}

TEST(DriverObjects, KeyChangesWithEveryInput) {
  REQUIRE_TOOLCHAIN(tc, "clang++");
  Fixture f;
  Driver d(tc, nullptr);
  Options o;
  std::set<std::string> keys;
  auto key = [&](const KernelVariant& v, const Options& opt) {
    auto k = d.objectKey(v, opt);
    EXPECT_TRUE(k.ok());
    return *k;
  };
  std::string base = key(f.add(), o);
  EXPECT_EQ(base, key(f.add(), o));
  keys.insert(base);
  EXPECT_TRUE(keys.insert(key(f.add("3"), o)).second) << "macro";
  EXPECT_TRUE(keys.insert(key(f.add("2", "add_kernel__v0000000000ff"), o)).second) << "symbol";
  Options o2 = o;
  o2.compileOptions = {"-ffast-math"};
  EXPECT_TRUE(keys.insert(key(f.add(), o2)).second) << "compile-options";
  Options o3 = o;
  o3.funcAlign = 64;
  EXPECT_TRUE(keys.insert(key(f.add(), o3)).second) << "func-align";
  test::writeFile(f.kernels / "scale.h", "#define EXTRA 0.25f\n");
  EXPECT_TRUE(keys.insert(key(f.add(), o)).second) << "neighbour header";
  test::writeFile(f.kernels / "add.cpp", std::string(kAddKernel) + "\n");
  EXPECT_TRUE(keys.insert(key(f.add(), o)).second) << "source byte";
  auto gcc = findToolchain("cpu", "g++");
  if (gcc) {
    Driver dg(*gcc, nullptr);
    EXPECT_TRUE(keys.insert(*dg.objectKey(f.add(), o)).second) << "toolchain";
  }
  DriverConfig generic;
  generic.arch = "generic";
  Driver da(tc, nullptr, generic);
  EXPECT_TRUE(keys.insert(*da.objectKey(f.add(), o)).second) << "arch";
  // The launcher is not part of the key.
  Toolchain withLauncher = tc;
  withLauncher.launcher = {"env"};
  Driver dl(withLauncher, nullptr);
  EXPECT_EQ(*dl.objectKey(f.add(), o), key(f.add(), o));
  // Flags carry what the brief says.
  auto flags = d.objectFlags(f.add(), o3);
  auto has = [&](const std::string& s) { return std::find(flags.begin(), flags.end(), s) != flags.end(); };
  EXPECT_TRUE(has("-c") && has("-O2") && has("-fPIC") && has("-std=c++17"));
  EXPECT_TRUE(has("-Dadd_kernel=add_kernel__v000000000001"));
  EXPECT_TRUE(has("-DSCALE=2"));
  EXPECT_TRUE(has("-falign-functions=64"));
  EXPECT_TRUE(has("-I" + cpuRuntimeIncludeDir().string()));
  auto cflags = d.objectFlags(f.twice(), o);
  EXPECT_NE(std::find(cflags.begin(), cflags.end(), "-std=c11"), cflags.end());
  Options o0 = o;
  o0.funcAlign = 0;
  auto f0 = d.objectFlags(f.add(), o0);
  EXPECT_EQ(std::find_if(f0.begin(), f0.end(), [](const std::string& s) { return s.rfind("-falign", 0) == 0; }),
            f0.end());
}

// A launcher script that logs each invocation, then runs the compiler.
fs::path makeLauncher(const fs::path& dir, const fs::path& log) {
  fs::path p = dir / "launcher.sh";
  test::writeFile(p, "#!/bin/sh\necho \"$@\" >> '" + log.string() + "'\nexec \"$@\"\n", 0755);
  return p;
}

size_t lines(const fs::path& p) {
  std::string s = test::readFile(p);
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(DriverObjects, IdenticalVariantsCompileOnce) {
  Fixture f;
  fs::path log = f.dir / "invocations.log";
  if (!installed("clang++")) GTEST_SKIP() << "clang++ is not installed (not on PATH)";
  auto tc = toolchainOf("clang++", {makeLauncher(f.dir.path(), log).string()});
  ASSERT_FALSE(tc.path.empty());
  DriverConfig cfg;
  cfg.jobs = 4;
  Driver d(tc, f.cache(), cfg);
  std::vector<KernelVariant> vs;
  for (int i = 0; i < 60; ++i) vs.push_back(i % 3 == 2 ? f.twice() : f.add(i % 3 == 0 ? "2" : "3"));
  std::vector<std::pair<size_t, size_t>> progress;
  std::mutex pm;
  auto objs = d.compileObjects(vs, Options{}, [&](size_t done, size_t total) {
    std::lock_guard<std::mutex> g(pm);
    progress.emplace_back(done, total);
  });
  ASSERT_TRUE(objs.ok()) << objs.error().message();
  ASSERT_EQ(objs->size(), vs.size());
  EXPECT_EQ(lines(log), 3u);  // 3 distinct variants -> 3 compiler runs
  std::set<std::string> keys;
  for (size_t i = 0; i < vs.size(); ++i) {
    keys.insert((*objs)[i].key);
    EXPECT_EQ((*objs)[i].symbol, vs[i].symbol);
    EXPECT_GT((*objs)[i].symbolSize, 0u);
  }
  EXPECT_EQ(keys.size(), 3u);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.front(), std::make_pair(size_t{0}, size_t{3}));
  EXPECT_EQ(progress.back(), std::make_pair(size_t{3}, size_t{3}));
  applyCodeBytes(vs, *objs);
  EXPECT_EQ(vs[0].codeBytes, (*objs)[0].symbolSize);
  // The launcher really ran the compiler with our argv.
  std::string first = test::readFile(log);
  EXPECT_NE(first.find(tc.invocation.string() + " -c -O2 -fPIC"), std::string::npos) << first;
  // All cached now: no more compiler runs.
  auto again = d.compileObjects(vs, Options{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(lines(log), 3u);
  for (auto& o : *again) EXPECT_TRUE(o.cached);
}

TEST(DriverObjects, ParallelCompileOfDistinctVariants) {
  REQUIRE_TOOLCHAIN(tc, "clang++");
  Fixture f;
  DriverConfig cfg;
  cfg.jobs = 3;
  Driver d(tc, f.cache(), cfg);
  EXPECT_EQ(d.jobs(), 3u);
  std::vector<KernelVariant> vs;
  for (int i = 0; i < 8; ++i) vs.push_back(f.add(std::to_string(i), "add_kernel__v" + std::to_string(100 + i)));
  size_t calls = 0, last = 0;
  auto objs = d.compileObjects(vs, Options{}, [&](size_t done, size_t total) {
    ++calls;
    EXPECT_EQ(total, 8u);
    EXPECT_GE(done, last);
    last = done;
  });
  ASSERT_TRUE(objs.ok()) << objs.error().message();
  EXPECT_EQ(calls, 9u);
  std::set<std::string> keys;
  for (auto& o : *objs) keys.insert(o.key);
  EXPECT_EQ(keys.size(), 8u);
  auto s = d.cache()->stats();
  EXPECT_EQ(s->compiles, 8u);
  Driver dflt(tc, nullptr);
  EXPECT_GE(dflt.jobs(), 1u);
}

TEST(DriverObjects, FailingCompileCarriesCommandAndDiagnostics) {
  REQUIRE_TOOLCHAIN(tc, "clang++");
  Fixture f;
  test::writeFile(f.kernels / "bad kernel.cpp", "#include \"superkernel/cpu/kernel.h\"\nSK_KERNEL void bad_kernel(const sk_ctx* c) { this is not C++; }\n");
  KernelVariant v;
  v.decl.name = "bad";
  v.decl.entry = "bad_kernel";
  v.decl.sourcePath = f.kernels / "bad kernel.cpp";
  v.symbol = "bad_kernel__v1";
  v.macros = {{"WITH_MACRO", "1"}};
  Driver d(tc, f.cache());
  std::vector<KernelVariant> vs = {f.add(), v};
  auto r = d.compileObjects(vs, Options{});
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message();
  EXPECT_EQ(r.error().kind(), ErrorKind::Compile);
  EXPECT_NE(m.find("compiling kernel 'bad'"), std::string::npos) << m;
  EXPECT_NE(m.find("command: "), std::string::npos) << m;
  EXPECT_NE(m.find(tc.invocation.string()), std::string::npos) << m;
  EXPECT_NE(m.find("-DWITH_MACRO=1"), std::string::npos) << m;
  EXPECT_NE(m.find("'" + (f.kernels / "bad kernel.cpp").string() + "'"), std::string::npos) << m;  // shell-quoted for display
  EXPECT_NE(m.find("error:"), std::string::npos) << m;  // the compiler's diagnostics
  EXPECT_EQ(d.cache()->stats()->compileFailures, 1u);
  // Missing source: bad input naming the kernel.
  KernelVariant gone = f.add();
  gone.decl.sourcePath = f.kernels / "gone.cpp";
  auto g = d.compileObject(gone, Options{});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message().find("gone.cpp"), std::string::npos);
}

// ---------------------------------------------------------------------------
// link and run

TEST(DriverLink, BuildsLoadsAndRunsASuperKernel) {
  REQUIRE_TOOLCHAIN(tc, "clang++");
  Fixture f;
  Options o;
  o.compileOptions = {"-fno-math-errno"};
  std::string key;
  {
    Driver d(tc, f.cache());
    std::vector<KernelVariant> vs = {f.add(), f.twice(), f.add()};
    auto objs = d.compileObjects(vs, o);
    ASSERT_TRUE(objs.ok()) << objs.error().message();
    std::string src = superKernelSource(vs[0].symbol, vs[1].symbol);
    const std::string meta = R"({"oplist": {"ops": 3}, "report": "3 -> 1"})";
    auto sk = d.buildSuperKernel(src, *objs, o, meta);
    ASSERT_TRUE(sk.ok()) << sk.error().message();
    EXPECT_FALSE(sk->cached);
    key = sk->key;
    std::vector<float> x(64), z(64, 0.f);
    for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i);
    void* bufs[2] = {x.data(), z.data()};
    sk_run_args args{SK_ABI_VERSION, 2, bufs};
    EXPECT_EQ(loadRun(*sk)(4, nullptr, &args), 0);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(z[i], (x[i] + 2.0f + 0.5f) * 2.0f) << i;
    // `run` is the only exported symbol.
    auto lib = LoadedLibrary::fromBytes(*sk->artifact->bytes, sk->key);
    ASSERT_TRUE(lib.ok());
    EXPECT_EQ((*lib)->symbol(vs[0].symbol.c_str()), nullptr);
    EXPECT_EQ((*lib)->symbol("sk_wait_inputs"), nullptr);
    auto dyn = readSymbolSizes(*sk->artifact->bytes);
    ASSERT_TRUE(dyn.ok());
    EXPECT_TRUE(dyn->count("run"));
    // Manifest keeps the metadata for sk-cache verify.
    const auto manifest = nlohmann::json::parse(sk->artifact->manifest);
    EXPECT_EQ(manifest["metadata"]["report"], "3 -> 1");
    EXPECT_EQ(manifest["kind"], "superkernel");
    // Same inputs again: a memory hit.
    auto again = d.buildSuperKernel(src, *objs, o, meta);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->cached);
    EXPECT_EQ(again->artifact.get(), sk->artifact.get());
    // A different source is a different key.
    auto k2 = d.superKernelKey(src + "\n", *objs, o);
    EXPECT_NE(*k2, key);
    Options o2 = o;
    o2.earlyStart = 2;
    EXPECT_NE(*d.superKernelKey(src, *objs, o2), key);
  }
  // A new process: objects and the SuperKernel come from disk.
  Driver d2(tc, f.cache());
  std::vector<KernelVariant> vs = {f.add(), f.twice(), f.add()};
  auto objs = d2.compileObjects(vs, o);
  ASSERT_TRUE(objs.ok());
  for (auto& ob : *objs) EXPECT_TRUE(ob.cached);
  auto sk = d2.buildSuperKernel(superKernelSource(vs[0].symbol, vs[1].symbol), *objs, o);
  ASSERT_TRUE(sk.ok()) << sk.error().message();
  EXPECT_TRUE(sk->cached);
  EXPECT_EQ(sk->key, key);
  EXPECT_EQ(sk->artifact->origin, Artifact::Origin::Disk);
  std::vector<float> x(64, 1.f), z(64, 0.f);
  void* bufs[2] = {x.data(), z.data()};
  sk_run_args args{SK_ABI_VERSION, 2, bufs};
  LoadedRun run = loadRun(*sk);
  EXPECT_EQ(run(2, nullptr, &args), 0);
  EXPECT_EQ(z[63], 7.0f);
  sk_run_args bad{SK_ABI_VERSION + 1, 2, bufs};
  EXPECT_EQ(run(2, nullptr, &bad), -1);
}

TEST(DriverLink, WithGccAndWithoutCache) {
  REQUIRE_TOOLCHAIN(tc, "g++");
  Fixture f;
  Driver d(tc, nullptr);
  std::vector<KernelVariant> vs = {f.add(), f.twice()};
  auto objs = d.compileObjects(vs, Options{});
  ASSERT_TRUE(objs.ok()) << objs.error().message();
  auto sk = d.buildSuperKernel(superKernelSource(vs[0].symbol, vs[1].symbol), *objs, Options{});
  ASSERT_TRUE(sk.ok()) << sk.error().message();
  std::vector<float> x(64, 0.f), z(64, 0.f);
  void* bufs[2] = {x.data(), z.data()};
  sk_run_args args{SK_ABI_VERSION, 2, bufs};
  EXPECT_EQ(loadRun(*sk)(3, nullptr, &args), 0);
  EXPECT_EQ(z[0], 5.0f);
}

// The metadata is JSON text (Driver.h): text that is not JSON is BadInput
// before anything is linked; a value that is not an object is kept under
// "metadata", beside the object keys and options the driver adds.
TEST(DriverLink, MetadataIsJsonText) {
  REQUIRE_TOOLCHAIN(tc, "clang++");
  Fixture f;
  Driver d(tc, f.cache());
  std::vector<KernelVariant> vs = {f.add(), f.twice()};
  auto objs = d.compileObjects(vs, Options{});
  ASSERT_TRUE(objs.ok()) << objs.error().message();
  const std::string src = superKernelSource(vs[0].symbol, vs[1].symbol);
  auto bad = d.buildSuperKernel(src, *objs, Options{}, R"({"report": })");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(bad.error().message().find("the SuperKernel's metadata is not JSON text"), std::string::npos)
      << bad.error().message();
  auto sk = d.buildSuperKernel(src, *objs, Options{}, "[1, 2]");
  ASSERT_TRUE(sk.ok()) << sk.error().message();
  EXPECT_FALSE(sk->cached);
  const auto meta = nlohmann::json::parse(sk->artifact->manifest)["metadata"];
  EXPECT_EQ(meta["metadata"], nlohmann::json::parse("[1, 2]"));
  ASSERT_TRUE(meta["object_keys"].is_array());
  EXPECT_EQ(meta["object_keys"].size(), 2u);
  EXPECT_TRUE(meta["options"].is_string());
  // A hit never reads the metadata (no JSON work on the cache-hit path).
  auto hit = d.buildSuperKernel(src, *objs, Options{}, R"({"report": })");
  ASSERT_TRUE(hit.ok()) << hit.error().message();
  EXPECT_TRUE(hit->cached);
  // Nor does it make it: the producer form is not called on a hit.
  int made = 0;
  auto lazy = d.buildSuperKernel(src, *objs, Options{}, std::function<std::string()>([&] {
                                   ++made;
                                   return std::string("{}");
                                 }));
  ASSERT_TRUE(lazy.ok()) << lazy.error().message();
  EXPECT_TRUE(lazy->cached);
  EXPECT_EQ(made, 0);
}

TEST(DriverLink, LinkFailureCarriesCommand) {
  REQUIRE_TOOLCHAIN(tc, "clang++");
  Fixture f;
  Driver d(tc, f.cache());
  std::vector<KernelVariant> vs = {f.add()};
  auto objs = d.compileObjects(vs, Options{});
  ASSERT_TRUE(objs.ok());
  std::string src =
      "extern \"C\" void not_defined_anywhere();\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) int run(unsigned, void*, const void*) {\n"
      "  not_defined_anywhere(); return 0; }\n";
  auto sk = d.buildSuperKernel(src, *objs, Options{});
  ASSERT_FALSE(sk.ok());
  EXPECT_EQ(sk.error().kind(), ErrorKind::Compile);
  EXPECT_NE(sk.error().message().find("command: "), std::string::npos);
  EXPECT_NE(sk.error().message().find("not_defined_anywhere"), std::string::npos) << sk.error().message();
  EXPECT_NE(sk.error().message().find("-shared"), std::string::npos);
  // An uncached link into a chosen file works too.
  TempDir out("link");
  auto lr = d.linkSuperKernel(superKernelSource(vs[0].symbol, vs[0].symbol).substr(0, 0) +
                                  "extern \"C\" __attribute__((visibility(\"default\"))) int run() { return 7; }\n",
                              *objs, Options{}, out / "x.so");
  ASSERT_TRUE(lr.ok()) << lr.error().message();
  EXPECT_TRUE(fs::exists(out / "x.so"));
  EXPECT_FALSE(lr->command.empty());
}

}  // namespace
}  // namespace sk
