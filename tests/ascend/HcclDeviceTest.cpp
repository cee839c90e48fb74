// Collectives on target ascend (docs/COLLECTIVES.md, "On an NPU") without CANN: the plan of an all-reduce
// and what the device build makes of it (the collective object's bisheng flags, the SuperKernel's HCCL
// argument and the launch descriptor's hccl= key, the argument layout both devices map), the plan-time
// refusal of a reduction HCCL lacks, and the CANN device's error when libhccl cannot be loaded. What runs on
// an NPU is unverified here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "superkernel/frontend/Graph.h"
#include "superkernel/session/PlanOnly.h"
#include "backends/ascend/AscendBackend.h"
#include "backends/ascend/AscendBuild.h"
#include "backends/ascend/HcclGroups.h"
#include "backends/ascend/HcclRuntime.h"

namespace sk {
namespace {
using ::testing::HasSubstr;

constexpr int64_t kN = 1024;

// pre -> all_reduce "ar" over ranks 0,1 -> post, in one SuperKernel.
OpList allReduceList() {
  Graph g;
  EXPECT_TRUE(g.addBuiltinKernel("add", "add_f32"));
  EXPECT_TRUE(g.addGroup("tp", {0, 1}));
  for (const char* b : {"x", "ar", "y"}) EXPECT_TRUE(g.addBuffer(b, DType::F32, {kN}));
  {
    Scope s(g, "sk1");
    EXPECT_TRUE(g.launch({"pre", "add", 2, 0, {{"x", arg("x")}, {"y", arg("x")}, {"z", arg("ar")}, {"n", arg(kN)}}, {}}));
    EXPECT_TRUE(g.collective({"ar", CollectiveKind::AllReduce, ReduceOp::Sum, "tp", arg("ar"), arg("ar")}));
    EXPECT_TRUE(g.launch({"post", "add", 2, 0, {{"x", arg("ar")}, {"y", arg("ar")}, {"z", arg("y")}, {"n", arg(kN)}}, {}}));
  }
  OpList l = g.opList();
  l.target = "ascend";
  return l;
}

// An f64 all-reduce alone (no builtin needed).
OpList f64AllReduceList() {
  Graph g;
  EXPECT_TRUE(g.addGroup("tp", {0, 1}));
  for (const char* b : {"x", "ar"}) EXPECT_TRUE(g.addBuffer(b, DType::F64, {kN}));
  EXPECT_TRUE(g.collective({"ar", CollectiveKind::AllReduce, ReduceOp::Sum, "tp", arg("x"), arg("ar")}));
  OpList l = g.opList();
  l.target = "ascend";
  return l;
}

Expected<PlanOnlyResult> planFor(const OpList& l) {
  CompileRequest req;
  req.target = "ascend";
  return planOnly(l, req);
}

TEST(AscendHccl, AnAllReducePlansAndTheDeviceBuildPassesItsHcclContext) {
  auto p = planFor(allReduceList());
  ASSERT_TRUE(p.ok()) << p.error().message();
  const FusionPlan& plan = p->plan.plan;
  ASSERT_EQ(plan.steps.size(), 1u) << "one SuperKernel around the collective";

  // The collective's object: the device's own kernel (CANN's Hccl client), with the planner's identity.
  const KernelVariant* coll = nullptr;
  for (const KernelVariant& v : plan.variants)
    if (v.decl.name == "sk.collective.f32") coll = &v;
  ASSERT_NE(coll, nullptr);
  EXPECT_EQ(coll->decl.sourcePath.lexically_normal().generic_string().find("runtime/ascend/device/superkernel/ascend/"
                                                                           "collective_kernel.cpp") != std::string::npos,
            true)
      << coll->decl.sourcePath;
  auto cs = ascend::variantCompileStep(*coll, {}, ascend::ObjectBuild::Device, "op ar");
  ASSERT_TRUE(cs.ok()) << cs.error().message();
  const std::vector<std::string> flags = ascend::deviceCompileFlags(*cs);
  auto has = [&](const std::string& f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
  EXPECT_TRUE(has("-x") && has("cce") && has("--cce-aicore-only")) << ::testing::PrintToString(flags);
  EXPECT_TRUE(has("--cce-aicore-arch=dav-c220-vec")) << ::testing::PrintToString(flags);
  EXPECT_TRUE(has("-DSK_RANKS=UINT64_C(3)")) << ::testing::PrintToString(flags);
  EXPECT_TRUE(has("-DCOLL_T=float")) << ::testing::PrintToString(flags);

  // The SuperKernel: one more GM argument, handed to the collective sub-kernel after its buffers.
  auto em = makeAscendEmitter("ascend");
  ASSERT_TRUE(em.ok());
  auto g = (*em)->emit(plan, 0);
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_THAT(g->launch, HasSubstr(" hccl=3"));
  EXPECT_THAT(g->text, HasSubstr("GM_ADDR sk_hccl"));
  EXPECT_THAT(g->text, HasSubstr(", sk_hccl);"));
  auto d = ascend::parseLaunchDescriptor(g->launch);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->hccl, std::vector<uint64_t>{3});
  EXPECT_EQ(ascend::formatLaunchDescriptor(*d), g->launch);
  // The arguments both devices map: the buffers, then the HCCL context table (then the profile records).
  const std::vector<ascend::LaunchArg> args = ascend::launchArguments(*d);
  ASSERT_EQ(args.size(), d->buffers + 1);
  EXPECT_EQ(args.back().kind, ascend::LaunchArg::Kind::Hccl);

  // ascend-sim's emit of the same plan passes no context: its kernel drives the simulated client itself.
  auto sim = makeAscendEmitter("ascend-sim");
  ASSERT_TRUE(sim.ok());
  auto gs = (*sim)->emit(plan, 0);
  ASSERT_TRUE(gs.ok()) << gs.error().message();
  EXPECT_THAT(gs->launch, ::testing::Not(HasSubstr("hccl=")));
  EXPECT_THAT(gs->text, ::testing::Not(HasSubstr("sk_hccl")));
}

TEST(AscendHccl, TheDescriptorRefusesABadGroupList) {
  auto d = ascend::parseLaunchDescriptor("entry=e type=AIV_ONLY block_dim=1 buffers=2 profile_bytes=0 split=1 hccl=3,0");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.error().message(), HasSubstr("hccl is a list of group rank masks"));
}

TEST(AscendHccl, AReductionHcclLacksIsRefusedAtPlanTimeNamingTheOp) {
  auto p = planFor(f64AllReduceList());
  ASSERT_FALSE(p.ok());
  const std::string m = p.error().message();
  EXPECT_THAT(m, HasSubstr("target ascend cannot reduce f64 in a collective (all_reduce \"ar\")"));
  EXPECT_THAT(m, HasSubstr("no float64"));
}

// A communicator that only says which rank of how many it is: HcclGroups checks the group against it before
// it loads libhccl or exchanges anything, so these errors need neither CANN nor MPI.
class RankOnly final : public Communicator {
 public:
  RankOnly(uint32_t rank, uint32_t size) : rank_(rank), size_(size) {}
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }
  std::string describe() const override { return "test"; }
  Status run(const sk_collective_args&, const std::string&, uint32_t, const std::function<bool()>&) override {
    ADD_FAILURE() << "HcclGroups exchanged root info for a group it should have refused";
    return {};
  }

