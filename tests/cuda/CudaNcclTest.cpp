// The cuda target's collectives on NCCL's device API (docs/COLLECTIVES.md, "On a GPU: NCCL's device API"),
// checked without a GPU or a second rank:
//  - the collective kernel compiles with nvcc and NCCL's headers, warning-free, and its PTX holds the
//    group barrier (system-scope release stores and acquire loads), the peer loads and the deadline's trap;
//  - the host's NCCL sequence (CudaNccl.cpp) against a stand-in libnccl that records its calls
//    (data/fake_nccl.c), and each NCCL failure as one error naming the call;
//  - the planner: a cuda list with a collective lowers to that kernel, and the emitted SuperKernel calls it.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <map>

#include "backends/cuda/CudaNccl.h"
#include "cuda/CudaTestUtil.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Process.h"
#include "superkernel/frontend/OpList.h"
#include "superkernel/session/PlanOnly.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

const fs::path kKernel = fs::path(SK_SOURCE_ROOT) / "runtime/cuda/include/superkernel/cuda/collective_kernel.cu";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Where nvcc looks for nccl_device.h by itself (the toolkit's include dir, beside nvcc's bin dir).
bool ncclDeviceHeaders(const std::string& nvcc) {
  return fs::exists(fs::path(nvcc).parent_path().parent_path() / "include" / "nccl_device.h");
}

TEST(CudaNccl, CollectiveKernelCompilesWithNcclHeadersWarningFree) {
  SK_REQUIRE_NVCC(nvcc);
  if (!ncclDeviceHeaders(nvcc))
    GTEST_SKIP() << "nccl_device.h is not in " << fs::path(nvcc).parent_path().parent_path() / "include"
                 << ": NCCL 2.28's device API headers (CUDA 13's toolkit ships them) are needed to build the cuda "
                    "collective kernel";
  cudatest::TempDir dir("nccl");
  // One object per dtype, as the recipe builds them (-rdc, the entry renamed, the planner's macros): an
  // all_reduce type and a copy-only one that shares its C type with another dtype.
  for (const auto& [ctype, dtype] : std::map<std::string, std::string>{{"float", "f32"}, {"uint16_t", "bf16"}}) {
    SCOPED_TRACE(dtype);
    const fs::path ptx = dir.path / (dtype + ".ptx");
    std::vector<std::string> argv = {nvcc, "-std=c++17", "-arch=sm_90", "-rdc=true", "-ptx",
                                     "-I" + (fs::path(SK_SOURCE_ROOT) / "runtime/cuda/include").string(),
                                     "-Xcompiler=-Wall,-Wextra", "-Werror", "all-warnings",
                                     "-DCOLL_T=" + ctype, "-DSK_COLL_DTYPE=" + dtype, "-DSK_COLL_MAX_BYTES=4096",
                                     "-Dsk_collective_kernel=sk_collective_kernel__vtest", kKernel.string(), "-o",
                                     ptx.string()};
    auto r = runProcess(argv);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->exitCode, 0) << r->err;
    EXPECT_EQ(r->err, "");  // warning-free
    const std::string text = cudatest::readFile(ptx);
    EXPECT_NE(text.find(".visible .func sk_collective_kernel__vtest("), std::string::npos);  // a device function: the SuperKernel calls it
    // The group barrier: arrivals stored with release and awaited with acquire at system scope (peers are
    // other GPUs), twice per collective (before the reads, and before the slot can be reused).
    EXPECT_GE(count(text, "st.release.sys.global.u64"), 2u);
    EXPECT_GE(count(text, "ld.acquire.sys.global.u64"), 2u);
    // The bounded wait: %globaltimer read in the wait loops, and a trap after the deadline.
    EXPECT_GE(count(text, "%globaltimer"), 2u);
    EXPECT_GE(count(text, "trap;"), 1u);
    // One collective at a time in the window: a lock taken with a compare-and-swap, released with an exchange.
    EXPECT_GE(count(text, "atom.cas.b32") + count(text, "atom.global.cas.b32"), 1u);
    EXPECT_GE(count(text, "atom.exch.b32") + count(text, "atom.global.exch.b32"), 1u);
    // The peers' slots come from the window: ncclGetLsaPointer reads its lsaFlatBase (u64) and stride4G (u32)
    // through the read-only path (NCCL's loadConst); the kernel's own buffers are never read that way.
    EXPECT_GE(count(text, "ld.global.nc.u64"), 1u);
    EXPECT_GE(count(text, "ld.global.nc.u32"), 1u);
    // The object's binding, in its own device global.
    EXPECT_NE(text.find("sk_nccl_binding_" + dtype), std::string::npos);
  }
}

