// Executor: every block exactly once, error propagation, runCores limits,
// env validation, kernel_sync in unfused launches, profiling trace JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "superkernel/runtime/Executor.h"

namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  std::vector<std::atomic<uint32_t>> worker;  // recorded block -> thread slot check
  explicit Counts(size_t n) : hits(n), worker(n) {}
};

TEST(Executor, EveryBlockRunsExactlyOnce) {
  for (uint32_t w : {1u, 2u, 3u, 4u, 8u}) {
    sk::Executor ex({w, 5000});
    ASSERT_EQ(ex.numWorkers(), w);
    for (uint32_t bd = 1; bd <= 4 * w; ++bd) {
      Counts c(bd);
      struct Arg {
        Counts* c;
        uint32_t bd;
        std::atomic<int> badCtx{0};
      } arg{&c, bd};
      auto fn = [](void* a, const sk_ctx* ctx) {
        auto* p = static_cast<Arg*>(a);
        if (ctx->block_dim != p->bd || ctx->rt != nullptr) p->badCtx.fetch_add(1);
        p->c->hits[ctx->block_idx].fetch_add(1);
      };
      ASSERT_TRUE(ex.launch(fn, &arg, bd).ok());
      EXPECT_EQ(arg.badCtx.load(), 0);
      for (uint32_t b = 0; b < bd; ++b) ASSERT_EQ(c.hits[b].load(), 1) << "W=" << w << " bd=" << bd << " block " << b;
    }
    EXPECT_TRUE(ex.launch([](void*, const sk_ctx*) { FAIL(); }, nullptr, 0).ok()) << "block_dim 0 runs nothing";
  }
}

TEST(Executor, BlockMapsToWorkerModW) {
  // Blocks b and b + W run on the same thread; the caller runs worker 0's.
  sk::Executor ex({3, 5000});
  std::vector<std::thread::id> ids(12);
  ASSERT_TRUE(ex.launch([](void* a, const sk_ctx* c) {
                static_cast<std::vector<std::thread::id>*>(a)->at(c->block_idx) = std::this_thread::get_id();
              }, &ids, 12).ok());
  for (uint32_t b = 0; b < 12; ++b) EXPECT_EQ(ids[b], ids[b % 3]) << b;
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  EXPECT_NE(ids[1], ids[0]);
  EXPECT_NE(ids[2], ids[1]);
}

TEST(Executor, ErrorsPropagateAndExecutorRecovers) {
  sk::Executor ex({4, 5000});
  auto failing = [](void* a, const sk_ctx* c) {
    auto* e = static_cast<sk::Executor*>(a);
    if (c->block_idx == 5) e->services()->fail(e->services()->self, "block 5 says no");
  };
  sk::Status st = ex.launch(failing, &ex, 16);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), sk::ErrorKind::Runtime);
  EXPECT_NE(st.error().message().find("block 5 says no"), std::string::npos);
  EXPECT_EQ(ex.lastError(), "block 5 says no");
  EXPECT_TRUE(ex.launch([](void*, const sk_ctx*) {}, nullptr, 16).ok()) << "a failure does not stick";
  EXPECT_EQ(ex.lastError(), "");

  // sk_report_error reaches the executor through launchKernel's ctx->rt.
  st = ex.launchKernel([](void*, const sk_ctx* c) {
    if (c->block_idx == 2) sk_report_error(c, "kernel error from block 2");
  }, nullptr, 7, false);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("kernel error from block 2"), std::string::npos);

  // An exception in a block fails the launch instead of killing the process.
  st = ex.launch([](void*, const sk_ctx* c) {
    if (c->block_idx == 3) throw std::runtime_error("boom");
  }, nullptr, 8);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("boom"), std::string::npos);
}

