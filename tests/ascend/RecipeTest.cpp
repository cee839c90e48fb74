// The ascend build recipe (src/backends/ascend/AscendBuild): tool discovery
// with fake CANN layouts, the exact argv of each build step, the kernel JSON,
// the simulator build run for real with the host compiler, and the device
// build run for real when a CANN toolkit is present (skipped otherwise).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "superkernel/ascend/Simulator.h"
#include "superkernel/driver/Process.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendBuild.h"

namespace fs = std::filesystem;
using namespace sk::ascend;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/sk_ascend_recipe_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void fakeTool(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "#!/bin/sh\nexit 0\n";
  ::chmod(p.c_str(), 0755);
}

EnvLookup envOf(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// Scalars become SK_<NAME> defines after the macros; a macro of the same name wins (as on cpu, where a kernel
// reads SK_ROWS before its rows argument), so the two never clash.
TEST(AscendRecipe, ObjectDefinesLetAShapeMacroWinOverItsScalar) {
  const auto d = objectDefines({{"SK_ROWS", "4"}, {"SK_WEIGHT_BF16", "1"}},
                               {{"rows", "INT64_C(8)"}, {"cols", "INT64_C(64)"}, {"eps", "1e-06f"}});
  const std::vector<std::pair<std::string, std::string>> want = {
      {"SK_ROWS", "4"}, {"SK_WEIGHT_BF16", "1"}, {"SK_COLS", "INT64_C(64)"}, {"SK_EPS", "1e-06f"}};
  EXPECT_EQ(d, want);
  EXPECT_TRUE(objectDefines({}, {}).empty());
}

TEST(AscendRecipe, Names) {
  EXPECT_STREQ(coreArchName(CoreArch::Cube), "dav-c220-cube");
  EXPECT_STREQ(coreArchName(CoreArch::Vec), "dav-c220-vec");
  EXPECT_STREQ(kernelTypeName(KernelType::MixAic1_2), "KERNEL_TYPE_MIX_AIC_1_2");
  EXPECT_EQ(archsOf(KernelType::MixAic1_2), (std::vector<CoreArch>{CoreArch::Cube, CoreArch::Vec}));
  EXPECT_EQ(archsOf(KernelType::MixAiv1_0), (std::vector<CoreArch>{CoreArch::Vec}));
  EXPECT_EQ(archsOf(KernelType::AicOnly), (std::vector<CoreArch>{CoreArch::Cube}));
  EXPECT_EQ(taskRatio(KernelType::MixAic1_2), 2u);
  EXPECT_EQ(taskRatio(KernelType::MixAic1_1), 1u);
  EXPECT_EQ(taskRatio(KernelType::MixAic1_0), 0u);
}

TEST(AscendRecipe, FindsBishengThroughSkBisheng) {
  TempDir d;
  fakeTool(d.path / "cann/bin/bisheng");
  fakeTool(d.path / "cann/bin/ld.lld");
  fakeTool(d.path / "cann/bin/llvm-objcopy");
  auto t = findAscendTools(envOf({{"SK_BISHENG", (d.path / "cann/bin/bisheng").string()}}));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->foundVia, "SK_BISHENG");
  EXPECT_EQ(t->bisheng, d.path / "cann/bin/bisheng");
  EXPECT_EQ(t->ldLld, d.path / "cann/bin/ld.lld");  // beside bisheng, not /usr/bin's
  EXPECT_EQ(t->objcopy, d.path / "cann/bin/llvm-objcopy");
}

TEST(AscendRecipe, FindsBishengThroughAscendHomePath) {
  TempDir d;
  const fs::path bin = d.path / "Ascend/cann/compiler/ccec_compiler/bin";
  fakeTool(bin / "bisheng");
  fakeTool(bin / "ld.lld");
  fakeTool(bin / "llvm-objcopy");
  auto t = findAscendTools(envOf({{"ASCEND_HOME_PATH", (d.path / "Ascend/cann").string()}}));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->foundVia, "ASCEND_HOME_PATH");
  EXPECT_EQ(t->bisheng, bin / "bisheng");
  EXPECT_EQ(t->ldLld, bin / "ld.lld");
}

TEST(AscendRecipe, SkBishengWinsOverAscendHomePath) {
  TempDir d;
  fakeTool(d.path / "mine/bisheng");
  fakeTool(d.path / "mine/ld.lld");
  fakeTool(d.path / "mine/llvm-objcopy");
  fakeTool(d.path / "cann/compiler/ccec_compiler/bin/bisheng");
  auto t = findAscendTools(envOf({{"SK_BISHENG", (d.path / "mine/bisheng").string()},
                                  {"ASCEND_HOME_PATH", (d.path / "cann").string()}}));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->bisheng, d.path / "mine/bisheng");
}

