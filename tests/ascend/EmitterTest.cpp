// The ascend emitter: a golden file per feature (tests/ascend/golden/, only
// rewritten by scripts/regen-ascend-goldens.sh, i.e. SK_REGEN_GOLDENS=1),
// and every golden built and run in the simulator against the unfused
// reference (each op launched alone), compared bit for bit. Then generated
// code with one flag removed must fail, never pass.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "AscendTestSteps.h"
#include "GoldenFile.h"
#include "WorkDir.h"
#include "ascend/SimBuild.h"
#include "superkernel/ascend/Simulator.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendSuperKernel.h"
#include "backends/ascend/AscendSimSideLaunches.h"

namespace fs = std::filesystem;
using namespace sktest::ascend;

namespace {

fs::path goldenDir() { return fs::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "golden"; }

void checkGolden(const std::string& name, const std::string& text) {
  sktest::checkGoldenFile(goldenDir(), name, text, "scripts/regen-ascend-goldens.sh");
}

sk::Options options(const char* text) {
  auto o = sk::parseOptions(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : sk::Options{};
}

using Buffers = std::vector<std::vector<uint8_t>>;

Buffers initialBuffers(const AscendStep& s) {
  Buffers out;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (const sk::PlanBuffer& b : s.buffers) {
    std::vector<uint8_t> bytes(b.elements * sk::dtypeSize(b.dtype));
    if (b.dtype == sk::DType::F32) {
      for (size_t i = 0; i < b.elements; ++i) {
        const float f = d(gen);
        std::memcpy(&bytes[i * 4], &f, 4);
      }
    } else if (b.dtype == sk::DType::BF16) {
      for (size_t i = 0; i < b.elements; ++i) {
        const float f = d(gen);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        const uint16_t h = static_cast<uint16_t>(u >> 16);
        std::memcpy(&bytes[i * 2], &h, 2);
      }
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

// The step's runtime scalars' slots point into `bufs`, as the device's do into the run's buffers.
void passRuntimeValues(const AscendStep& s, Buffers& bufs, sk::ascend_sim::LaunchSpec& spec) {
  for (size_t k = 0; k < s.runtimeValues.size(); ++k)
    spec.runtimeValues[k] = bufs[s.runtimeValues[k].buffer].data() + s.runtimeValues[k].byteOffset;
  spec.numRuntimeValues = static_cast<uint32_t>(s.runtimeValues.size());
}

// Build and launch one step (fused with its source, or unfused) on `bufs`.
sk::Status runStep(const AscendStep& s, const AscendSource* src, Buffers& bufs, const fs::path& work,
                   std::vector<uint8_t>* profile = nullptr, void* notify = nullptr) {
  auto cfg = sktest::ascend::defaultSimBuildConfig(work);
  if (!cfg) return cfg.error();
  auto art = sktest::ascend::buildForSimulator(s, src, *cfg);
  if (!art) return art.error();
  auto mod = sk::ascend_sim::Module::load(art->sharedObject.string());
  if (!mod) return mod.error();
  auto entry = mod->entry(art->entry);
  if (!entry) return entry.error();
  sk::ascend_sim::LaunchSpec spec;
  spec.type = static_cast<sk::ascend_sim::TaskType>(static_cast<uint32_t>(s.type));
  spec.blockDim = s.blockDim;
  spec.entry = *entry;
  spec.enter = mod->enter();
  spec.name = s.name;
  spec.watchdog = std::chrono::milliseconds(5000);
  std::vector<uint8_t> prof;
  std::vector<uint64_t> table;
  if (src) {
    std::vector<void*> ptrs;
    for (auto& b : bufs) ptrs.push_back(b.data());
    if (src->launch.profileBytes) prof.assign(src->launch.profileBytes, 0xff);
    spec.args =
        sk::ascend::fusedLaunchArguments(src->launch.bufferTable, ptrs.data(), static_cast<uint32_t>(ptrs.size()),
                                         table, notify, src->launch.profileBytes ? prof.data() : nullptr);
  } else {
    for (const AscendArg& a : s.ops[0].args) spec.args.push_back(bufs[a.buffer].data() + a.byteOffset);
  }
  passRuntimeValues(s, bufs, spec);
  sk::Status st = sk::ascend_sim::launch(spec);
  if (profile) *profile = std::move(prof);
  return st;
}

// The unfused reference of a step: each op launched alone, in order.
Buffers reference(const AscendStep& s) {
  static std::map<std::string, Buffers> memo;  // per step name (the references do not depend on options)
  auto it = memo.find(s.name);
  if (it != memo.end()) return it->second;
  Buffers bufs = initialBuffers(s);
  // Every op's object in one shared object, then one launch per op.
  std::vector<AscendStep> steps;
  for (size_t i = 0; i < s.ops.size(); ++i) steps.push_back(unfused(s, i));
  std::vector<sktest::ascend::SimBuildItem> items;
  for (const AscendStep& u : steps) items.push_back({&u, nullptr});
  auto cfg = sktest::ascend::defaultSimBuildConfig(workDir("reference"));
  EXPECT_TRUE(cfg.ok());
  auto lib = sktest::ascend::buildForSimulator(items, *cfg, "reference");
  EXPECT_TRUE(lib.ok()) << lib.error().message();
  auto mod = sk::ascend_sim::Module::load(lib->sharedObject.string());
  EXPECT_TRUE(mod.ok());
  for (size_t i = 0; i < steps.size(); ++i) {
    sk::ascend_sim::LaunchSpec spec;
    spec.type = static_cast<sk::ascend_sim::TaskType>(static_cast<uint32_t>(steps[i].type));
    spec.blockDim = steps[i].blockDim;
    spec.entry = *mod->entry(lib->entries[i]);
    spec.enter = mod->enter();
    spec.name = steps[i].name;
    for (const AscendArg& a : steps[i].ops[0].args) spec.args.push_back(bufs[a.buffer].data() + a.byteOffset);
    passRuntimeValues(steps[i], bufs, spec);
    sk::Status st = sk::ascend_sim::launch(spec);
    EXPECT_TRUE(st.ok()) << st.error().message();
  }
  return memo[s.name] = bufs;
}

struct Case {
  const char* golden;
  AscendStep (*make)(const sk::Options&);
  const char* options;
  uint32_t syncPoints;
};

const Case kCases[] = {
    {"chain_default.cpp", chain, "", 2},  // split-mode 4, per-func preload, early-start 1
    {"chain_early_start_0.cpp", chain, "early-start=0:split-mode=1", 2},
    {"chain_early_start_2.cpp", chain, "early-start=2:split-mode=1", 2},
    {"chain_plain.cpp", chain, "split-mode=1:preload-code=none:func-align=0", 2},
    {"chain_debug_sync_all.cpp", chain, "debug-sync-all=1:preload-code=max:split-mode=1", 2},
    {"chain_profiling.cpp", chain, "profiling=1:split-mode=1", 2},
    {"vector_only.cpp", vectorOnly, "split-mode=2", 2},
    {"cube_only.cpp", cubeOnly, "split-mode=1", 2},
    {"cube_only_early_start_2.cpp", cubeOnly, "split-mode=1:early-start=2", 1},
    {"chain_stream_fusion.cpp", chain, "stream-fusion=1:split-mode=2:profiling=1", 2},
    {"vector_only_stream_fusion.cpp", vectorOnly, "stream-fusion=1:split-mode=1", 2},
    {"wide_buffer_table.cpp", wide, "split-mode=1:preload-code=none", 38},
    {"wide_buffer_table_stream_fusion.cpp", wide, "stream-fusion=1:split-mode=2", 38},
    // feed-sync-all: a kernel_sync op (SyncAll twice per launch) on fewer vector cores than the SuperKernel.
    {"feed_sync_all.cpp", feedVector, "feed-sync-all=1:split-mode=2", 2},
    {"feed_sync_all_mix.cpp", feedMix, "feed-sync-all=1:split-mode=1", 3},
    {"feed_sync_all_stream_fusion.cpp", feedMix, "feed-sync-all=1:stream-fusion=1:split-mode=1:early-start=2", 2},
    // Runtime scalars: two ropes read their position from the launch's slot 0, each after the bump it waits for.
    {"runtime_scalar.cpp", runtimeScalar, "split-mode=2", 3},
};

// One test for all cases (one process: the unfused references are built once per step).
TEST(AscendEmitterGolden, MatchesGoldenAndRunsLikeTheUnfusedOps) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.golden);
    const AscendStep step = c.make(options(c.options));
    auto src = sk::ascend::emitAscend(step);
    ASSERT_TRUE(src.ok()) << src.error().message();
    checkGolden(c.golden, src->text);
    EXPECT_EQ(src->syncPoints, c.syncPoints);

    Buffers fused = initialBuffers(step);
    std::vector<uint8_t> profile;
    std::string dir = c.golden;
    sk::Status st = runStep(step, &*src, fused, workDir(dir.substr(0, dir.find('.'))), &profile);
    ASSERT_TRUE(st.ok()) << st.error().message();
    const Buffers ref = reference(step);
    // Equality proves something only if the reference computed something (a launch that runs nothing leaves
    // both sides as initialised).
    EXPECT_NE(ref, initialBuffers(step)) << "the unfused reference changed no buffer";
    for (size_t b = 0; b < fused.size(); ++b) EXPECT_EQ(fused[b], ref[b]) << "buffer " << step.buffers[b].name;
    if (step.buffers[0].name == "step") {
      int64_t pos = 0;
      std::memcpy(&pos, fused[0].data(), sizeof pos);
      EXPECT_EQ(pos, 6) << "two bumps by 3";
    }
    if (src->launch.profileBytes) {
      // Every core recorded each op's begin and end, in order, with non-decreasing cycles.
      const uint32_t cores = step.poolCores(Pool::Cube) + step.poolCores(Pool::Vector);
      for (uint32_t core = 0; core < cores; ++core) {
        const uint8_t* base = profile.data() + static_cast<size_t>(core) * src->profileSlots * 16;
        uint32_t ends = 0;
        uint64_t last = 0;
        for (uint32_t r = 0; r < src->profileSlots; ++r) {
          uint32_t kind;
          uint64_t cyc;
          std::memcpy(&kind, base + r * 16 + 4, 4);
          std::memcpy(&cyc, base + r * 16 + 8, 8);
          ASSERT_LE(kind, 3u) << "core " << core << " record " << r;
          EXPECT_GE(cyc, last);
          last = cyc;
          ends += kind == 1;
        }
        EXPECT_EQ(ends, step.ops.size()) << "core " << core;
      }
    }
  }
}

// Side launches: chainWithSide's SuperKernel run beside a host stand-in for its side launch (r = 2 * y, from
// proj's output y into add's input r), through the device's protocol (AscendSimSideLaunches.h), the side launch held
// back `delay` after its signal. Returns the run's status; `ok` says whether the data shows both orders:
// r holds 2 * proj's final y (the side launch started after proj), z = y + r (add waited for it).
struct SideRunResult {
  sk::Status status;
  bool ordered = false;
};
SideRunResult runBesideHost(const AscendStep& step, const AscendSource& src, const std::string& dir,
                            std::chrono::milliseconds delay, bool sideFails = false) {
  Buffers bufs = initialBuffers(step);
  auto* y = reinterpret_cast<float*>(bufs[4].data());
  auto* r = reinterpret_cast<float*>(bufs[5].data());
  auto* z = reinterpret_cast<float*>(bufs[6].data());
  std::vector<sk::ascend::SideLaunchRun> sides = {{"tiling", 1, [&]() -> sk::Status {
                                                     if (sideFails) return sk::runtimeError("tiling failed");
                                                     for (size_t i = 0; i < 37; ++i) r[i] = 2.0f * y[i];
                                                     return sk::Status::success();
                                                   }}};
  SideRunResult out;
  out.status = sk::ascend::runWithSideLaunches(
      src.launch.notifyWords, src.launch.sides, step.name,
      [&](void* notify) { return runStep(step, &src, bufs, workDir(dir), nullptr, notify); }, sides, delay);
  out.ordered = true;
  for (size_t i = 0; i < 37; ++i) out.ordered = out.ordered && r[i] == 2.0f * y[i] && z[i] == y[i] + r[i];
  return out;
}

TEST(AscendEmitterGolden, SideLaunchesNotifyAndWaitInGm) {
  for (const auto& [golden, opts] : {std::pair<const char*, const char*>{"side_launches.cpp", "split-mode=1"},
                                    {"side_launches_stream_fusion.cpp", "stream-fusion=1:split-mode=2:profiling=1"}}) {
    SCOPED_TRACE(golden);
    const AscendStep step = chainWithSide(options(opts));
    auto src = sk::ascend::emitAscend(step);
    ASSERT_TRUE(src.ok()) << src.error().message();
    checkGolden(golden, src->text);
    // 8 cube cores' notify words, then the done word.
    EXPECT_EQ(src->launch.notifyWords, 9u);
    ASSERT_EQ(src->launch.sides.size(), 1u);
    EXPECT_EQ(src->launch.sides[0].first, 0u);
    EXPECT_EQ(src->launch.sides[0].count, 8u);
    EXPECT_EQ(src->launch.sides[0].done, 8u);
    const SideRunResult r = runBesideHost(step, *src, "side", std::chrono::milliseconds(100));
    ASSERT_TRUE(r.status.ok()) << r.status.error().message();
    EXPECT_TRUE(r.ordered);
  }
}

// The wait taken out: add reads r before the (held back) side launch wrote it, a wrong result. The notify
// taken out: the side launch never gets its signal and says so. A failing side launch fails the run without
// hanging the SuperKernel (its done word says 2).
TEST(AscendEmitter, BrokenSideLaunchSyncIsCaught) {
  const AscendStep step = chainWithSide(options("split-mode=1"));
  auto src = sk::ascend::emitAscend(step);
  ASSERT_TRUE(src.ok()) << src.error().message();
  auto cutLine = [&](const std::string& needle) {
    sk::ascend::AscendSource broken = *src;
    const size_t at = broken.text.find(needle);
    EXPECT_NE(at, std::string::npos) << needle;
    if (at == std::string::npos) return broken;
    const size_t begin = broken.text.rfind('\n', at) + 1;
    broken.text.erase(begin, broken.text.find('\n', at) + 1 - begin);
    return broken;
  };
  {
    const SideRunResult r = runBesideHost(step, cutLine("SkWaitDone(sk_notify, 8);"), "side_nowait",
                                          std::chrono::milliseconds(200));
    ASSERT_TRUE(r.status.ok()) << r.status.error().message();
    EXPECT_FALSE(r.ordered) << "add read the side launch's output without waiting and still got it";
  }
  {
    const SideRunResult r = runBesideHost(step, cutLine("SkNotify(sk_notify, 0 + get_block_idx());"),
                                          "side_nonotify", std::chrono::milliseconds(0));
    // add waits for tiling, which waits for the notify: the simulator's watchdog stops the SuperKernel, and the
    // error says why the side launch never came.
    ASSERT_FALSE(r.status.ok()) << "a SuperKernel that never notifies its side launch passed";
    EXPECT_NE(r.status.error().message().find("watchdog"), std::string::npos) << r.status.error().message();
    EXPECT_NE(r.status.error().message().find("without setting its notify words [0, 8) (a missing notify)"),
              std::string::npos)
        << r.status.error().message();
  }
  {
    const SideRunResult r = runBesideHost(step, *src, "side", std::chrono::milliseconds(0), true);
    ASSERT_FALSE(r.status.ok());
    EXPECT_NE(r.status.error().message().find("tiling failed"), std::string::npos) << r.status.error().message();
  }
}

// One flag taken out of correct generated code: the simulator reports it, the launch never passes silently.
TEST(AscendEmitter, RemovingOneFlagIsCaught) {
  const AscendStep step = chain(options("split-mode=1"));
  auto src = sk::ascend::emitAscend(step);
  ASSERT_TRUE(src.ok());
  // Each cut is live code of the golden chain_plain-like text: the vector cores' signal before the
  // projection, their wait, and the config the projection's own WaitPreTaskEnd reads.
  for (const char* cut : {"  if ASCEND_IS_AIV {\n    AscendC::SetNextTaskStartImpl();\n  }\n",
                          "  if ASCEND_IS_AIV {\n    AscendC::WaitPreTaskEndImpl<4>();\n  }\n",
                          "  g_super_kernel_early_start_config = 4;\n"}) {
    SCOPED_TRACE(cut);
    sk::ascend::AscendSource broken = *src;
    const size_t at = broken.text.find(cut);
    ASSERT_NE(at, std::string::npos);
    broken.text.erase(at, std::strlen(cut));
    Buffers bufs = initialBuffers(step);
    sk::Status st = runStep(step, &broken, bufs, workDir("broken"));
    ASSERT_FALSE(st.ok()) << "the broken SuperKernel passed";
    const std::string& m = st.error().message();
    EXPECT_TRUE(m.find("deadlock") != std::string::npos || m.find("flags left pending") != std::string::npos ||
                m.find("g_super_kernel_early_start_config was not set") != std::string::npos)
        << m;
  }
}

// The feeding SyncAll calls taken out of correct generated code, or one call short: the op's cores wait for
// a SyncAll round the other cores never join, and the simulator reports the hang (never a silent pass).
TEST(AscendEmitter, MissingFeedSyncAllIsCaught) {
  const AscendStep step = feedVector(options("feed-sync-all=1:split-mode=1"));
  auto src = sk::ascend::emitAscend(step);
  ASSERT_TRUE(src.ok()) << src.error().message();
  const std::string feed = "      for (int32_t i = 0; i < 2; ++i) {\n        AscendC::SyncAll<true>();\n      }\n";
  ASSERT_NE(src->text.find(feed), std::string::npos) << src->text;
  struct Cut {
    const char* what;
    std::string replacement;
  };
  for (const Cut& cut : {Cut{"no feeding", ""}, Cut{"one SyncAll short", "      AscendC::SyncAll<true>();\n"}}) {
    SCOPED_TRACE(cut.what);
    sk::ascend::AscendSource broken = *src;
    broken.text.replace(broken.text.find(feed), feed.size(), cut.replacement);
    Buffers bufs = initialBuffers(step);
    sk::Status st = runStep(step, &broken, bufs, workDir("broken_feed"));
    ASSERT_FALSE(st.ok()) << "the SuperKernel without its feeding SyncAll passed";
    const std::string& m = st.error().message();
    EXPECT_NE(m.find("deadlock"), std::string::npos) << m;
    EXPECT_NE(m.find("feed-sync-all"), std::string::npos) << "the deadlock report names the likely cause: " << m;
  }
}

// feed-sync-all=0 and a kernel_sync op narrower than its pool: it would hang, so it is bad input naming the
// option. An op on every vector core needs no feeding: generated (and run) without any, whatever the option.
TEST(AscendEmitter, KernelSyncWithoutFeedSyncAll) {
  auto off = sk::ascend::emitAscend(feedVector(options("split-mode=1")));
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_NE(off.error().message().find("op reduce syncs its own blocks (kernel_sync)"), std::string::npos)
      << off.error().message();
  EXPECT_NE(off.error().message().find("set feed-sync-all=1"), std::string::npos) << off.error().message();

  for (const char* opts : {"split-mode=1", "split-mode=1:feed-sync-all=1"}) {
    SCOPED_TRACE(opts);
    AscendStep wide = feedVector(options(opts));
    wide.name = "feedwide";
    wide.ops[1].blockDim = 6;  // every vector core runs a block: SyncAll is a barrier among them already
    auto src = sk::ascend::emitAscend(wide);
    ASSERT_TRUE(src.ok()) << src.error().message();
    EXPECT_EQ(src->text.find("feed-sync-all"), std::string::npos);
    EXPECT_EQ(src->text.find("SyncAll<true>"), std::string::npos);
    Buffers fused = initialBuffers(wide);
    sk::Status st = runStep(wide, &*src, fused, workDir("feedwide"));
    ASSERT_TRUE(st.ok()) << st.error().message();
    const Buffers ref = reference(wide);
    for (size_t b = 0; b < fused.size(); ++b) EXPECT_EQ(fused[b], ref[b]) << "buffer " << wide.buffers[b].name;
  }

  AscendStep cube = cubeOnly(options("feed-sync-all=1"));
  cube.ops[1].kernelSync = true;
  cube.ops[1].syncAllCalls = 1;
  auto c = sk::ascend::emitAscend(cube);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), sk::ErrorKind::Internal);  // makeAscendStep refuses it (AscendScenarios)
  EXPECT_NE(c.error().message().find("a cube kernel_sync sub-kernel"), std::string::npos) << c.error().message();
  AscendStep uncounted = feedVector(options("feed-sync-all=1"));
  for (AscendOp& op : uncounted.ops) op.syncAllCalls = 0;
  auto u = sk::ascend::emitAscend(uncounted);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.error().message().find("kernel_sync without a SyncAll count"), std::string::npos)
      << u.error().message();
}

