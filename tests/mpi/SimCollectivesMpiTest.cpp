// Collectives on the simulators (targets cuda-sim and ascend-sim,
// docs/COLLECTIVES.md "On cuda-sim" and "On ascend-sim"), run by ctest under
// `mpirun -np 2` (tests/mpi/tests.cmake): each rank is a process with its own
// simulated device. On cuda-sim the collective is a kernel of the SuperKernel
// whose CTA hands the buffers to the rank's communicator; on ascend-sim a
// sub-kernel whose vector core drives the simulated AscendC::Hccl client,
// whose Wait runs the task over the communicator. One SuperKernel holds an
// all-reduce and an all-gather beside an op that depends on neither; inputs
// are small integers in f32, so every sum is exact and the results are known
// bit for bit. Each rank's results are checked against their definition,
// against the cpu target's run of the same list, and against the other
// rank's (bit-identical ranks). The cuda and ascend targets plan the same
// list (their device sides are unverified on hardware).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "MpiTest.h"
#include "superkernel/runtime/Communicator.h"
#include "superkernel/session/PlanOnly.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {

constexpr int64_t kN = 256;

using sktest::comm;

// pre -> all_reduce(ar) -> post, and an all_gather of x, beside indep (needs neither).
Graph tpGraph() {
  Graph g;
  EXPECT_TRUE(g.addBuiltinKernel("add", "add_f32"));
  EXPECT_TRUE(g.addBuiltinKernel("copy", "copy_f32"));
  EXPECT_TRUE(g.addGroup("tp", {0, 1}));
  for (const char* b : {"x", "ar", "w", "v", "z"}) EXPECT_TRUE(g.addBuffer(b, DType::F32, {kN}));
  EXPECT_TRUE(g.addBuffer("ag", DType::F32, {2 * kN}));
  {
    Scope s(g, "sk1");
    EXPECT_TRUE(g.launch({"pre", "add", 2, 0, {{"x", arg("x")}, {"y", arg("x")}, {"z", arg("ar")}, {"n", arg(kN)}}, {}}));
    EXPECT_TRUE(g.collective({"ar", CollectiveKind::AllReduce, ReduceOp::Sum, "tp", arg("ar"), arg("ar")}));
    EXPECT_TRUE(g.launch({"indep", "copy", 2, 0, {{"x", arg("w")}, {"y", arg("v")}, {"n", arg(kN)}}, {}}));
    EXPECT_TRUE(g.collective({"ag", CollectiveKind::AllGather, ReduceOp::None, "tp", arg("x"), arg("ag")}));
    EXPECT_TRUE(g.launch({"post", "add", 2, 0, {{"x", arg("ar")}, {"y", arg("ar")}, {"z", arg("z")}, {"n", arg(kN)}}, {}}));
  }
  return g;
}

struct Ran {
  std::unique_ptr<Session> session;  // first: outlives the plan it compiled
  CompiledPlan plan;
  std::unique_ptr<BufferSet> buffers;
};

// Compiles tpGraph() for `target` on a session over `c` and runs it once on inputs that depend on the rank.
Expected<Ran> compileAndRun(const std::string& target, std::shared_ptr<Communicator> c, uint32_t rank) {
  SessionOptions so;
  so.workers = 1;
  so.communicator = std::move(c);
  SK_ASSIGN_OR_RETURN(auto ss, Session::create(so));
  CompileRequest req;
  req.target = target;
  SK_ASSIGN_OR_RETURN(CompiledPlan plan, ss->compile(tpGraph(), req));
  SK_ASSIGN_OR_RETURN(BufferSet bufs, BufferSet::create(plan.list));
  auto f = [&](const char* name) { return static_cast<float*>(bufs.data(size_t(bufs.find(name)))); };
  for (int64_t i = 0; i < kN; ++i) {
    f("x")[i] = float(i + 100 * int64_t(rank));
    f("w")[i] = float(3 * i) + 0.5f;
  }
  SK_RETURN_IF_ERROR(ss->run(plan, bufs));
  return Ran{std::move(ss), std::move(plan), std::make_unique<BufferSet>(std::move(bufs))};
}

class SimCollectives : public ::testing::TestWithParam<const char*> {};

