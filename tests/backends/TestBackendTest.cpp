// A back end registered from this file alone (DESIGN section 9): a trivial
// emitter, build recipe and device for a made-up target "testbe", plugged in
// through registerBackend(). Nothing outside this file knows about it; a
// two-op list that names it compiles and runs through Session, and its
// kernel entries show per-target sources and the errors for a missing one.
//
// testbe: one core; the emitter prints a C++ entry that calls every op's
// blocks in program order (one core: program order is every sync the plan
// needs, which the shared sync layout confirms); the recipe builds with the
// system C++ compiler into a shared object; the device has its own memory
// (allocate/upload/download), so Session's upload/run/download path runs.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/Timing.h"
#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/session/PlanOnly.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(SK_SOURCE_ROOT) / "tests" / "backends" / "data";

// ---- emitter ---------------------------------------------------------------

class TestEmitter final : public Emitter {
 public:
  std::string_view name() const override { return "testbe"; }
  std::vector<fs::path> templateFiles() const override { return {}; }
  Expected<GeneratedSource> emit(const FusionPlan& plan, size_t step) const override {
    const SuperKernelPlan& sk = plan.steps.at(step);
    SK_ASSIGN_OR_RETURN(SyncLayout layout, layoutSync(plan, sk));
    std::string decls, body;
    for (uint32_t v : layout.variants) {
      const KernelVariant& var = plan.variants[v];
      std::string params = "unsigned, unsigned";
      for (const ParamDecl& p : var.decl.params)
        params += fmt::format(", {}{}{}", p.kind == ParamKind::Buffer && p.access == Access::Read ? "const " : "",
                              cType(p.dtype), p.kind == ParamKind::Buffer ? "*" : "");
      decls += fmt::format("extern \"C\" void {}({});\n", var.symbol, params);
    }
    for (const Queue& q : sk.queues) {
      for (uint32_t i : q.ops) {
        const PlannedOp& op = sk.ops[i];
        const KernelVariant& var = plan.variants[op.variant];
        std::string args;
        for (size_t a = 0; a < op.args.size(); ++a) {
          const BoundArg& arg = op.args[a];
          const ParamDecl& p = var.decl.params[a];
          if (arg.kind == ParamKind::Buffer) {
            args += fmt::format(", ({}{}*)buf[{}] + {}", p.access == Access::Read ? "const " : "", cType(p.dtype),
                                arg.buffer, arg.offset);
          } else {
            SK_ASSIGN_OR_RETURN(std::string lit, cScalarLiteral(arg.scalar, p.dtype));
            args += ", " + lit;
          }
        }
        body += fmt::format("  for (unsigned b = 0; b < {0}u; ++b) {1}(b, {0}u{2});  // {3}\n", op.blockDim,
                            var.symbol, args, op.name);
      }
    }
    GeneratedSource src;
    src.name = sk.name;
    src.fileName = sanitizeIdentifier(sk.name) + ".cpp";
    src.language = "c++";
    src.text = "#include <cstdint>\n" + decls +
               "extern \"C\" __attribute__((visibility(\"default\"))) int testbe_entry(void* const* buf) {\n" + body +
               "  return 0;\n}\n";
    src.variants = layout.variants;
    src.manifest = stepManifest(plan, sk, "testbe", layout);
    return src;
  }
};

// ---- recipe ----------------------------------------------------------------

