// The communicator's two transports (docs/COLLECTIVES.md, "Between ranks of
// one host"): shared memory, which mpiCommunicator picks when every rank
// shares the host, and MPI messages (SK_COLLECTIVE_TRANSPORT=mpi, and ranks
// on several hosts). Each case makes its own communicators (a collective
// call: every rank runs the same cases in the same order) and drives them
// directly, as the executor does: every kind, in place and not, inside a
// slot and larger than one (which goes over MPI after the shared-memory
// header check), a thousand back to back, ranks whose plans disagree, and
// settings that differ between ranks. The 4-rank case (ctest
// mpi.transports_4ranks) interleaves overlapping subgroups, which is what
// per-pair counting is for. Run under mpirun by tests/mpi/tests.cmake.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "MpiTest.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/runtime/Communicator.h"

namespace sk {
namespace {

constexpr uint32_t kTimeoutMs = 5000;

// sk_collective_args::desc (the planner's packDesc): kind | reduce << 8 | dtype << 16.
uint64_t desc(uint32_t kind, uint32_t reduce, DType dt) { return kind | reduce << 8 | uint64_t(dt) << 16; }
constexpr uint32_t kAllReduce = 0, kAllGather = 1, kReduceScatter = 2, kAllToAll = 3;
constexpr uint32_t kNone = 0, kSum = 1, kMax = 2;

// Sets (or, with null, clears) an environment variable for one scope.
class EnvFor {
 public:
  EnvFor(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvFor() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// A new communicator over MPI_COMM_WORLD with the given transport settings (null: unset).
Expected<std::shared_ptr<Communicator>> make(const char* transport, const char* slotBytes = nullptr) {
  EnvFor t("SK_COLLECTIVE_TRANSPORT", transport);
  EnvFor b("SK_COLLECTIVE_SHM_BYTES", slotBytes);
  return mpiCommunicator();
}

Status run(Communicator& c, const void* in, void* out, int64_t nIn, int64_t nOut, uint64_t d, uint64_t ranks,
           uint64_t tag, const std::string& op = "\"t\"", uint32_t timeoutMs = kTimeoutMs) {
  sk_collective_args a{in, out, nIn, nOut, d, ranks, tag};
  return c.run(a, op, timeoutMs, [] { return false; });
}

// Every kind over ranks {0, 1} at n elements per rank, checked against its definition. Inputs are small
// integers in f32: every sum is exact.
void checkFourKinds(Communicator& c, int64_t n, uint64_t tagBase) {
  const uint32_t r = c.rank();
  const auto un = static_cast<size_t>(n);
  std::vector<float> x(un), y(un), ag(2 * un), a2a(un), rs(un / 2);
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(i % 1000 + 100 * r);
  // all_reduce sum, in place
  std::vector<float> ar = x;
  ASSERT_TRUE(run(c, ar.data(), ar.data(), n, n, desc(kAllReduce, kSum, DType::F32), 3, tagBase + 1));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(ar[size_t(i)], float(2 * (i % 1000) + 100)) << i;
  // all_reduce max, out of place
  ASSERT_TRUE(run(c, x.data(), y.data(), n, n, desc(kAllReduce, kMax, DType::F32), 3, tagBase + 2));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[size_t(i)], float(i % 1000 + 100)) << i;
  // all_gather
  ASSERT_TRUE(run(c, x.data(), ag.data(), n, 2 * n, desc(kAllGather, kNone, DType::F32), 3, tagBase + 3));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(ag[size_t(i)], float(i % 1000)) << i;
    ASSERT_EQ(ag[size_t(n + i)], float(i % 1000 + 100)) << i;
  }
  // reduce_scatter sum: this rank's half of the sum
  ASSERT_TRUE(run(c, x.data(), rs.data(), n, n / 2, desc(kReduceScatter, kSum, DType::F32), 3, tagBase + 4));
  for (int64_t k = 0; k < n / 2; ++k) {
    const int64_t i = r * (n / 2) + k;
    ASSERT_EQ(rs[size_t(k)], float(2 * (i % 1000) + 100)) << k;
  }
  // all_to_all, in place: chunk j of the output is rank j's chunk for this rank
  for (int64_t i = 0; i < n; ++i) a2a[size_t(i)] = float(1000 * r + i % 1000);
  ASSERT_TRUE(run(c, a2a.data(), a2a.data(), n, n, desc(kAllToAll, kNone, DType::F32), 3, tagBase + 5));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i / (n / 2), k = i % (n / 2);
    ASSERT_EQ(a2a[size_t(i)], float(1000 * j + (r * (n / 2) + k) % 1000)) << i;
  }
}

class Transports : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    auto w = sktest::comm();
    ASSERT_TRUE(w);
    if (w->size() != 2) GTEST_SKIP() << "a 2-rank case (run under mpirun -np 2)";
  }
};

