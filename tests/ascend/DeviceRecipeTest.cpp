// The ascend target (bisheng + CANN) without a CANN toolkit: what a user
// without one is told, that planning needs none, and the device recipe run end
// to end through the Session with stand-ins for bisheng, ld.lld and
// llvm-objcopy (tests/ascend/data/fake-cann: they log their argv, refuse what
// the device build must not omit, and build host objects from the same
// sources and macros). What runs on real CANN is unverified here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "superkernel/driver/Process.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/session/BufferSet.h"
#include "superkernel/session/Session.h"
#include "superkernel/support/Sha256.h"
#include "superkernel/target/Backend.h"
#include "backends/ascend/AclRuntime.h"
#include "backends/ascend/AscendBuild.h"

namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kRoot = SK_SOURCE_ROOT;
const fs::path kFakeCann = kRoot / "tests" / "ascend" / "data" / "fake-cann";

struct DeviceTempDir {
  fs::path path = fs::temp_directory_path() / ("sk-ascend-device-" + std::to_string(::getpid()));
  DeviceTempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~DeviceTempDir() { fs::remove_all(path); }
};

sk::OpList deviceAddList() {
  auto l = sk::loadOpList(kRoot / "examples" / "ascend_add" / "ascend_add.json");
  EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message());
  l->target = "ascend";
  return std::move(*l);
}

// No CANN anywhere: neither variable, and bisheng on no PATH entry this machine has (a test machine with
// CANN installed on PATH skips).
bool hideCannTools() {
  ::unsetenv("SK_BISHENG");
  ::unsetenv("ASCEND_HOME_PATH");
  ::unsetenv("SK_ASCENDCL");
  ::unsetenv("SK_COMPILER_LAUNCHER");  // the stand-ins are not compilers a launcher knows
  return sk::findExecutable("bisheng").empty();
}

std::string readToolLog(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AscendDevice, WithoutCannTheCompilerLookupSaysWhatIsMissing) {
  if (!hideCannTools()) GTEST_SKIP() << "bisheng is on PATH here";
  sk::SessionOptions so;
  so.diskCache = false;
  auto s = sk::Session::create(so);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto cp = (*s)->compile(deviceAddList(), {.options = "", .fuse = true, .target = "ascend"});
  ASSERT_FALSE(cp.ok());
  const std::string m = cp.error().message();
  EXPECT_EQ(cp.error().kind(), sk::ErrorKind::Compile) << m;
  EXPECT_THAT(m, HasSubstr("target ascend"));
  EXPECT_THAT(m, HasSubstr("bisheng (the CANN Ascend C compiler) not found"));
  EXPECT_THAT(m, HasSubstr("ASCEND_HOME_PATH is not set"));
  EXPECT_THAT(m, HasSubstr("SK_BISHENG"));
  EXPECT_THAT(m, HasSubstr("--target ascend-sim"));
}

// The plan is the machine description's, never the device's: the same without CANN, per the arch's part.
TEST(AscendDevice, ThePlanNeedsNoCannAndFollowsTheArch) {
  hideCannTools();
  auto b = sk::findBackend("ascend");
  ASSERT_TRUE(b.ok());
  auto def = (*b)->machineModel({});
  auto b3 = (*b)->machineModel({.arch = "ascend910b3"});
  auto asked = (*b)->machineModel({.arch = "ascend910b3", .cores = 4});
  ASSERT_TRUE(def.ok() && b3.ok() && asked.ok());
  EXPECT_EQ(def->target, "ascend");
  EXPECT_EQ(def->pools[0].count, 24u);
  EXPECT_EQ(def->pools[1].count, 48u);
  EXPECT_EQ(b3->pools[0].count, 20u);
  EXPECT_EQ(asked->pools[0].count, 4u);
  // What only the simulator provides is off, so the planner compiles values in and splits instead.
  EXPECT_FALSE(def->runtimeScalars);
  EXPECT_FALSE(def->sideLaunches);
  auto sim = sk::findBackend("ascend-sim");
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ((*sim)->kernels, "ascend");
  auto simModel = (*sim)->machineModel({});
  ASSERT_TRUE(simModel.ok());
  EXPECT_TRUE(simModel->runtimeScalars);
  EXPECT_TRUE(simModel->sideLaunches);
}