class TestRecipe final : public BuildRecipe {
 public:
  std::string_view target() const override { return "testbe"; }
  std::string_view defaultCompiler() const override { return "c++"; }
  std::string_view compilerEnvVar() const override { return "SK_TESTBE_CXX"; }
  Expected<std::string> runtimeDigest() const override { return std::string("testbe runtime v1"); }
  std::vector<std::string> objectFlags(const KernelVariant& v, const Options&, const std::string&) const override {
    std::vector<std::string> f = {"-c", "-fPIC", "-O1", fmt::format("-D{}={}", v.decl.entry, v.symbol)};
    for (const auto& [k, val] : v.macros) f.push_back(fmt::format("-D{}={}", k, val));
    return f;
  }
  std::vector<std::string> objectArgs(const std::vector<std::string>& flags, const KernelVariant& v,
                                      const fs::path& out) const override {
    std::vector<std::string> a = flags;
    a.insert(a.end(), {"-o", out.string(), "-x", "c++", v.decl.sourcePath.string()});
    return a;
  }
  std::string linkKey(const Options&, const std::string&) const override { return "-shared -fPIC -O1"; }
  std::string artifactName() const override { return "testbe.so"; }
  Expected<LinkOutput> link(const LinkRequest& req, const RecipeTools& tools) const override {
    fs::path dir = req.outputFile.parent_path();
    fs::path src = dir / "testbe_entry.cpp";
    std::ofstream(src) << req.source;
    std::vector<std::string> args = {"-shared", "-fPIC", "-O1", "-o", req.outputFile.string(), "-x", "c++",
                                     src.string(), "-x", "none"};
    for (size_t i = 0; i < req.objects.size(); ++i) {
      fs::path o = dir / fmt::format("obj{}.o", i);
      std::ofstream(o, std::ios::binary) << *req.objects[i].bytes;
      args.push_back(o.string());
    }
    SK_ASSIGN_OR_RETURN(ProcessResult r, tools.runCompiler(args, "linking the testbe SuperKernel"));
    return LinkOutput{tools.command(args), r.err};
  }
};

// ---- device ----------------------------------------------------------------

class TestKernel final : public LoadedKernel {
 public:
  TestKernel(void* handle, int (*entry)(void* const*)) : handle_(handle), entry_(entry) {}
  ~TestKernel() override { ::dlclose(handle_); }
  int (*entry() const)(void* const*) { return entry_; }

 private:
  void* handle_;
  int (*entry_)(void* const*);
};

class TestDevice final : public Device {
 public:
  // 4 cores where the static model plans for 1, as a GPU's SM count may differ from its arch's (the calibration
  // test below: the costs must reach the plans all the same).
  TestDevice() : machine_(MachineModel::singlePool("testbe", 4)) {}
  std::string_view target() const override { return "testbe"; }
  const MachineModel& machine() const override { return machine_; }
  Expected<std::shared_ptr<const LoadedKernel>> load(const Artifact& a) override {
    // The verified bytes, never the cache file again.
    fs::path tmp = fs::temp_directory_path() / fmt::format("testbe-{}-{}.so", ::getpid(), a.key.substr(0, 16));
    std::ofstream(tmp, std::ios::binary) << *a.bytes;
    void* h = ::dlopen(tmp.c_str(), RTLD_NOW | RTLD_LOCAL);
    fs::remove(tmp);
    if (!h) return runtimeError(std::string("testbe: ") + ::dlerror());
    auto entry = reinterpret_cast<int (*)(void* const*)>(::dlsym(h, "testbe_entry"));
    if (!entry) {
      ::dlclose(h);
      return runtimeError("testbe: no testbe_entry");
    }
    ++loads;
    return std::shared_ptr<const LoadedKernel>(std::make_shared<TestKernel>(h, entry));
  }
  void* defaultStream() override { return nullptr; }
  Status run(const LoadedKernel& k, uint32_t cores, void*, void* const* buffers, uint32_t n) override {
    if (cores != 1) return runtimeError(fmt::format("testbe has 1 core, asked for {}", cores));
    for (uint32_t i = 0; i < n; ++i)
      if (!owned_.count(buffers[i])) return runtimeError("testbe: a buffer that is not device memory");
    ++runs;
    return static_cast<const TestKernel&>(k).entry()(buffers) == 0 ? Status::success()
                                                                   : runtimeError("testbe: entry failed");
  }
  bool hostMemory() const override { return false; }
  Expected<void*> allocate(size_t bytes) override {
    void* p = std::malloc(bytes ? bytes : 1);
    owned_.insert(p);
    return p;
  }
  void release(void* p) override {
    owned_.erase(p);
    std::free(p);
  }
  Status upload(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    ++uploads;
    return Status::success();
  }
  Status download(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    ++downloads;
    return Status::success();
  }
  Status synchronize(void*) override {
    ++syncs;
    return Status::success();
  }

  static inline int loads = 0, runs = 0, uploads = 0, downloads = 0, syncs = 0;

 private:
  MachineModel machine_;
  std::set<void*> owned_;
};