TEST(AscendRecipe, MissingToolsAreClearErrors) {
  TempDir d;
  auto bad = findAscendTools(envOf({{"SK_BISHENG", (d.path / "nope").string()}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("SK_BISHENG=" + (d.path / "nope").string() + " is not an executable"),
            std::string::npos);

  if (!sk::findExecutableUnresolved("bisheng").empty()) GTEST_SKIP() << "bisheng is on PATH here";
  auto none = findAscendTools(envOf({{"ASCEND_HOME_PATH", (d.path / "cann").string()}}));
  ASSERT_FALSE(none.ok());
  const std::string& m = none.error().message();
  EXPECT_NE(m.find("bisheng (the CANN Ascend C compiler) not found"), std::string::npos) << m;
  EXPECT_NE(m.find("tried: " + (d.path / "cann/compiler/ccec_compiler/bin/bisheng").string()), std::string::npos) << m;
  EXPECT_NE(m.find(", bisheng on PATH)"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;  // one line: sk-compile prints every error as one
  EXPECT_NE(m.find("set SK_BISHENG"), std::string::npos) << m;
}

AscendTools fakeTools() {
  AscendTools t;
  t.bisheng = "/cann/bin/bisheng";
  t.ldLld = "/cann/bin/ld.lld";
  t.objcopy = "/cann/bin/llvm-objcopy";
  return t;
}

TEST(AscendRecipe, DeviceCompileArgvOfASubKernel) {
  CompileStep s;
  s.source = "/k/gemv.cpp";
  s.object = "/o/gemv_v1.o";
  s.arch = CoreArch::Cube;
  s.includeDirs = {"/k"};
  s.defines = {{"SK_WEIGHT_BF16", "1"}, {"SK_ROWS", "37"}, {"sk_gemv_bf16w", "sk_gemv_bf16w__v0123456789ab"}};
  s.subKernel = true;
  s.blockNum = 8;
  s.kernelEarlyStart = true;
  EXPECT_EQ(deviceCompileArgv(fakeTools(), s),
            (std::vector<std::string>{"/cann/bin/bisheng", "-x", "cce", "-O3", "-std=c++17",
                                      "--cce-aicore-arch=dav-c220-cube", "--cce-aicore-only", "-mllvm",
                                      "-cce-aicore-addr-transform", "-mllvm", "-cce-aicore-dcci-insert-for-scalar=false",
                                      "-mllvm", "-cce-aicore-stack-size=0x8000", "-DTILING_KEY_VAR=0", "-I/k",
                                      "-DSK_WEIGHT_BF16=1", "-DSK_ROWS=37",
                                      "-Dsk_gemv_bf16w=sk_gemv_bf16w__v0123456789ab",
                                      "-D__SUPER_KERNEL_STATIC_BLOCK_NUM__=8", "-D__ASCENDC_ENABLE_SET_NEXT_TASK_START",
                                      "-D__ASCENDC_ENABLE_WAIT_PRE_TASK_END", "-D__ASCENDC_SUPERKERNEL_EARLY_START_V2",
                                      "-c", "/k/gemv.cpp", "-o", "/o/gemv_v1.o"}));
}

TEST(AscendRecipe, DeviceCompileArgvOfASplitSuperKernel) {
  CompileStep s;
  s.source = "/g/sk.cpp";
  s.object = "/o/sk_aiv.o";
  s.arch = CoreArch::Vec;
  s.splitMode = 4;
  s.extra = {"-g"};
  EXPECT_EQ(deviceCompileArgv(fakeTools(), s),
            (std::vector<std::string>{"/cann/bin/bisheng", "-x", "cce", "-O3", "-std=c++17",
                                      "--cce-aicore-arch=dav-c220-vec", "--cce-aicore-only", "-mllvm",
                                      "-cce-aicore-addr-transform", "-mllvm", "-cce-aicore-dcci-insert-for-scalar=false",
                                      "-mllvm", "-cce-aicore-stack-size=0x8000", "-mllvm", "-cce-aicore-jump-expand=true",
                                      "--cce-long-call=true", "-mllvm", "-cce-aicore-long-call", "-DTILING_KEY_VAR=0",
                                      "-g", "-c", "/g/sk.cpp", "-o", "/o/sk_aiv.o"}));
}

TEST(AscendRecipe, LinkLocalizeAndSplitArgv) {
  EXPECT_EQ(relocatableLinkArgv(fakeTools(), {"/o/sk.o", "/o/a.o"}, "/o/kernel.o"),
            (std::vector<std::string>{"/cann/bin/ld.lld", "-m", "aicorelinux", "-r", "-Ttext=0", "/o/sk.o", "/o/a.o", "-o",
                                      "/o/kernel.o"}));
  EXPECT_EQ(localizeArgv(fakeTools(), "/o/kernel.o", {"a", "b", "a"}),
            (std::vector<std::vector<std::string>>{
                {"/cann/bin/llvm-objcopy", "--localize-symbol=a", "--localize-symbol=b", "/o/kernel.o"}}));
  EXPECT_TRUE(localizeArgv(fakeTools(), "/o/kernel.o", {}).empty());
  std::vector<std::string> many;
  for (int i = 0; i < 600; ++i) many.push_back("s" + std::to_string(i));
  auto batches = localizeArgv(fakeTools(), "/o/kernel.o", many);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].size(), 258u);
  EXPECT_EQ(batches[2].size(), 90u);
  EXPECT_EQ(batches[2][1], "--localize-symbol=s512");
  EXPECT_EQ(splitCopyArgv("/cann/bin/llvm-objcopy", "/o/a.o", "/o/a.split2.o", "k__v1", 2),
            (std::vector<std::string>{"/cann/bin/llvm-objcopy", "--redefine-sym", "k__v1=k__v1_split2", "/o/a.o",
                                      "/o/a.split2.o"}));
  EXPECT_EQ(splitSymbol("k", 0), "k");
}

TEST(AscendRecipe, SimCompileArgv) {
  CompileStep s;
  s.source = "/k/add.cpp";
  s.object = "/o/add.o";
  s.defines = {{"SK_N", "1000"}};
  s.subKernel = true;
  s.blockNum = 3;
  EXPECT_EQ(simCompileArgv("/usr/bin/clang++", "/sim/include", s),
            (std::vector<std::string>{"/usr/bin/clang++", "-x", "c++", "-std=c++17", "-O1", "-fPIC", "-fexceptions",
                                      "-fvisibility=default", "-I/sim/include", "-D__DAV_C220_VEC__",
                                      "-DTILING_KEY_VAR=0", "-DSK_N=1000", "-D__SUPER_KERNEL_STATIC_BLOCK_NUM__=3", "-c",
                                      "/k/add.cpp", "-o", "/o/add.o"}));
}

TEST(AscendRecipe, KernelJsonRoundTripsAndIsChecked) {
  KernelMeta m;
  m.kernelName = "sk_layer0";
  m.binFileName = "sk_layer0";
  m.blockDim = 24;
  m.kernelType = KernelType::MixAic1_2;
  m.sha256 = std::string(64, 'a');
  const std::string text = kernelMetaJson(m);
  EXPECT_EQ(text, "{\n  \"binFileName\": \"sk_layer0\",\n  \"binFileSuffix\": \".o\",\n  \"blockDim\": 24,\n"
                  "  \"coreType\": \"MIX\",\n  \"kernelName\": \"sk_layer0\",\n  \"kernelType\": "
                  "\"KERNEL_TYPE_MIX_AIC_1_2\",\n  \"sha256\": \"" +
                      std::string(64, 'a') + "\",\n  \"taskRation\": \"1:2\"\n}\n");
  auto back = parseKernelMetaJson(text);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->kernelName, "sk_layer0");
  EXPECT_EQ(back->blockDim, 24u);
  EXPECT_EQ(back->kernelType, KernelType::MixAic1_2);

  auto mutate = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    auto r = parseKernelMetaJson(t);
    return r.ok() ? std::string("<ok>") : r.error().message();
  };
  EXPECT_NE(mutate("\"1:2\"", "\"1:1\"").find("contradict kernelType"), std::string::npos);
  EXPECT_NE(mutate("\"MIX\"", "\"AiCore\"").find("contradict kernelType"), std::string::npos);
  EXPECT_NE(mutate(std::string(64, 'a'), "abc").find("sha256"), std::string::npos);
  EXPECT_NE(mutate("24", "0").find("blockDim"), std::string::npos);
  EXPECT_NE(mutate("KERNEL_TYPE_MIX_AIC_1_2", "KERNEL_TYPE_X").find("unknown kernelType"), std::string::npos);
  EXPECT_NE(mutate("\"kernelName\"", "\"kernelNam\"").find("\"kernelName\" missing"), std::string::npos);
  auto notJson = parseKernelMetaJson("[");
  ASSERT_FALSE(notJson.ok());
  EXPECT_EQ(notJson.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_EQ(notJson.error().message(), "kernel JSON: not a JSON object");
}

// The simulator's split copies are llvm-objcopy's: its path and version are part of every object's key (so of
// every SuperKernel's), found once on PATH.
TEST(AscendRecipe, TheSimulatorsObjcopyIsInTheKey) {
  auto key = sk::makeAscendSimRecipe()->postProcessKey(sk::Toolchain{});
  ASSERT_TRUE(key.ok()) << key.error().message();
  const fs::path tool = sk::findExecutableUnresolved("llvm-objcopy");
  if (tool.empty()) {
    EXPECT_EQ(*key, "llvm-objcopy: none on PATH");
    return;
  }
  EXPECT_EQ(key->rfind("llvm-objcopy " + tool.string() + "\n", 0), 0u) << *key;
  EXPECT_NE(key->find("version"), std::string::npos) << "its --version output: " << *key;
}

// The simulator half of the recipe, for real: the builtin add kernel compiled by the host compiler with
// simCompileArgv (as a 3-block sub-kernel, entry renamed like a plan variant), linked with simLinkArgv,
// loaded, and run in the simulator.
TEST(AscendRecipe, SimBuildCompilesLinksAndRuns) {
  const fs::path cxx = sk::findExecutableUnresolved("clang++");
  if (cxx.empty()) GTEST_SKIP() << "clang++ not on PATH";
  TempDir d;
  CompileStep s;
  s.source = fs::path(SK_ASCEND_KERNELS_DIR) / "add.cpp";
  s.object = d.path / "add.o";
  s.defines = {{"SK_N", "100"}, {"sk_add_f32", "sk_add_f32__vtest"}};
  s.subKernel = true;
  s.blockNum = 3;
  auto argv = simCompileArgv(cxx, SK_ASCEND_SIM_INCLUDE, s);
  auto r = sk::runProcess(argv);
  ASSERT_TRUE(r.ok() && r->succeeded()) << sk::formatCommand(argv) << "\n" << (r.ok() ? r->err : "");
  auto link = simLinkArgv(cxx, {s.object}, d.path / "k.so");
  r = sk::runProcess(link);
  ASSERT_TRUE(r.ok() && r->succeeded()) << sk::formatCommand(link) << "\n" << (r.ok() ? r->err : "");
  void* h = dlopen((d.path / "k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  void* entry = dlsym(h, "sk_add_f32__vtest");
  void* enter = dlsym(h, "sk_ascend_sim_enter");
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(enter, nullptr);
  std::vector<float> x(100), y(100), z(100, -1.0f);
  for (int i = 0; i < 100; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 0.5f;
  }
  sk::ascend_sim::LaunchSpec spec;
  spec.type = sk::ascend_sim::TaskType::AivOnly;
  spec.blockDim = 3;
  spec.entry = entry;
  spec.enter = reinterpret_cast<sk_ascend_sim_enter_fn>(enter);
  spec.args = {x.data(), y.data(), z.data()};
  sk::Status st = sk::ascend_sim::launch(spec);
  ASSERT_TRUE(st.ok()) << st.error().message();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(z[i], static_cast<float>(i) + 0.5f) << i;
  dlclose(h);
}

// The device half, for real, where a CANN toolkit is installed.
TEST(AscendRecipe, DeviceBuildWithBisheng) {
  auto tools = findAscendTools();
  if (!tools.ok()) GTEST_SKIP() << "no CANN toolkit here: " << tools.error().message();
  TempDir d;
  CompileStep s;
  s.source = fs::path(SK_ASCEND_KERNELS_DIR) / "add.cpp";
  s.object = d.path / "add.o";
  s.defines = {{"SK_N", "1000"}};
  auto argv = deviceCompileArgv(*tools, s);
  auto r = sk::runProcess(argv);
  ASSERT_TRUE(r.ok() && r->succeeded()) << sk::formatCommand(argv) << "\n" << (r.ok() ? r->err : "");
  auto link = relocatableLinkArgv(*tools, {s.object}, d.path / "kernel.o");
  r = sk::runProcess(link);
  ASSERT_TRUE(r.ok() && r->succeeded()) << sk::formatCommand(link) << "\n" << (r.ok() ? r->err : "");
}

}  // namespace