TEST_P(SimCollectives, AllReduceAndAllGatherInOneSuperKernelMatchCpuAndTheOtherRank) {
  const std::string target = GetParam();
  auto c = comm();
  ASSERT_TRUE(c);
  ASSERT_EQ(c->size(), 2u) << "run under mpirun -np 2";
  const uint32_t rank = c->rank();
  auto sim = compileAndRun(target, c, rank);
  ASSERT_TRUE(sim) << sim.error().message();
  const FusionPlan& p = sim->plan.plan;
  EXPECT_EQ(p.machine.target, target);
  ASSERT_EQ(p.steps.size(), 1u) << "one SuperKernel";
  EXPECT_TRUE(p.steps[0].fused);
  ASSERT_EQ(p.report.collectives.size(), 2u);
  EXPECT_NE(p.report.collectives[0].find("runs beside indep"), std::string::npos) << p.report.collectives[0];

  BufferSet& b = *sim->buffers;
  auto f = [&](const char* name) { return static_cast<const float*>(b.data(size_t(b.find(name)))); };
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(f("ar")[i], float(4 * i + 200)) << i;  // 2 x0 + 2 x1
    ASSERT_EQ(f("z")[i], float(8 * i + 400)) << i;
    ASSERT_EQ(f("ag")[i], float(i)) << i;
    ASSERT_EQ(f("ag")[kN + i], float(i + 100)) << i;
    ASSERT_EQ(f("v")[i], float(3 * i) + 0.5f) << i;
  }

  // The cpu target's run of the same list, bit for bit.
  auto cpu = compileAndRun("cpu", c, rank);
  ASSERT_TRUE(cpu) << cpu.error().message();
  for (size_t i = 0; i < b.size(); ++i) {
    const std::string& name = sim->plan.list.buffers[i].name;
    const int j = cpu->buffers->find(name);
    ASSERT_GE(j, 0) << name;
    ASSERT_EQ(cpu->buffers->bytes(size_t(j)), b.bytes(i)) << name;
    EXPECT_EQ(std::memcmp(cpu->buffers->data(size_t(j)), b.data(i), b.bytes(i)), 0) << name << ": " << target << " differs from cpu";
  }

  // Bit-identical ranks: every result against the other rank's (x differs by design).
  for (size_t i = 0; i < b.size(); ++i) {
    const std::string& name = sim->plan.list.buffers[i].name;
    if (name == "x") continue;
    std::vector<char> all(2 * b.bytes(i));
    sk_collective_args a{b.data(i), all.data(), int64_t(b.bytes(i)), int64_t(all.size()), 1u | uint64_t(DType::U8) << 16,
                         3, 0x73696d6300000000ull + (uint64_t(target == "ascend-sim") << 16) + i};
    ASSERT_TRUE(c->run(a, "\"compare " + name + "\"", 5000, [] { return false; }));
    EXPECT_EQ(std::memcmp(all.data(), all.data() + b.bytes(i), b.bytes(i)), 0) << name << " differs between ranks";
  }
}

TEST_P(SimCollectives, WithoutACommunicatorTheLaunchFailsNamingTheOp) {
  const std::string target = GetParam();
  auto r = compileAndRun(target, nullptr, comm() ? comm()->rank() : 0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("collective op \"ar\": this " + target + " device has no communicator"),
            std::string::npos)
      << r.error().message();
}

INSTANTIATE_TEST_SUITE_P(Targets, SimCollectives, ::testing::Values("cuda-sim", "ascend-sim"),
                         [](const auto& info) { return std::string(info.param) == "cuda-sim" ? "cuda_sim" : "ascend_sim"; });

// The plan alone (no nvcc or bisheng needed): both device targets have a collective source (ascend: CANN's
// Hccl client; cuda: NCCL's device API; both unverified on hardware), so their plans are made.
TEST(DeviceTargets, CudaAndAscendPlanCollectives) {
  {
    OpList list = tpGraph().opList();
    list.target = "ascend";
    CompileRequest req;
    req.target = "ascend";
    auto plan = planOnly(list, req);
    ASSERT_TRUE(plan) << plan.error().message();
  }
  {
    // cuda plans them too since its kernel is NCCL's device API (runtime/cuda/include/.../collective_kernel.cu).
    OpList list = tpGraph().opList();
    list.target = "cuda";
    CompileRequest req;
    req.target = "cuda";
    auto plan = planOnly(list, req);
    ASSERT_TRUE(plan) << plan.error().message();
  }
}

}  // namespace
}  // namespace sk