const bool kRegistered = [] {
  Backend b;
  b.name = "testbe";
  // A static machine description: what the planner plans for, with or without the device.
  // Its sync costs (defaults) and a calibration that "measures" fixed ones: the Session's calibration plumbing
  // (cache, read back by every later plan) through the seam, independent of how busy this machine is.
  b.machineModel = [](const MachineQuery&) -> Expected<MachineModel> {
    MachineModel m = MachineModel::singlePool("testbe", 1);
    m.syncCosts = {1000, 2000, 3000, "testbe defaults"};
    return m;
  };
  b.calibrateSync = [](Device&, const CalibrationContext&) -> Expected<SyncCosts> { return SyncCosts{111, 222, 333, "testbe measured"}; };
  b.makeEmitter = []() -> Expected<std::shared_ptr<const Emitter>> {
    return std::shared_ptr<const Emitter>(std::make_shared<TestEmitter>());
  };
  b.makeRecipe = [] { return std::make_shared<TestRecipe>(); };
  b.makeDevice = [](const DeviceOptions&) -> Expected<std::unique_ptr<Device>> {
    return std::unique_ptr<Device>(std::make_unique<TestDevice>());
  };
  // A kernel key of its own: the shared parser, validator and writer take it with no edit of theirs.
  b.kernelAttributes.push_back({"lanes", 1, 64,  // the SIMD width the kernel is written for
                                [](int64_t v) { return (v & (v - 1)) ? std::string("is not a power of two") : std::string(); },
                                nullptr});
  return registerBackend(std::move(b)).ok();
}();

// scale (x -> y, y = 3x) then add (x + y -> z), one kernel with a source per target.
const char* kTwoOps = R"({
  "format": "superkernel.oplist", "version": 1, "target": "testbe", "arch": "generic",
  "kernels": {
    "scale": {"sources": {"testbe": "kernels/scale_testbe.cpp"}, "entry": "scale", "macros": {"FACTOR": "3.0f"}, "lanes": 8,
              "params": [{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
                         {"name": "y", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
                         {"name": "n", "kind": "scalar", "dtype": "i64"}]},
    "add": {"sources": {"testbe": "kernels/add_testbe.cpp", "cpu": "kernels/add_cpu.cpp"}, "entry": "add",
            "params": [{"name": "x", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
                       {"name": "y", "kind": "buffer", "dtype": "f32", "access": "read", "partition": "block"},
                       {"name": "z", "kind": "buffer", "dtype": "f32", "access": "write", "partition": "block"},
                       {"name": "n", "kind": "scalar", "dtype": "i64"}]}
  },
  "buffers": {"x": {"dtype": "f32", "shape": [1000], "init": "iota"},
              "y": {"dtype": "f32", "shape": [1000]}, "z": {"dtype": "f32", "shape": [1000]}},
  "ops": [
    {"name": "s", "kernel": "scale", "block_dim": 4, "scope": "sk", "args": {"x": "x", "y": "y", "n": 1000}},
    {"name": "a", "kernel": "add", "block_dim": 3, "scope": "sk", "args": {"x": "x", "y": "y", "z": "z", "n": 1000}}
  ]
})";

Session& session() {
  static std::unique_ptr<Session> s = [] {
    SessionOptions so;
    so.diskCache = false;
    so.workers = 2;
    auto r = Session::create(so);
    EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message());
    return std::move(*r);
  }();
  return *s;
}

TEST(TestBackend, RegisteredFromItsOwnFile) {
  ASSERT_TRUE(kRegistered);
  auto b = findBackend("testbe");
  ASSERT_TRUE(b.ok()) << b.error().message();
  auto again = registerBackend(**b);  // a name is registered once
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind(), ErrorKind::Internal);
  EXPECT_EQ(again.error().message(), "target 'testbe' is already registered");
  Backend incomplete = **b;  // every factory is required, the machine model included
  incomplete.name = "testbe-incomplete";
  incomplete.kernelAttributes.clear();
  incomplete.machineModel = nullptr;
  auto missing = registerBackend(incomplete);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "registerBackend: a back end needs a name, a machine model, an emitter, a recipe and a device factory");
  // The registry is the one list: an op list may name the new target at once.
  auto names = targetNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "testbe"), names.end());
  EXPECT_TRUE(isRegisteredTarget("testbe"));
  EXPECT_EQ(kernelsFolderOf("testbe"), "testbe");
  auto parsed = parseOpList(kTwoOps, "two_ops.json", kData);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message();
}

