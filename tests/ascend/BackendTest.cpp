// The ascend back end's seam parts on their own: the machine model, the
// launch descriptor (what the device reads back from a loaded artifact: bad
// text is an error, never a crash), the device's core count, and the emitter
// refusing a plan whose variants were not specialised for ascend.
#include <gtest/gtest.h>

#include <sstream>

#include "superkernel/cache/Cache.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/plan/Plan.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendMachine.h"
#include "backends/ascend/AscendBuild.h"
#include "backends/ascend/AscendStep.h"

namespace fs = std::filesystem;

namespace {

using sk::ascend::LaunchDescriptor;

TEST(AscendBackend, MachineModel) {
  const sk::MachineModel m = sk::ascend::ascendMachineModel(8);
  EXPECT_EQ(m.target, "ascend-sim");
  ASSERT_EQ(m.pools.size(), 2u);
  EXPECT_EQ(m.pools[0], (sk::CorePool{sk::CoreType::Cube, 8}));
  EXPECT_EQ(m.pools[1], (sk::CorePool{sk::CoreType::Vector, 16}));
  EXPECT_EQ(m.defaultSplitMode, 4);
  EXPECT_EQ(sk::ascend::defaultSplitMode(), 4);
  EXPECT_TRUE(m.staticArguments);
  // Every option applies on ascend (feed-sync-all: kernel_sync ops) but preload-data, a cpu cache warm-up.
  ASSERT_EQ(m.inapplicable.size(), 1u);
  EXPECT_EQ(m.inapplicable[0].key, "preload-data");
  EXPECT_TRUE(m.check().ok());
  EXPECT_EQ(sk::Options{}.effectiveSplitMode(m.defaultSplitMode), 4);
}

TEST(AscendBackend, DeviceCoresAreAiCores) {
  sk::DeviceOptions o;
  o.cores = 3;
  auto d = sk::makeAscendSimDevice(o);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ((*d)->target(), "ascend-sim");
  EXPECT_EQ((*d)->machine().pools[0].count, 3u);
  EXPECT_EQ((*d)->machine().pools[1].count, 6u);
  EXPECT_TRUE((*d)->hostMemory());
}

// The simulator's artifact: the descriptor beside the shared object. A bundle this version did not write is
// one error naming what disagrees, before anything is loaded.
TEST(AscendBackend, SimBundleIsCheckedBeforeItIsLoaded) {
  const sk::ascend::SimBundle b{"entry=sk_ascend_x type=AIV_ONLY block_dim=4 buffers=2 profile_bytes=0 split=1",
                                std::string("\x7f" "ELF\0\1\2", 7)};
  const std::string text = sk::ascend::formatSimBundle(b);
  auto back = sk::ascend::parseSimBundle(text);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->launch, b.launch);
  EXPECT_EQ(back->object, b.object);

  struct Case {
    std::string bytes, expect;
  } cases[] = {
      {"", "no SK-ASCEND-SIM 1 header"},
      {b.object, "no SK-ASCEND-SIM 1 header"},  // a bare shared object, as earlier versions stored
      {text.substr(0, text.size() - 1), "do not add up"},
      {text + "x", "do not add up"},
      {"SK-ASCEND-SIM 1 1 -1\n", "not two numbers"},
      {"SK-ASCEND-SIM 1 3 0", "not terminated"},
  };
  sk::DeviceOptions o;
  o.cores = 2;
  auto device = sk::makeAscendSimDevice(o);
  ASSERT_TRUE(device.ok()) << device.error().message();
  for (const Case& c : cases) {
    auto p = sk::ascend::parseSimBundle(c.bytes);
    ASSERT_FALSE(p.ok()) << c.expect;
    EXPECT_EQ(p.error().kind(), sk::ErrorKind::BadInput);
    EXPECT_NE(p.error().message().find(c.expect), std::string::npos) << p.error().message();
    EXPECT_NE(p.error().message().find("ascend simulator artifact"), std::string::npos) << p.error().message();
    sk::Artifact a;
    a.key = "k";
    a.bytes = std::make_shared<const std::string>(c.bytes);
    auto loaded = (*device)->load(a);
    ASSERT_FALSE(loaded.ok()) << c.expect;
    EXPECT_NE(loaded.error().message().find("SuperKernel k"), std::string::npos) << loaded.error().message();
  }
  // A good header around a bad descriptor: the descriptor's parser says why, still before loading.
  sk::Artifact bad;
  bad.key = "k";
  bad.bytes = std::make_shared<const std::string>(sk::ascend::formatSimBundle({"entry=", b.object}));
  auto loaded = (*device)->load(bad);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message().find("SuperKernel k"), std::string::npos) << loaded.error().message();
}