// A Communicator of `size` ranks in which this process is `rank` and every other rank answers the
// all-gather of rank 0's unique id with `peerId` (the id rank 0 would have sent).
class FakeCommunicator final : public Communicator {
 public:
  FakeCommunicator(uint32_t rank, uint32_t size, std::string peerId) : rank_(rank), size_(size), peerId_(std::move(peerId)) {}
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }
  std::string describe() const override { return "fake, rank " + std::to_string(rank_); }
  Status run(const sk_collective_args& a, const std::string& op, uint32_t, const std::function<bool()>&) override {
    ops.push_back(op);
    const size_t part = size_t(a.n_in) * 4;
    for (uint32_t r = 0; r < size_; ++r) {
      char* dst = static_cast<char*>(a.out) + part * r;
      if (r == rank_) std::memcpy(dst, a.in, part);
      else {
        std::memset(dst, 0, part);
        std::memcpy(dst, peerId_.data(), std::min(part, peerId_.size()));
      }
    }
    return Status::success();
  }
  std::vector<std::string> ops;

 private:
  uint32_t rank_, size_;
  std::string peerId_;
};

struct FakeNccl {
  using LogFn = const char* (*)();
  using VoidFn = void (*)();
  using FailFn = void (*)(const char*);
  LogFn log = nullptr;
  VoidFn reset = nullptr;
  FailFn fail = nullptr;
  NcclApi api;
  FakeNccl() {
    auto a = loadNcclFrom(SK_FAKE_NCCL);
    EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message());
    if (a.ok()) api = *a;
    void* h = ::dlopen(SK_FAKE_NCCL, RTLD_NOW | RTLD_LOCAL);  // the same instance loadNcclFrom bound
    log = reinterpret_cast<LogFn>(::dlsym(h, "fake_nccl_log"));
    reset = reinterpret_cast<VoidFn>(::dlsym(h, "fake_nccl_reset"));
    fail = reinterpret_cast<FailFn>(::dlsym(h, "fake_nccl_fail"));
    reset();
    reinterpret_cast<VoidFn>(::dlsym(h, "fake_nccl_windows_from_zero"))();
  }
};

// A loaded SuperKernel's collective objects, as the host sees them: sk_nccl_max_bytes_<dtype> and
// sk_nccl_bind_<dtype>, which record the binding they were given.
// (One instance: the bound flags are the module's, reset by resetModule.)
NcclBinding gBound;
int gBinds = 0;
int gBoundF32 = 0, gBoundI32 = 0;
unsigned long long maxF32() { return 4096 * 4; }
unsigned long long maxI32() { return 100; }
int isBoundF32() { return gBoundF32; }
int isBoundI32() { return gBoundI32; }
int bindRecord(const void* b, size_t size) {
  if (size != sizeof(NcclBinding)) return -1;
  std::memcpy(&gBound, b, size);
  ++gBinds;
  return 0;
}
int bindF32(const void* b, size_t size) { return bindRecord(b, size) ? -1 : (gBoundF32 = 1, 0); }
int bindI32(const void* b, size_t size) { return bindRecord(b, size) ? -1 : (gBoundI32 = 1, 0); }
void resetModule() { gBinds = gBoundF32 = gBoundI32 = 0; }
void* moduleSymbol(const char* name) {
  const std::string n = name;
  if (n == "sk_nccl_max_bytes_f32") return reinterpret_cast<void*>(&maxF32);
  if (n == "sk_nccl_max_bytes_i32") return reinterpret_cast<void*>(&maxI32);
  if (n == "sk_nccl_is_bound_f32") return reinterpret_cast<void*>(&isBoundF32);
  if (n == "sk_nccl_is_bound_i32") return reinterpret_cast<void*>(&isBoundI32);
  if (n == "sk_nccl_bind_f32") return reinterpret_cast<void*>(&bindF32);
  if (n == "sk_nccl_bind_i32") return reinterpret_cast<void*>(&bindI32);
  return nullptr;
}
void* noCollectives(const char*) { return nullptr; }