TEST(AscendDevice, TheRecipeBuildsTheDeviceArtifactWithBisheng) {
  hideCannTools();
  DeviceTempDir tmp;
  const fs::path log = tmp.path / "tools.log";
  ::setenv("ASCEND_HOME_PATH", kFakeCann.c_str(), 1);
  ::setenv("SK_FAKE_CANN_LOG", log.c_str(), 1);
  ::setenv("SK_FAKE_BISHENG_INCLUDE", (kRoot / "runtime" / "ascend" / "sim" / "include").c_str(), 1);
  sk::SessionOptions so;
  so.cacheDir = tmp.path / "cache";
  auto s = sk::Session::create(so);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto tc = (*s)->toolchain("ascend");
  ASSERT_TRUE(tc.ok()) << tc.error().message();
  EXPECT_EQ((*tc)->path.filename(), "bisheng");
  EXPECT_THAT((*tc)->version, HasSubstr("bisheng stand-in"));

  const sk::OpList list = deviceAddList();
  auto cp = (*s)->compile(list, {.options = "split-mode=2", .fuse = true, .target = "ascend"});
  ASSERT_TRUE(cp.ok()) << cp.error().message();
  ASSERT_EQ(cp->steps.size(), 1u);
  ASSERT_TRUE(cp->plan.steps[0].fused);
  EXPECT_THAT(cp->steps[0].source.manifest, HasSubstr("\"target\":\"ascend\""));
  // The device build keeps the launch descriptor in the artifact, not in device code.
  EXPECT_THAT(cp->steps[0].source.text, ::testing::Not(HasSubstr("sk_ascend_launch")));

  // Every step of the recipe ran, with the flags the device build needs.
  const std::string tools = readToolLog(log);
  EXPECT_THAT(tools, HasSubstr("bisheng -x cce -O3 -std=c++17 --cce-aicore-arch=dav-c220-vec --cce-aicore-only"));
  EXPECT_THAT(tools, HasSubstr("-D__SUPER_KERNEL_STATIC_BLOCK_NUM__="));
  EXPECT_THAT(tools, HasSubstr("--cce-long-call=true"));  // split-mode 2: long calls between the copies
  EXPECT_THAT(tools, HasSubstr("llvm-objcopy --redefine-sym "));
  EXPECT_THAT(tools, HasSubstr("ld.lld -m aicorelinux -r -Ttext=0 "));
  EXPECT_THAT(tools, HasSubstr("--localize-symbol="));

  // The artifact: the bundle parses, its ELF matches its kernel JSON, only the entry stays global.
  ASSERT_TRUE(cp->steps[0].artifact.artifact && cp->steps[0].artifact.artifact->bytes);
  auto bundle = sk::ascend::parseDeviceBundle(*cp->steps[0].artifact.artifact->bytes);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message();
  auto d = sk::ascend::parseLaunchDescriptor(bundle->launch);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(bundle->meta.kernelName, d->entry);
  EXPECT_EQ(bundle->meta.blockDim, d->blockDim);
  EXPECT_EQ(bundle->meta.kernelType, sk::ascend::KernelType::MixAiv1_0);  // a fused step of vector ops
  EXPECT_EQ(d->split, 2);
  ASSERT_EQ(d->objects.size(), 2u);  // add and add_es
  const fs::path elf = tmp.path / "kernel.o";
  std::ofstream(elf, std::ios::binary) << bundle->elf;
  auto nm = sk::runProcess({"nm", elf.string()}, {});
  ASSERT_TRUE(nm.ok() && nm->succeeded()) << (nm.ok() ? nm->err : nm.error().message());
  EXPECT_THAT(nm->out, HasSubstr(" T " + d->entry + "\n"));
  for (const std::string& object : d->objects) {
    EXPECT_THAT(nm->out, HasSubstr(" t " + object + "\n"));
    EXPECT_THAT(nm->out, HasSubstr(" t " + sk::ascend::splitSymbol(object, 1) + "\n"));
  }

  // A second compile is the cache's: no tool runs again.
  fs::remove(log);
  auto again = (*s)->compile(list, {.options = "split-mode=2", .fuse = true, .target = "ascend"});
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(again->steps[0].cached);
  EXPECT_FALSE(fs::exists(log)) << readToolLog(log);

  // Running needs CANN's runtime: one error naming it, the simulator named as the alternative.
  if (sk::ascend::aclRuntime().ok()) GTEST_SKIP() << "libascendcl loads here";
  auto buffers = sk::BufferSet::create(list);
  ASSERT_TRUE(buffers.ok());
  sk::Status st = (*s)->run(*again, *buffers);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), sk::ErrorKind::Runtime) << st.error().message();
  EXPECT_THAT(st.error().message(), HasSubstr("no Ascend device: CANN's runtime library (libascendcl.so) not found"));
  EXPECT_THAT(st.error().message(), HasSubstr("--target ascend-sim"));
}