TEST(AscendEmitter, RejectsWhatItCannotGenerate) {
  auto s = chain(options(""));
  s.ops[2].blockDim = 17;  // 16 vector cores
  auto wide = sk::ascend::emitAscend(s);
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error().kind(), sk::ErrorKind::Internal) << wide.error().message();
  EXPECT_NE(wide.error().message().find("op " + s.ops[2].name + ": 17 block(s) on 16 vector core(s)"),
            std::string::npos)
      << wide.error().message();
  // A side launch said to wait for a vector op that the cube pool runs (the step is inconsistent).
  auto side = chainWithSide(options(""));
  side.sides[0].waitBefore[static_cast<int>(Pool::Cube)] = 2;  // add runs on vector cores
  auto src = sk::ascend::emitAscend(side);
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.error().message().find("op 2 is not an op of the cube pool"), std::string::npos)
      << src.error().message();
}

TEST(AscendEmitter, PreloadUnits) {
  using sk::PreloadCode;
  EXPECT_EQ(sk::ascend::preloadUnits(PreloadCode::None, 5000, Pool::Cube), 0);
  EXPECT_EQ(sk::ascend::preloadUnits(PreloadCode::PerFunc, 0, Pool::Vector), 1);
  EXPECT_EQ(sk::ascend::preloadUnits(PreloadCode::PerFunc, 2048, Pool::Vector), 1);
  EXPECT_EQ(sk::ascend::preloadUnits(PreloadCode::PerFunc, 2049, Pool::Vector), 2);
  EXPECT_EQ(sk::ascend::preloadUnits(PreloadCode::PerFunc, 1 << 20, Pool::Vector), 8);
  EXPECT_EQ(sk::ascend::preloadUnits(PreloadCode::PerFunc, 1 << 20, Pool::Cube), 16);
  EXPECT_EQ(sk::ascend::preloadUnits(PreloadCode::Max, 1, Pool::Cube), 16);
}

}  // namespace