TEST(AscendBackend, LaunchDescriptorRoundTrips) {
  LaunchDescriptor d;
  d.entry = "sk_ascend_sk1";
  d.type = "MIX_AIC_1_2";
  d.blockDim = 8;
  d.buffers = 3;
  d.profileBytes = 4096;
  d.split = 4;
  d.objects = {"a__v1_s2", "b__v3_s4"};
  const std::string text = sk::ascend::formatLaunchDescriptor(d);
  EXPECT_EQ(text, "entry=sk_ascend_sk1 type=MIX_AIC_1_2 block_dim=8 buffers=3 profile_bytes=4096 split=4 "
                  "objects=a__v1_s2,b__v3_s4");
  auto p = sk::ascend::parseLaunchDescriptor(text);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->entry, d.entry);
  EXPECT_EQ(p->objects, d.objects);
  EXPECT_EQ(p->split, 4);
  EXPECT_FALSE(p->bufferTable);
  d.bufferTable = true;
  auto t = sk::ascend::parseLaunchDescriptor(sk::ascend::formatLaunchDescriptor(d));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_TRUE(t->bufferTable);
  d.notifyWords = 19;
  d.sides = {{8, 0, 8}, {18, 9, 9}};
  auto w = sk::ascend::parseLaunchDescriptor(sk::ascend::formatLaunchDescriptor(d));
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->notifyWords, 19u);
  ASSERT_EQ(w->sides.size(), 2u);
  EXPECT_EQ(w->sides[1].done, 18u);
  EXPECT_EQ(w->sides[1].first, 9u);
  EXPECT_EQ(w->sides[1].count, 9u);

  LaunchDescriptor u;
  u.entry = "add__v1_s2";
  u.type = "AIV_ONLY";
  u.buffers = 2;
  u.args = {{1, 0}, {0, 4096}};
  auto q = sk::ascend::parseLaunchDescriptor(sk::ascend::formatLaunchDescriptor(u));
  ASSERT_TRUE(q.ok()) << q.error().message();
  EXPECT_EQ(q->args, u.args);
}

// A fused launch's GM arguments: the buffers, or the address of a table of theirs; then the side launches'
// notify words and the profile buffer.
TEST(AscendBackend, FusedLaunchArgumentsPassBuffersOrTheirTable) {
  int a = 0, b = 0, prof = 0, notify = 0;
  void* bufs[] = {&a, &b};
  std::vector<uint64_t> table;
  const std::vector<void*> direct = sk::ascend::fusedLaunchArguments(false, bufs, 2, table, nullptr, &prof);
  EXPECT_EQ(direct, (std::vector<void*>{&a, &b, &prof}));
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(sk::ascend::fusedLaunchArguments(false, bufs, 2, table, &notify, &prof),
            (std::vector<void*>{&a, &b, &notify, &prof}));
  const std::vector<void*> viaTable = sk::ascend::fusedLaunchArguments(true, bufs, 2, table, nullptr, nullptr);
  ASSERT_EQ(viaTable.size(), 1u);
  EXPECT_EQ(viaTable[0], table.data());
  EXPECT_EQ(table, (std::vector<uint64_t>{reinterpret_cast<uintptr_t>(&a), reinterpret_cast<uintptr_t>(&b)}));
}

TEST(AscendBackend, BadLaunchDescriptorsAreErrors) {
  for (const char* bad : {"", "entry=x", "type=AIV_ONLY", "entry=1x type=AIV_ONLY", "entry=x type=T block_dim=0",
                          "entry=x type=T block_dim=99999", "entry=x type=T split=65", "entry=x type=T buffers=-1",
                          "entry=x type=T colour=red", "entry=x type=T noequals", "entry=x type=T buffers=1 args=1:0",
                          "entry=x type=T buffers=2 args=0", "entry=x type=T objects=a;b",
                          "entry=x type=T block_dim=18446744073709551616", "entry=x type=T table=2",
                          "entry=x type=T table=", "entry=x type=T notify_words=2",
                          "entry=x type=T sides=1:0:0", "entry=x type=T notify_words=2 sides=2:0:1",
                          "entry=x type=T notify_words=2 sides=1:0:3", "entry=x type=T notify_words=2 sides=1:0",
                          "entry=x type=T notify_words=2 sides=1:a:0"}) {
    SCOPED_TRACE(bad);
    auto p = sk::ascend::parseLaunchDescriptor(bad);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind(), sk::ErrorKind::BadInput);
  }
}