TEST(AscendDevice, TheBundleIsCheckedBeforeUse) {
  sk::ascend::DeviceBundle b;
  b.elf = std::string("\x7f" "ELF and some bytes", 19);
  b.meta.kernelName = "sk_ascend_x";
  b.meta.binFileName = "kernel";
  b.meta.blockDim = 4;
  b.meta.sha256 = sk::sha256Hex(b.elf);
  b.launch = "entry=sk_ascend_x type=AIV_ONLY block_dim=4 buffers=2 profile_bytes=0 split=1";
  const std::string text = sk::ascend::formatDeviceBundle(b);
  auto back = sk::ascend::parseDeviceBundle(text);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->elf, b.elf);
  EXPECT_EQ(back->launch, b.launch);
  EXPECT_EQ(back->meta.blockDim, 4u);

  struct Case {
    std::string bytes, expect;
  } cases[] = {
      {"", "no SK-ASCEND-KERNEL 1 header"},
      {text.substr(0, text.size() - 1), "do not add up"},
      {text + "x", "do not add up"},
      {"SK-ASCEND-KERNEL 1 a b\n", "not two numbers"},
      {std::string(text).replace(text.size() - 1, 1, "?"), "SHA-256"},
      {"SK-ASCEND-KERNEL 1 2 0\n{}", "its JSON is not"},
  };
  for (const Case& c : cases) {
    auto r = sk::ascend::parseDeviceBundle(c.bytes);
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_EQ(r.error().kind(), sk::ErrorKind::BadInput);
    EXPECT_THAT(r.error().message(), HasSubstr(c.expect));
    EXPECT_THAT(r.error().message(), HasSubstr("remove the cache entry"));
  }
}

// Without CANN the device is still created (a Session sets it up with the target); each use names what is
// missing and what to set.
TEST(AscendDevice, TheCannDeviceWithoutCannNamesWhatIsMissing) {
  hideCannTools();
  ::setenv("SK_ASCENDCL", "/nonexistent/libascendcl.so", 1);
  auto b = sk::findBackend("ascend");
  ASSERT_TRUE(b.ok());
  auto dev = (*b)->makeDevice({});
  ASSERT_TRUE(dev.ok()) << dev.error().message();
  EXPECT_EQ((*dev)->target(), "ascend");
  EXPECT_FALSE((*dev)->hostMemory());
  EXPECT_EQ((*dev)->machine().pools[0].count, 24u);
  auto mem = (*dev)->allocate(64);
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.error().kind(), sk::ErrorKind::Runtime);
  EXPECT_THAT(mem.error().message(), HasSubstr("no Ascend device: CANN's runtime library (libascendcl.so) not found"));
  EXPECT_THAT(mem.error().message(), HasSubstr("SK_ASCENDCL"));
  // A broken artifact is refused before any runtime is needed.
  sk::Artifact a;
  a.key = "k";
  a.bytes = std::make_shared<const std::string>("not a bundle");
  auto k = (*dev)->load(a);
  ASSERT_FALSE(k.ok());
  EXPECT_THAT(k.error().message(), HasSubstr("no SK-ASCEND-KERNEL 1 header"));
  // A well-formed bundle whose parts disagree, or that needs what this device does not provide, is refused
  // with the reason; a good one loads without any runtime (registered at the first run).
  auto bundle = [](const std::string& entry, const std::string& launch) {
    sk::ascend::DeviceBundle b;
    b.elf = "elf bytes";
    b.meta.kernelName = entry;
    b.meta.binFileName = "kernel";
    b.meta.blockDim = 4;
    b.meta.sha256 = sk::sha256Hex(b.elf);
    b.launch = launch;
    return std::make_shared<const std::string>(sk::ascend::formatDeviceBundle(b));
  };
  const std::string good = "entry=sk_x type=AIV_ONLY block_dim=4 buffers=2 profile_bytes=0 split=1";
  struct Case {
    std::string entry, launch, expect;
  } cases[] = {
      {"sk_other", good, "disagree"},
      {"sk_x", good + " runtime=0:8", "runtime-scalar slots"},
      {"sk_x", "entry=sk_x type=AIV_ONLY block_dim=4 buffers=2 split=1 notify_words=2 sides=1:0:1", "beside it"},
  };
  for (const Case& c : cases) {
    a.bytes = bundle(c.entry, c.launch);
    auto r = (*dev)->load(a);
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_EQ(r.error().kind(), sk::ErrorKind::BadInput);
    EXPECT_THAT(r.error().message(), HasSubstr(c.expect));
  }
  a.bytes = bundle("sk_x", good);
  auto loaded = (*dev)->load(a);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  // Running it is where the missing runtime shows.
  void* bufs[2] = {nullptr, nullptr};
  sk::Status st = (*dev)->run(**loaded, 4, (*dev)->defaultStream(), bufs, 2);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message(), HasSubstr("no Ascend device"));
}

}  // namespace