Status zeroHost(void* p, size_t n) {
  std::memset(p, 0, n);
  return Status::success();
}

TEST(CudaNccl, HostSequenceOnTheFakeLibrary) {
  FakeNccl fake;
  ASSERT_TRUE(fake.log && fake.reset && fake.fail);
  resetModule();
  {
    auto comm = std::make_shared<FakeCommunicator>(1, 2, "fake-nccl-id");
    CudaNccl nccl(comm, 5000, [&]() -> Expected<const NcclApi*> { return &fake.api; }, zeroHost);
    // A SuperKernel without collectives touches nothing.
    ASSERT_TRUE(nccl.bind(noCollectives, "plain"));
    EXPECT_STREQ(fake.log(), "");
    ASSERT_TRUE(nccl.bind(moduleSymbol, "sk1"));
    // Rank 1: no ncclGetUniqueId (rank 0's id came through the communicator), one world of 2 ranks, the LSA
    // team, a window of the 4 KiB header + the largest input rounded to 4 KiB, zeroed before registration,
    // symmetric.
    EXPECT_STREQ(fake.log(),
                 "ncclCommInitRank id=rank0 nranks=2 rank=1\n"
                 "ncclTeamLsa\n"
                 "ncclMemAlloc 20480\n"
                 "ncclCommWindowRegister header=0 bytes=20480 flags=1\n");
    ASSERT_EQ(comm->ops.size(), 1u);
    EXPECT_EQ(comm->ops[0], "sk.nccl.unique_id");
    EXPECT_EQ(gBinds, 2);  // both objects (f32 and i32) bound to the one window
    EXPECT_NE(gBound.window, nullptr);
    EXPECT_EQ(gBound.dataOff, kNcclWindowHeaderBytes);
    EXPECT_EQ(gBound.dataBytes, 16384u);
    EXPECT_EQ(gBound.waitNs, 5000000000ull);
    EXPECT_EQ(gBound.rank, 1);
    EXPECT_EQ(gBound.nranks, 2);
    EXPECT_EQ(gBound.lsaBase, 0);
    EXPECT_EQ(gBound.lsaSize, 2);
    // The same loaded instance again: bound already, nothing happens.
    std::string before = fake.log();
    ASSERT_TRUE(nccl.bind(moduleSymbol, "sk1"));
    EXPECT_EQ(fake.log(), before);
    EXPECT_EQ(gBinds, 2);
    // A second SuperKernel: its own window on the same communicator.
    resetModule();
    before = fake.log();
    ASSERT_TRUE(nccl.bind(moduleSymbol, "sk2"));
    EXPECT_EQ(std::string(fake.log()).substr(before.size()),
              "ncclMemAlloc 20480\nncclCommWindowRegister header=0 bytes=20480 flags=1\n");
    fake.reset();
  }
  // Teardown in reverse: the windows, last first, then the communicator.
  EXPECT_STREQ(fake.log(),
               "ncclCommWindowDeregister w1\nncclMemFree\nncclCommWindowDeregister w0\nncclMemFree\nncclCommDestroy\n");
}