TEST_P(Transports, DescribeNamesTheTransport) {
  auto c = make(GetParam());
  ASSERT_TRUE(c) << c.error().message();
  const bool shm = std::string(GetParam()) != "mpi";
  EXPECT_EQ((*c)->describe().find("through shared memory") != std::string::npos, shm) << (*c)->describe();
  EXPECT_NE((*c)->describe().find("rank " + std::to_string((*c)->rank()) + " of 2"), std::string::npos);
  if (!shm) return;
  EXPECT_NE((*c)->describe().find("(4096 KiB slots)"), std::string::npos) << (*c)->describe();
  // A slot that is no whole number of KiB is said in bytes (it read "0 KiB" and "1 KiB" for these).
  for (const char* bytes : {"100", "1500"}) {
    auto small = make(GetParam(), bytes);
    ASSERT_TRUE(small) << small.error().message();
    EXPECT_NE((*small)->describe().find(std::string("(") + bytes + "-byte slots)"), std::string::npos)
        << (*small)->describe();
  }
}

TEST_P(Transports, FourKindsInsideAndBeyondASlot) {
  // Slots of 4 KiB: 256 f32 fit, 4096 f32 (16 KiB) go over MPI after the header check.
  auto c = make(GetParam(), "4096");
  ASSERT_TRUE(c) << c.error().message();
  checkFourKinds(**c, 256, 100);
  checkFourKinds(**c, 4096, 200);
  checkFourKinds(**c, 256, 300);  // a slot again after MPI
}

TEST_P(Transports, AThousandBackToBackAreBitIdenticalAcrossRanks) {
  auto c = make(GetParam());
  ASSERT_TRUE(c) << c.error().message();
  const uint32_t r = (*c)->rank();
  constexpr int64_t n = 300;
  std::vector<float> v(n), all(2 * n);
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = 1.0f / float(i + 1 + r);
  for (int it = 0; it < 1000; ++it) {
    // Not exact: the group-order sum must still be the same bits on both ranks.
    ASSERT_TRUE(run(**c, v.data(), v.data(), n, n, desc(kAllReduce, kSum, DType::F32), 3, 5000 + uint64_t(it)));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = v[size_t(i)] * 0.37f + float(it % 7);
    if (it % 100 == 0) {  // a group of one between them: a copy, no traffic
      std::vector<float> copy(n);
      ASSERT_TRUE(run(**c, v.data(), copy.data(), n, n, desc(kAllReduce, kSum, DType::F32), uint64_t{1} << r, 1));
      ASSERT_EQ(copy, v);
    }
  }
  ASSERT_TRUE(run(**c, v.data(), all.data(), n, 2 * n, desc(kAllGather, kNone, DType::F32), 3, 9999));
  EXPECT_EQ(std::memcmp(all.data(), all.data() + n, n * sizeof(float)), 0) << "ranks differ";
}