 private:
  uint32_t rank_, size_;
};

std::string groupError(std::shared_ptr<Communicator> comm, uint64_t mask) {
  ascend::HcclGroups groups(std::move(comm), 1000);
  auto t = groups.table({mask});
  if (t.ok()) return "made a communicator";
  EXPECT_EQ(t.error().kind(), ErrorKind::Runtime) << t.error().message();
  return t.error().message();
}

TEST(AscendHccl, AGroupTheRunCannotFormIsAClearErrorBeforeAnyHcclCall) {
  EXPECT_THAT(groupError(nullptr, 0b11), HasSubstr("the HCCL communicator of ranks 0,1: this ascend device has no "
                                                   "communicator"));
  EXPECT_THAT(groupError(std::make_shared<RankOnly>(2, 4), 0b11), HasSubstr("ranks 0,1: rank 2 is not in the group"));
  EXPECT_THAT(groupError(std::make_shared<RankOnly>(0, 2), 0b101),
              HasSubstr("ranks 0,2: this run has 2 rank(s) (start it with mpirun -np 3)"));
}

TEST(AscendHccl, WithoutLibhcclTheDeviceNamesWhatItTried) {
  // This process loads libhccl nowhere else (hcclRuntime loads once; a device that ran no collective never
  // loads it).
  ::setenv("SK_HCCL", "/nonexistent/sk-test/libhccl.so", 1);
  auto api = ascend::hcclRuntime();
  ::unsetenv("SK_HCCL");
  ASSERT_FALSE(api.ok());
  const std::string m = api.error().message();
  EXPECT_EQ(api.error().kind(), ErrorKind::Runtime) << m;
  EXPECT_THAT(m, HasSubstr("libhccl.so"));
  EXPECT_THAT(m, HasSubstr("tried /nonexistent/sk-test/libhccl.so"));
  EXPECT_THAT(m, HasSubstr("SK_HCCL"));
  EXPECT_THAT(m, HasSubstr("--target ascend-sim"));
}

}  // namespace
}  // namespace sk