TEST(TestBackend, DefinesItsOwnKernelKeys) {
  auto list = parseOpList(kTwoOps, "two_ops.json", kData);
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list->kernels.at(0).attribute("lanes"), 8);
  EXPECT_FALSE(list->kernels.at(1).attributes.count("lanes"));
  EXPECT_NE(writeOpList(*list).find("\"lanes\": 8"), std::string::npos) << "written back out";
  std::string text = kTwoOps;
  auto swap = [&](const std::string& from, const std::string& to) { text.replace(text.find(from), from.size(), to); };
  swap("\"lanes\": 8", "\"lanes\": 6");
  auto bad = parseOpList(text, "two_ops.json", kData);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "two_ops.json: kernels.scale.lanes: 6 is not a power of two");
  swap("\"lanes\": 6", "\"lanes\": 99");
  bad = parseOpList(text, "two_ops.json", kData);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("kernels.scale.lanes"), std::string::npos) << bad.error().message();
  // A key no back end defines: the parser's unknown key, the validator's for a declaration built in C++.
  swap("\"lanes\": 99", "\"lanez\": 8");
  bad = parseOpList(text, "two_ops.json", kData);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("unknown key \"lanez\""), std::string::npos) << bad.error().message();
  OpList built = *list;
  built.kernels.at(0).attributes["lanez"] = 8;
  Status st = validateOpList(built);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("kernels.scale.lanez: no back end defines the kernel key \"lanez\""),
            std::string::npos)
      << st.error().message();
  // A key is one back end's.
  auto b = findBackend("testbe");
  ASSERT_TRUE(b.ok());
  Backend other = **b;
  other.name = "testbe-lanes";
  st = registerBackend(other);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "registerBackend: kernel key 'lanes' is defined by 'testbe' already");
}

TEST(TestBackend, OneBackEndIsTheHost) {
  EXPECT_EQ(hostTargetName(), "cpu");
  auto b = findBackend("testbe");
  ASSERT_TRUE(b.ok());
  Backend second = **b;
  second.name = "testbe-host";
  second.host = true;
  second.kernelAttributes.clear();
  auto st = registerBackend(second);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), ErrorKind::Internal);
  EXPECT_EQ(st.error().message(), "registerBackend: 'cpu' is the host target already");
  EXPECT_FALSE(isRegisteredTarget("testbe-host"));
}

TEST(TestBackend, CompilesAndRunsATwoOpListThroughSession) {
  auto list = parseOpList(kTwoOps, "two_ops.json", kData);
  ASSERT_TRUE(list.ok()) << list.error().message();
  // "sources" round-trips through the writer.
  auto again = parseOpList(writeOpList(*list), list->origin, list->baseDir);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(*again == *list);
  Session& s = session();
  auto fused = s.compile(*list);
  ASSERT_TRUE(fused.ok()) << fused.error().message();
  ASSERT_EQ(fused->plan.steps.size(), 1u);
  EXPECT_TRUE(fused->plan.steps[0].fused);
  EXPECT_EQ(fused->plan.steps[0].numCores, 1u);  // the back end's machine model (Backend::machineModel)
  EXPECT_EQ(nlohmann::json::parse(fused->steps[0].artifact.artifact->manifest)["artifact"], "testbe.so");
  EXPECT_NE(fused->steps[0].source.text.find("testbe_entry"), std::string::npos);
  EXPECT_NE(fused->steps[0].source.manifest.find("\"target\":\"testbe\""), std::string::npos);
  CompileRequest reference;
  reference.fuse = false;
  auto unfused = s.compile(*list, reference);
  ASSERT_TRUE(unfused.ok()) << unfused.error().message();
  EXPECT_EQ(unfused->plan.steps.size(), 2u);

  auto a = BufferSet::create(*list);
  auto b = BufferSet::create(*list);
  ASSERT_TRUE(a.ok() && b.ok());
  const int uploadsBefore = TestDevice::uploads;
  ASSERT_TRUE(s.run(*fused, *a).ok());
  ASSERT_TRUE(s.run(*unfused, *b).ok());
  EXPECT_GT(TestDevice::uploads, uploadsBefore);  // not host memory: uploaded and downloaded
  const float* z = static_cast<const float*>(a->data(static_cast<size_t>(a->find("z"))));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(z[i], static_cast<float>(i) * 4.0f) << i;
  auto diff = a->compare(*b);
  ASSERT_TRUE(diff.ok());
  EXPECT_FALSE(diff->has_value());
  // The cpu device was not involved: it has no artifact for this target.
  EXPECT_GE(TestDevice::runs, 3);
}