TEST_P(Transports, RanksThatDisagreeFailOnBothNamingTheOp) {
  auto c = make(GetParam());
  ASSERT_TRUE(c) << c.error().message();
  const uint32_t r = (*c)->rank();
  std::vector<float> v(64, 1.0f);
  // Rank 1 runs another size of the same collective.
  Status st = run(**c, v.data(), v.data(), r == 0 ? 64 : 32, r == 0 ? 64 : 32, desc(kAllReduce, kSum, DType::F32), 3,
                  77, r == 0 ? "\"ar\"" : "\"ar_small\"");
  ASSERT_FALSE(st);
  const std::string m = st.error().message();
  EXPECT_NE(m.find("rank " + std::to_string(1 - r) + " runs the same collective with buffers of all_reduce sum of " +
                   (r == 0 ? "32" : "64") + " f32 in"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("ranks disagree on the plan"), std::string::npos) << m;
  if (std::string(GetParam()) != "mpi") {
    // Its counts no longer match its peer's: a later collective says so instead of reading stale slots.
    Status again = run(**c, v.data(), v.data(), 64, 64, desc(kAllReduce, kSum, DType::F32), 3, 78, "\"next\"");
    ASSERT_FALSE(again);
    EXPECT_NE(again.error().message().find("collective op \"next\" on rank " + std::to_string(r) +
                                           ": an earlier collective on this communicator failed"),
              std::string::npos)
        << again.error().message();
  }
}

INSTANTIATE_TEST_SUITE_P(Mpi, Transports, ::testing::Values("auto", "shm", "mpi"));

TEST(TransportSettings, RanksThatDisagreeOrMistypeFailOnEveryRank) {
  auto w = sktest::comm();
  ASSERT_TRUE(w);
  if (w->size() != 2) GTEST_SKIP() << "a 2-rank case";
  const uint32_t r = w->rank();
  {
    auto c = make(r == 0 ? "shm" : "mpi");
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("ranks disagree on the collective transport: rank " + std::to_string(r) +
                                       " has transport " + (r == 0 ? "shm" : "mpi") + " with 4194304-byte slots, rank " +
                                       std::to_string(1 - r) + " has " + (r == 0 ? "mpi" : "shm")),
              std::string::npos)
        << c.error().message();
  }
  {
    auto c = make("shm", r == 0 ? "8192" : "4096");
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("ranks disagree on the collective transport"), std::string::npos)
        << c.error().message();
  }
  {
    auto c = make(r == 1 ? "shared" : "auto");
    ASSERT_FALSE(c);
    const std::string want = r == 1 ? "SK_COLLECTIVE_TRANSPORT='shared': expected auto, shm or mpi"
                                    : "rank 1 has an invalid collective transport setting";
    EXPECT_NE(c.error().message().find(want), std::string::npos) << c.error().message();
  }
  {
    auto c = make("auto", r == 0 ? "12" : "4096");
    ASSERT_FALSE(c);
    const std::string want = r == 0 ? "SK_COLLECTIVE_SHM_BYTES='12': expected an integer in 64.."
                                    : "rank 0 has an invalid collective transport setting";
    EXPECT_NE(c.error().message().find(want), std::string::npos) << c.error().message();
  }
  {
    // CollectiveOptions win over the environment.
    EnvFor t("SK_COLLECTIVE_TRANSPORT", "shm");
    auto c = mpiCommunicator(nullptr, {CollectiveTransport::Mpi, std::nullopt});
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ((*c)->describe().find("shared memory"), std::string::npos) << (*c)->describe();
    auto bad = mpiCommunicator(nullptr, {std::nullopt, 16u});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("CollectiveOptions::shmSlotBytes 16: expected 64.."), std::string::npos)
        << bad.error().message();
  }
  // Every rank still agrees afterwards: a good communicator works.
  auto c = make("shm");
  ASSERT_TRUE(c) << c.error().message();
  checkFourKinds(**c, 64, 400);
}

// Overlapping subgroups of 4 ranks, interleaved: pairs {0,1} {2,3}, then {0,2} {1,3}, then all four, then a
// group of three, many times. Each rank's result is checked against the exact sum (small integers).
TEST(TransportsFourRanks, OverlappingSubgroupsInterleaved) {
  auto w = sktest::comm();
  ASSERT_TRUE(w);
  if (w->size() != 4) GTEST_SKIP() << "a 4-rank case (ctest mpi.transports_4ranks)";
  for (const char* t : {"shm", "mpi"}) {
    SCOPED_TRACE(t);
    auto c = make(t);
    ASSERT_TRUE(c) << c.error().message();
    const uint32_t r = (*c)->rank();
    constexpr int64_t n = 128;
    auto group = [&](std::initializer_list<uint32_t> g) {
      uint64_t m = 0;
      for (uint32_t x : g) m |= uint64_t{1} << x;
      return m;
    };
    const uint64_t pair1 = r < 2 ? group({0, 1}) : group({2, 3});
    const uint64_t pair2 = r % 2 == 0 ? group({0, 2}) : group({1, 3});
    for (int it = 0; it < 200; ++it) {
      auto check = [&](uint64_t mask, uint64_t tag) {
        std::vector<float> v(n);
        for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i + 10 * r + it);
        ASSERT_TRUE(run(**c, v.data(), v.data(), n, n, desc(kAllReduce, kSum, DType::F32), mask, tag));
        float rsum = 0, members = 0;
        for (uint32_t x = 0; x < 4; ++x)
          if (mask >> x & 1) rsum += float(10 * x), members += 1;
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[size_t(i)], members * float(i + it) + rsum) << i;
      };
      check(pair1, 1);
      check(pair2, 2);
      check(group({0, 1, 2, 3}), 3);
      if (r != 3) check(group({0, 1, 2}), 4);
    }
  }
}

}  // namespace
}  // namespace sk