TEST(CudaNccl, RankZeroMakesTheUniqueId) {
  FakeNccl fake;
  resetModule();
  auto comm = std::make_shared<FakeCommunicator>(0, 2, "not-rank-0s-id");
  CudaNccl nccl(comm, 1000, [&]() -> Expected<const NcclApi*> { return &fake.api; }, zeroHost);
  ASSERT_TRUE(nccl.bind(moduleSymbol, "sk1"));
  const std::string log = fake.log();
  EXPECT_EQ(log.rfind("ncclGetUniqueId\nncclCommInitRank id=rank0 nranks=2 rank=0\n", 0), 0u) << log;
}

TEST(CudaNccl, EachNcclFailureIsOneErrorNamingTheCall) {
  FakeNccl fake;
  for (const std::string call : {"ncclGetUniqueId", "ncclCommInitRank", "ncclMemAlloc", "ncclCommWindowRegister"}) {
    SCOPED_TRACE(call);
    fake.reset();
    resetModule();
    fake.fail(call.c_str());
    auto comm = std::make_shared<FakeCommunicator>(0, 2, "");
    CudaNccl nccl(comm, 1000, [&]() -> Expected<const NcclApi*> { return &fake.api; }, zeroHost);
    Status s = nccl.bind(moduleSymbol, "sk1");
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message().find(call), std::string::npos) << s.error().message();
    EXPECT_NE(s.error().message().find("internal error (fake) (NCCL error 3)"), std::string::npos)
        << s.error().message();
    EXPECT_NE(s.error().message().find("rank 0 of 2"), std::string::npos) << s.error().message();
  }
  // Ranks outside NCCL's LSA team (another node, no NVLink): refused, naming what the kernel needs.
  fake.reset();
  ::setenv("FAKE_NCCL_LSA_RANKS", "1", 1);
  {
    auto comm = std::make_shared<FakeCommunicator>(0, 2, "");
    CudaNccl nccl(comm, 1000, [&]() -> Expected<const NcclApi*> { return &fake.api; }, zeroHost);
    Status s = nccl.bind(moduleSymbol, "sk1");
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message().find("LSA team"), std::string::npos) << s.error().message();
  }
  ::unsetenv("FAKE_NCCL_LSA_RANKS");
  // No communicator: the collectives cannot run; said before NCCL is loaded.
  {
    bool loaded = false;
    CudaNccl nccl(nullptr, 1000, [&]() -> Expected<const NcclApi*> { loaded = true; return &fake.api; }, zeroHost);
    Status s = nccl.bind(moduleSymbol, "sk1");
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message().find("no communicator"), std::string::npos) << s.error().message();
    EXPECT_FALSE(loaded);
  }
}

// What the cuda device does: a loaded SuperKernel with an unbound collective object is deferred at load (no
// NCCL call there) and bound before its first run, once; a SuperKernel without collectives is never deferred;
// a failed binding fails every later run of it with the same error.
TEST(CudaNccl, BoundBeforeTheFirstRunOnce) {
  FakeNccl fake;
  resetModule();
  auto comm = std::make_shared<FakeCommunicator>(0, 1, "");
  CudaNccl nccl(comm, 1000, [&]() -> Expected<const NcclApi*> { return &fake.api; }, zeroHost);
  EXPECT_FALSE(CudaNccl::needsBinding(noCollectives));
  ASSERT_TRUE(CudaNccl::needsBinding(moduleSymbol));
  int module = 0, other = 0;
  nccl.defer(&module, "sk1");
  EXPECT_STREQ(fake.log(), "");  // loading calls nothing
  ASSERT_TRUE(nccl.bindPending(&other, noCollectives));
  EXPECT_STREQ(fake.log(), "");
  ASSERT_TRUE(nccl.bindPending(&module, moduleSymbol));
  EXPECT_NE(std::string(fake.log()).find("ncclCommWindowRegister"), std::string::npos) << fake.log();
  EXPECT_FALSE(CudaNccl::needsBinding(moduleSymbol));
  const std::string once = fake.log();
  ASSERT_TRUE(nccl.bindPending(&module, moduleSymbol));
  EXPECT_EQ(fake.log(), once);

  resetModule();
  fake.fail("ncclMemAlloc");
  nccl.defer(&other, "sk2");
  Status first = nccl.bindPending(&other, moduleSymbol);
  ASSERT_FALSE(first);
  Status again = nccl.bindPending(&other, moduleSymbol);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message(), first.error().message());
  EXPECT_NE(first.error().message().find("SuperKernel sk2's collectives"), std::string::npos) << first.error().message();
}