// sk-compile --run's timer on a device with its own memory: the buffers are
// uploaded once per side, never downloaded while timing, and every timed run
// ends with Device::synchronize (so an asynchronous device's work is timed).
// Session::calibrateSync caches what the back end measured under the cache directory; later compiles and
// --plan-only of that directory plan with it, other directories with the back end's defaults.
TEST(TestBackend, ItsSyncCalibrationIsCachedAndPlannedWith) {
  char tmpl[] = "/tmp/sk-testbe-calib-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  auto list = parseOpList(kTwoOps, "two_ops.json", kData);
  ASSERT_TRUE(list.ok()) << list.error().message();
  const char* env = std::getenv("SK_SYNC_COSTS");
  ASSERT_TRUE(env == nullptr || *env == '\0') << "SK_SYNC_COSTS would override what this test checks";
  {
    SessionOptions so;
    so.workers = 2;
    so.cacheDir = dir;
    auto s = Session::create(so);
    ASSERT_TRUE(s.ok()) << s.error().message();
    auto before = (*s)->compile(*list);
    ASSERT_TRUE(before.ok()) << before.error().message();
    EXPECT_EQ(before->plan.machine.syncCosts.source, "testbe defaults");
    auto c = (*s)->calibrateSync("testbe");
    ASSERT_TRUE(c.ok()) << c.error().message();
    // Saved under the device's 4 cores, and under the 1 core its plans look up (MachineQuery "native").
    const std::filesystem::path measured = dir / "calibration" / "testbe-4.json";
    const std::filesystem::path file = dir / "calibration" / "testbe-1.json";
    EXPECT_TRUE(std::filesystem::exists(measured));
    EXPECT_TRUE(std::filesystem::exists(file));
    EXPECT_EQ(c->source, "calibrated, " + measured.string() + " (also " + file.string() + ")");
    auto after = (*s)->compile(*list);
    ASSERT_TRUE(after.ok()) << after.error().message();
    // The plan read the file of its own core count.
    SyncCosts read = *c;
    read.source = "calibrated, " + file.string();
    EXPECT_EQ(after->plan.machine.syncCosts, read);
    EXPECT_NE(after->plan.report.syncModel.costs.find("barrier 111 ns, counter 222 ns, flag 333 ns (calibrated, "),
              std::string::npos)
        << after->plan.report.syncModel.costs;
  }
  PlanOnlyConfig pc;
  pc.cacheDir = dir;
  auto planned = planOnly(*list, {}, pc);
  ASSERT_TRUE(planned.ok()) << planned.error().message();
  EXPECT_EQ(planned->plan.plan.machine.syncCosts.barrierNs, 111);
  pc.diskCache = false;  // no cache directory: the back end's defaults
  planned = planOnly(*list, {}, pc);
  ASSERT_TRUE(planned.ok());
  EXPECT_EQ(planned->plan.plan.machine.syncCosts.source, "testbe defaults");
  std::filesystem::remove_all(dir);
}