TEST(Executor, RunCoresIsConcurrentAndBounded) {
  sk::Executor ex({4, 5000});
  // All 4 cores must be live at once: each waits for the others to arrive.
  struct Arg {
    std::atomic<int> arrived{0};
    std::atomic<int> ok{0};
  } arg;
  ASSERT_TRUE(ex.runCores(4, [](void* a, uint32_t) {
                auto* p = static_cast<Arg*>(a);
                p->arrived.fetch_add(1);
                for (int i = 0; i < 200000000 && p->arrived.load() < 4; ++i) std::this_thread::yield();
                if (p->arrived.load() == 4) p->ok.fetch_add(1);
              }, &arg).ok());
  EXPECT_EQ(arg.ok.load(), 4);
  sk::Status st = ex.runCores(5, [](void*, uint32_t) {}, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("5 cores requested"), std::string::npos) << st.error().message();
  // Through the C table, as generated code calls it.
  const sk_services* s = ex.services();
  EXPECT_EQ(s->version, static_cast<uint32_t>(SK_SERVICES_VERSION));
  EXPECT_EQ(s->num_workers, 4u);
  EXPECT_NE(s->run_cores(s->self, 5, [](void*, uint32_t) {}, nullptr), 0);
  EXPECT_NE(ex.lastError().find("5 cores requested"), std::string::npos);
  std::atomic<int> n{0};
  EXPECT_EQ(s->run_cores(s->self, 3, [](void* a, uint32_t) { static_cast<std::atomic<int>*>(a)->fetch_add(1); }, &n), 0);
  EXPECT_EQ(n.load(), 3);
}

TEST(Executor, NestedLaunchIsAnErrorNotADeadlock) {
  sk::Executor ex({2, 5000});
  sk::Status st = ex.launch([](void* a, const sk_ctx*) {
    auto* e = static_cast<sk::Executor*>(a);
    (void)e->launch([](void*, const sk_ctx*) {}, nullptr, 1);
  }, &ex, 2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("nested launch"), std::string::npos);
}

TEST(Executor, KernelSyncBarrierInUnfusedLaunch) {
  sk::Executor ex({4, 5000});
  // Phase k writes slot[b] = k; after the sync every block must see all k.
  struct Arg {
    std::atomic<int> slot[4];
    std::atomic<int> errors{0};
  } arg;
  for (auto& s : arg.slot) s = 0;
  for (int launch = 0; launch < 20; ++launch) {
    ASSERT_TRUE(ex.launchKernel([](void* a, const sk_ctx* c) {
                  auto* p = static_cast<Arg*>(a);
                  for (int k = 1; k <= 50; ++k) {
                    p->slot[c->block_idx].store(k);
                    sk_kernel_sync(c);
                    for (uint32_t o = 0; o < c->block_dim; ++o)
                      if (p->slot[o].load() < k) p->errors.fetch_add(1);
                    sk_kernel_sync(c);  // nobody races ahead into k + 1 before all checked
                  }
                }, &arg, 4, true).ok());
    for (auto& s : arg.slot) s = 0;
  }
  EXPECT_EQ(arg.errors.load(), 0);
  sk::Status st = ex.launchKernel([](void*, const sk_ctx*) {}, nullptr, 5, true);
  ASSERT_FALSE(st.ok()) << "kernel_sync with block_dim > workers must be refused, not hang";
  EXPECT_NE(st.error().message().find("kernel_sync"), std::string::npos);
}