TEST(CudaNccl, MissingLibraryNamesWhatToInstall) {
  auto a = loadNcclFrom("/nonexistent/libnccl.so.2");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message().find("install NCCL 2.28 or newer"), std::string::npos) << a.error().message();
  EXPECT_NE(a.error().message().find("SK_NCCL"), std::string::npos) << a.error().message();
  // A library without the window API (an NCCL older than its device API) names what it lacks.
  auto old = loadNcclFrom(SK_FAKE_CUDART);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message().find("lacks ncclGetVersion"), std::string::npos) << old.error().message();
  EXPECT_NE(old.error().message().find("NCCL 2.28 or newer"), std::string::npos) << old.error().message();
}

// The planner: a cuda list with a collective lowers (it was a plan-time error before the NCCL kernel), to
// the cuda collective kernel with the macros its object needs, and the emitted SuperKernel calls it.
TEST(CudaNccl, CudaPlanWithACollectiveLowersToTheNcclKernel) {
  std::string text = cudatest::readFile(fs::path(SK_SOURCE_ROOT) / "tests/mpi/data/sim_allreduce.json");
  const std::string from = "\"target\": \"cuda-sim\"";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"target\": \"cuda\"");
  auto list = parseOpList(text, "cuda_allreduce.json", fs::path(SK_SOURCE_ROOT) / "tests/mpi/data");
  ASSERT_TRUE(list) << list.error().message();
  CompileRequest req;
  req.target = "cuda";
  auto planned = planOnly(*list, req);
  ASSERT_TRUE(planned) << planned.error().message();
  const FusionPlan& plan = planned->plan.plan;
  const KernelVariant* coll = nullptr;
  for (const KernelVariant& v : plan.variants)
    if (v.decl.name == "sk.collective.f32") coll = &v;
  ASSERT_NE(coll, nullptr);
  EXPECT_EQ(fs::path(coll->decl.sourcePath).filename(), "collective_kernel.cu");
  EXPECT_NE(coll->decl.sourcePath.string().find("runtime/cuda/include/superkernel/cuda"), std::string::npos)
      << coll->decl.sourcePath;
  EXPECT_EQ(coll->decl.sourcePath.string().find("/sim/"), std::string::npos) << coll->decl.sourcePath;
  EXPECT_EQ(coll->macros.at("COLL_T"), "float");
  EXPECT_EQ(coll->macros.at("SK_COLL_DTYPE"), "f32");
  EXPECT_EQ(coll->macros.at("SK_COLL_MAX_BYTES"), "4096");  // 1024 f32
  ASSERT_EQ(plan.report.collectives.size(), 1u);
  EXPECT_NE(plan.report.collectives[0].find("ar: all_reduce sum of 1024 f32 over group tp (ranks 0,1)"),
            std::string::npos)
      << plan.report.collectives[0];

  auto emitter = makeEmitter("cuda");
  ASSERT_TRUE(emitter.ok()) << emitter.error().message();
  auto src = (*emitter)->emit(plan, 0);
  ASSERT_TRUE(src.ok()) << src.error().message();
  EXPECT_NE(src->text.find("SK_KERNEL void " + coll->symbol + "(const sk_ctx* ctx, const float*"), std::string::npos)
      << src->text;
  EXPECT_NE(src->text.find(coll->symbol + "(ctx, static_cast<const float*>(sk_buf[1]), static_cast<float*>(sk_buf[1]), "
                                          "INT64_C(1024), INT64_C(1024), UINT64_C(256), UINT64_C(3), "),
            std::string::npos)
      << src->text;
}

}  // namespace
}  // namespace sk