TEST(TestBackend, TimingKeepsBuffersOnTheDeviceAndWaitsForEachRun) {
  auto list = parseOpList(kTwoOps, "two_ops.json", kData);
  ASSERT_TRUE(list.ok()) << list.error().message();
  Session& s = session();
  auto fused = s.compile(*list);
  ASSERT_TRUE(fused.ok()) << fused.error().message();
  CompileRequest reference;
  reference.fuse = false;
  auto unfused = s.compile(*list, reference);
  ASSERT_TRUE(unfused.ok()) << unfused.error().message();
  auto a = BufferSet::create(*list);
  auto b = BufferSet::create(*list);
  ASSERT_TRUE(a.ok() && b.ok());
  tools::TimingConfig cfg;
  cfg.warmups = 1;
  cfg.samples = 2;
  cfg.sampleMs = 1;
  cfg.settleMs = 0;
  const int uploads0 = TestDevice::uploads, downloads0 = TestDevice::downloads, runs0 = TestDevice::runs,
            syncs0 = TestDevice::syncs;
  auto t = tools::timeRuns(s, *fused, *a, *unfused, *b, cfg);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(TestDevice::uploads - uploads0, static_cast<int>(2 * list->buffers.size()));
  EXPECT_EQ(TestDevice::downloads - downloads0, 0);
  // One synchronize per plan run: with F fused runs (1 launch each) and U unfused runs (2 launches each),
  // syncs = F + U and launches = F + 2U. Each side runs at least 1 warm-up + 1 probe + 2 x (1 + 1) times.
  const int launches = TestDevice::runs - runs0, syncs = TestDevice::syncs - syncs0;
  const int unfusedRuns = launches - syncs, fusedRuns = 2 * syncs - launches;
  EXPECT_GE(fusedRuns, 6) << launches << " launches, " << syncs << " synchronize calls";
  EXPECT_GE(unfusedRuns, 6) << launches << " launches, " << syncs << " synchronize calls";

  // A plan the session did not compile has no device to time on.
  CompiledPlan bare;
  auto none = tools::timeRuns(s, bare, *a, *unfused, *b, cfg);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("the plans were not compiled by a session"), std::string::npos);
  // The toolchain of a target the session does not know is an error naming it, not a crash.
  auto tc = s.toolchain("no_such_target");
  ASSERT_FALSE(tc.ok());
  EXPECT_EQ(tc.error().kind(), ErrorKind::BadInput);
}

TEST(TestBackend, KernelWithoutASourceForTheTargetIsAClearError) {
  auto list = parseOpList(kTwoOps, "two_ops.json", kData);
  ASSERT_TRUE(list.ok()) << list.error().message();
  CompileRequest req;
  req.target = "cpu";
  auto cp = session().compile(*list, req);
  ASSERT_FALSE(cp.ok());
  EXPECT_EQ(cp.error().kind(), ErrorKind::BadInput);
  EXPECT_NE(cp.error().message().find("kernel \"scale\" has no source for target cpu (it has: testbe)"),
            std::string::npos)
      << cp.error().message();
}

TEST(TestBackend, OneListServesEveryTargetAndTheRequestPicks) {
  // The list says cpu, but --target (CompileRequest::target) may pick testbe:
  // the list loads although "scale" has no cpu source.
  std::string text = kTwoOps;
  text.replace(text.find("\"target\": \"testbe\""), std::string("\"target\": \"testbe\"").size(), "\"target\": \"cpu\"");
  auto list = parseOpList(text, "two_ops_cpu.json", kData);
  ASSERT_TRUE(list.ok()) << list.error().message();
  CompileRequest req;
  req.target = "testbe";
  auto cp = session().compile(*list, req);
  ASSERT_TRUE(cp.ok()) << cp.error().message();
  EXPECT_EQ(cp->plan.target, "testbe");
  auto cpu = session().compile(*list);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.error().message().find("two_ops_cpu.json: kernels.scale.sources: kernel \"scale\" has no source for "
                                       "target cpu (it has: testbe)"),
            std::string::npos)
      << cpu.error().message();
}

TEST(TestBackend, BuiltinMissingForTheTargetNamesTheTargetsThatHaveIt) {
  auto k = findBuiltinKernel("add_f32", "testbe");
  ASSERT_FALSE(k.ok());
  // Every back end shipping add_f32 is listed (cpu, and ascend and cuda since kernels/ascend and kernels/cuda exist).
  EXPECT_NE(k.error().message().find("builtin kernel \"add_f32\" has no testbe version (targets that have it: "),
            std::string::npos)
      << k.error().message();
  EXPECT_NE(k.error().message().find("cpu, cuda)"), std::string::npos) << k.error().message();
  EXPECT_TRUE(findBuiltinKernel("add_f32", "cpu").ok());
}

}  // namespace
}  // namespace sk