TEST(Executor, EnvValidation) {
  EXPECT_EQ(*sk::parseBoundedU32("SK_NUM_WORKERS", "8", 1, 1024), 8u);
  for (const char* bad : {"", "0", "1025", "-1", "+3", " 4", "4 ", "abc", "3x", "99999999999999999999"}) {
    auto r = sk::parseBoundedU32("SK_NUM_WORKERS", bad, 1, 1024);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.error().kind(), sk::ErrorKind::BadInput);
    EXPECT_NE(r.error().message().find("SK_NUM_WORKERS"), std::string::npos);
    EXPECT_NE(r.error().message().find("1..1024"), std::string::npos);
  }
  const char* saved = std::getenv("SK_NUM_WORKERS");
  std::string keep = saved ? saved : "";
  setenv("SK_NUM_WORKERS", "3", 1);
  EXPECT_EQ(sk::defaultWorkerCount(), 3u);
  {
    sk::Executor ex;
    EXPECT_EQ(ex.numWorkers(), 3u);
  }
  setenv("SK_NUM_WORKERS", "lots", 1);
  auto junk = sk::workerCountFromEnv();
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().kind(), sk::ErrorKind::BadInput);
  EXPECT_NE(junk.error().message().find("SK_NUM_WORKERS='lots': expected an integer in 1.."), std::string::npos)
      << junk.error().message();
  EXPECT_EQ(sk::defaultWorkerCount(), std::min(sk::hardwareThreads(), 1024u)) << "junk falls back with a warning";
  if (saved) setenv("SK_NUM_WORKERS", keep.c_str(), 1); else unsetenv("SK_NUM_WORKERS");

  setenv("SK_WAIT_TIMEOUT_MS", "250", 1);
  EXPECT_EQ(sk::defaultWaitTimeoutMs(), 250u);
  setenv("SK_WAIT_TIMEOUT_MS", "soon", 1);
  EXPECT_EQ(sk::defaultWaitTimeoutMs(), 10000u);
  unsetenv("SK_WAIT_TIMEOUT_MS");
  EXPECT_EQ(sk::defaultWaitTimeoutMs(), 10000u);
}

TEST(Executor, TraceJsonHasOneTrackPerWorker) {
  sk::Executor ex({3, 5000});
  EXPECT_EQ(ex.services()->profile, nullptr) << "no profiling cost unless asked";
  ex.setProfiling(true);
  ASSERT_NE(ex.services()->profile, nullptr);
  for (int launch = 0; launch < 2; ++launch) {
    ASSERT_TRUE(ex.runCores(3, [](void* a, uint32_t core) {
                  const sk_services* s = static_cast<sk::Executor*>(a)->services();
                  for (uint32_t op = 0; op < 2; ++op) {
                    s->profile(s->self, core, SK_PROF_WAIT_BEGIN, op);
                    s->profile(s->self, core, SK_PROF_WAIT_END, op);
                    s->profile(s->self, core, SK_PROF_OP_BEGIN, op);
                    s->profile(s->self, core, SK_PROF_OP_END, op);
                  }
                }, &ex).ok());
  }
  auto events = ex.takeTrace();
  ASSERT_EQ(events.size(), 2u * 3 * 8);
  std::set<uint32_t> launches;
  for (auto& e : events) {
    EXPECT_EQ(e.worker, e.core) << "runCores: core c runs on worker c";
    launches.insert(e.launch);
  }
  EXPECT_EQ(launches, (std::set<uint32_t>{0, 1}));
  std::string js = sk::Executor::traceToJson(events, {{"rms \"norm\"", "gemv\\0"}, {"add"}});
  nlohmann::json doc = nlohmann::json::parse(js);
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::set<int> tracks, named;
  std::multiset<std::string> names;
  for (auto& e : doc["traceEvents"]) {
    EXPECT_EQ(e["pid"], 1);
    if (e["ph"] == "M" && e["name"] == "thread_name") named.insert(e["tid"].get<int>());
    if (e["ph"] == "X") {
      tracks.insert(e["tid"].get<int>());
      names.insert(e["name"].get<std::string>());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(tracks, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(named, tracks);
  EXPECT_EQ(names.count("wait"), 12u);
  EXPECT_EQ(names.count("rms \"norm\""), 3u);
  EXPECT_EQ(names.count("gemv\\0"), 3u);
  EXPECT_EQ(names.count("add"), 3u);
  EXPECT_EQ(names.count("op 1"), 3u) << "launch 1 has no name for op 1";
  ex.setProfiling(false);
  EXPECT_EQ(ex.services()->profile, nullptr);
  EXPECT_TRUE(ex.takeTrace().empty());
}

}  // namespace