// Op and scope names reach the generated source only inside `//` comments,
// escaped to one line: a name cannot end a comment with a backslash (which
// would splice the next line of code into it). The launch descriptor is not in
// the source at all (it goes beside it), so a name that spells one is a comment.
TEST(AscendBackend, HostileNamesCannotPlantALaunchDescriptorOrSpliceCode) {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "tools" / "data" / "ascend_seed.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  const std::string planted = "x sk_ascend_launch[] = \"entry=evil type=AIV_ONLY split=64 objects=p,q";
  for (size_t i = 0; i < l->ops.size(); ++i) {
    l->ops[i].name = planted + " " + std::to_string(i) + " \\";
    l->ops[i].scope = planted + " \\";
  }
  auto plan = sk::planOpList(*l, {}, {.machine = sk::ascend::ascendMachineModel(), .fuse = true});
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  auto emitter = sk::makeAscendEmitter("ascend-sim");
  ASSERT_TRUE(emitter.ok());
  auto src = (*emitter)->emit(*plan, 0);
  ASSERT_TRUE(src.ok()) << src.error().message();
  // The recipe and (through the artifact's bundle) the device read the descriptor beside the source.
  auto d = sk::ascend::parseLaunchDescriptor(src->launch);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(src->text.find(src->launch), std::string::npos) << "the descriptor is not in the source";
  EXPECT_NE(d->entry, "evil");
  EXPECT_EQ(d->split, 4);
  EXPECT_EQ(d->objects.size(), src->variants.size());
  std::istringstream lines(src->text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.empty() || line.back() != '\\') << "a line ends in a backslash: " << line;
    if (line.find("entry=evil") != std::string::npos) {
      EXPECT_EQ(line.find("//"), line.find_first_not_of(' ')) << "a name outside a comment: " << line;
    }
  }
}

// The sync points are the planner's: a Local edge gets none, and the same edge planned as a counter (what the
// planner would say for another placement) gets one. Nothing in the ascend back end re-decides it.
TEST(AscendBackend, SyncPointsFollowThePlannersVerdicts) {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "tools" / "data" / "ascend_seed.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  for (const char* options : {"", "stream-fusion=1"}) {
    auto parsed = sk::parseOptions(options);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    auto plan = sk::planOpList(*l, *parsed, {.machine = sk::ascend::ascendMachineModel(), .fuse = true});
    ASSERT_TRUE(plan.ok()) << plan.error().message();
    bool flipped = false;
    for (size_t i = 0; i < plan->steps.size() && !flipped; ++i) {
      sk::SuperKernelPlan& sk = plan->steps[i];
      if (!sk.fused) continue;
      for (sk::Edge& e : sk.edges) {
        if (e.sync != sk::SyncKind::Local) continue;
        auto before = sk::ascend::makeAscendStep(*plan, i);
        ASSERT_TRUE(before.ok()) << before.error().message();
        EXPECT_EQ(before->syncBefore.at(e.consumer).pools, 0u) << options << ": " << sk.ops[e.consumer].name;
        e.sync = sk::SyncKind::Counter;
        auto after = sk::ascend::makeAscendStep(*plan, i);
        ASSERT_TRUE(after.ok()) << after.error().message();
        const uint32_t pool = sk.queues[sk.ops[e.producer].queue].pool;
        EXPECT_EQ(after->syncBefore.at(e.consumer).pools, 1u << pool) << options << ": " << sk.ops[e.consumer].name;
        flipped = true;
        break;
      }
    }
    EXPECT_TRUE(flipped) << options << ": ascend_seed.json is expected to plan a local edge";
  }
}

TEST(AscendBackend, EmitterRefusesUnspecialisedVariants) {
  auto l = sk::loadOpList(fs::path(SK_SOURCE_ROOT) / "tests" / "tools" / "data" / "ascend_seed.json");
  ASSERT_TRUE(l.ok()) << l.error().message();
  // Planned for ascend's pools but without staticArguments: one variant would have to serve two scalar sets.
  sk::MachineModel unspecialised = sk::ascend::ascendMachineModel();
  unspecialised.staticArguments = false;
  auto plan = sk::planOpList(*l, {}, {.machine = unspecialised, .fuse = true});
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  auto emitter = sk::makeAscendEmitter("ascend-sim");
  ASSERT_TRUE(emitter.ok());
  auto src = (*emitter)->emit(*plan, 0);
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.error().message().find("not specialised for ascend"), std::string::npos) << src.error().message();
  // Planned for another machine's pools: its block placement (and so its Local verdicts) is not the launch's.
  auto cpu = sk::planOpList(*l, {}, {.machine = sk::MachineModel::singlePool("cpu", 4), .fuse = true});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message();
  auto foreign = (*emitter)->emit(*cpu, 0);
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.error().kind(), sk::ErrorKind::Internal);
  EXPECT_NE(foreign.error().message().find("fused for target cpu's core pools, not ascend's (cube, vector)"),
            std::string::npos)
      << foreign.error().message();
  // With the ascend machine model the same list emits, its descriptor beside the source.
  auto good = sk::planOpList(*l, {}, {.machine = sk::ascend::ascendMachineModel(), .fuse = true});
  ASSERT_TRUE(good.ok()) << good.error().message();
  auto ok = (*emitter)->emit(*good, 0);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->language, "ascendc");
  auto d = sk::ascend::parseLaunchDescriptor(ok->launch);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->type, "MIX_AIV_1_0");
  EXPECT_EQ(d->split, 4);
  EXPECT_EQ(d->objects.size(), ok->variants.size());
}

}  // namespace
