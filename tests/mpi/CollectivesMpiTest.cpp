// Collectives over MPI through the Session (docs/COLLECTIVES.md), run by
// ctest under `mpirun -np 2` (tests/mpi/tests.cmake), 1 worker per rank.
// Every rank builds the same op list with the Graph API: all four
// collectives in one scope, next to an op that depends on none of them.
// Inputs are small integers in f32, so every sum is exact and the expected
// results are known bit for bit; each rank's outputs are then all-gathered
// and compared with every other rank's (bit-identical ranks).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "MpiTest.h"
#include "superkernel/runtime/Communicator.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {

using sktest::comm;

// Compiles `g` on a session of one worker over `c` (null: none) and runs it
// once on the op list's own buffers: the first error of the three, if any.
Status compileAndRunOnce(const Graph& g, std::shared_ptr<Communicator> c) {
  SessionOptions so;
  so.workers = 1;
  so.communicator = std::move(c);
  auto ss = Session::create(so);
  if (!ss) return ss.error();
  auto plan = (*ss)->compile(g);
  if (!plan) return plan.error();
  auto bufs = BufferSet::create(plan->list);
  if (!bufs) return bufs.error();
  return (*ss)->run(*plan, *bufs);
}

TEST(MpiCollectives, FourKindsMatchTheirDefinitionOnEveryRank) {
  auto c = comm();
  ASSERT_TRUE(c);
  ASSERT_EQ(c->size(), 2u) << "run under mpirun -np 2";
  const uint32_t rank = c->rank();
  constexpr int64_t n = 64;
  Graph g;
  ASSERT_TRUE(g.addBuiltinKernel("scale", "scale_f32"));
  ASSERT_TRUE(g.addGroup("tp", {0, 1}));
  for (const char* b : {"x", "ar", "mx", "a2a", "a2a_out", "rs_in", "w", "v"})
    ASSERT_TRUE(g.addBuffer(b, DType::F32, {n}));
  ASSERT_TRUE(g.addBuffer("ag", DType::F32, {2 * n}));
  ASSERT_TRUE(g.addBuffer("rs", DType::F32, {n / 2}));
  {
    Scope s(g, "sk1");
    ASSERT_TRUE(g.launch({"pre", "scale", 1, 0, {{"x", arg("x")}, {"y", arg("ar")}, {"alpha", arg(1.0)}, {"n", arg(n)}}, {}}));
    ASSERT_TRUE(g.collective({"all_reduce_sum", CollectiveKind::AllReduce, ReduceOp::Sum, "tp", arg("ar"), arg("ar")}));
    ASSERT_TRUE(g.launch({"indep", "scale", 1, 0, {{"x", arg("w")}, {"y", arg("v")}, {"alpha", arg(2.0)}, {"n", arg(n)}}, {}}));
    ASSERT_TRUE(g.collective({"all_reduce_max", CollectiveKind::AllReduce, ReduceOp::Max, "tp", arg("x"), arg("mx")}));
    ASSERT_TRUE(g.collective({"all_gather", CollectiveKind::AllGather, ReduceOp::None, "tp", arg("x"), arg("ag")}));
    ASSERT_TRUE(g.collective({"reduce_scatter", CollectiveKind::ReduceScatter, ReduceOp::Sum, "tp", arg("rs_in"), arg("rs")}));
    ASSERT_TRUE(g.collective({"all_to_all", CollectiveKind::AllToAll, ReduceOp::None, "tp", arg("a2a"), arg("a2a_out")}));
  }
  SessionOptions so;
  so.workers = 1;
  so.communicator = c;
  auto ss = Session::create(so);
  ASSERT_TRUE(ss) << ss.error().message();
  auto plan = (*ss)->compile(g);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(plan->plan.report.collectives.size(), 5u);
  auto bufs = BufferSet::create(plan->list);
  ASSERT_TRUE(bufs) << bufs.error().message();
  auto f = [&](const char* name) { return static_cast<float*>(bufs->data(size_t(bufs->find(name)))); };
  for (int64_t i = 0; i < n; ++i) {
    f("x")[i] = float(i + 100 * rank);
    f("rs_in")[i] = float(i * (rank + 1));
    f("a2a")[i] = float(1000 * rank + i);
    f("w")[i] = float(i);
  }
  Status st = (*ss)->run(*plan, *bufs);
  ASSERT_TRUE(st) << st.error().message();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(f("ar")[i], float(2 * i + 100)) << i;
    ASSERT_EQ(f("mx")[i], float(i + 100)) << i;
    ASSERT_EQ(f("ag")[i], float(i)) << i;
    ASSERT_EQ(f("ag")[n + i], float(i + 100)) << i;
    ASSERT_EQ(f("v")[i], float(2 * i)) << i;
    // all_to_all: chunk j of the output is rank j's chunk `rank`.
    const int64_t j = i / (n / 2), k = i % (n / 2);
    ASSERT_EQ(f("a2a_out")[i], float(1000 * j + rank * (n / 2) + k)) << i;
  }
  for (int64_t k = 0; k < n / 2; ++k) ASSERT_EQ(f("rs")[k], float(3 * (rank * (n / 2) + k))) << k;

  // Bit-identical ranks: every rank's every buffer against rank 0's.
  for (size_t b = 0; b < bufs->size(); ++b) {
    const std::string name = plan->list.buffers[b].name;
    if (name == "x" || name == "rs_in" || name == "a2a" || name == "rs" || name == "a2a_out") continue;  // differ by design
    std::vector<char> all(2 * bufs->bytes(b));
    sk_collective_args a{bufs->data(b), all.data(), int64_t(bufs->bytes(b)), int64_t(all.size()),
                         1u | uint64_t(DType::U8) << 16, 3, 0x7465737400000000ull + b};
    ASSERT_TRUE(c->run(a, "\"compare " + name + "\"", 5000, [] { return false; }));
    EXPECT_EQ(std::memcmp(all.data(), all.data() + bufs->bytes(b), bufs->bytes(b)), 0) << name << " differs between ranks";
  }
}

TEST(MpiCollectives, ARankOutsideTheGroupIsAnErrorNamingTheOp) {
  auto c = comm();
  ASSERT_TRUE(c);
  Graph g;
  ASSERT_TRUE(g.addGroup("only0", {0}));
  ASSERT_TRUE(g.addBuffer("x", DType::F32, {8}));
  {
    Scope s(g, "sk1");
    ASSERT_TRUE(g.collective({"lonely", CollectiveKind::AllReduce, ReduceOp::Sum, "only0", arg("x"), arg("x")}));
  }
  Status st = compileAndRunOnce(g, c);
  if (c->rank() == 0) {
    EXPECT_TRUE(st) << st.error().message();  // a group of one: a copy
  } else {
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message().find("collective op \"lonely\": rank 1 is not in its group (ranks 0)"), std::string::npos)
        << st.error().message();
  }
}

TEST(MpiCollectives, ASessionWithoutACommunicatorNamesTheOp) {
  Graph g;
  ASSERT_TRUE(g.addGroup("tp", {0, 1}));
  ASSERT_TRUE(g.addBuffer("x", DType::F32, {8}));
  {
    Scope s(g, "sk1");
    ASSERT_TRUE(g.collective({"orphan", CollectiveKind::AllReduce, ReduceOp::Sum, "tp", arg("x"), arg("x")}));
  }
  Status st = compileAndRunOnce(g, nullptr);  // no communicator
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("collective op \"orphan\": this executor has no communicator"), std::string::npos)
      << st.error().message();
}

}  // namespace
}  // namespace sk
