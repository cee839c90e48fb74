// The Cache with its remote tier, against a real redis-server: each
// "machine" is its own cache directory sharing one Redis. Machine A builds
// and uploads; machine B, with an empty directory, loads A's verified entry
// without building (also for a real plan through the Session, bit-identical
// results); a wrong secret, a tampered value or no secret never load; a
// server killed mid-run and restarted leaves both machines working; the
// cross-machine build lock makes racing processes on several machines build
// a cold key once (at worst once per machine), in bounded time.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "RedisServer.h"
#include "TestUtil.h"
#include "cache/remote/RemoteStorage.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace remote_cache_test {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::RedisServer;
using test::TempDir;

constexpr const char* kSecret = "fleet-secret-0123456789abcdef";

std::string keyOf(const std::string& s) {
  KeyBuilder kb;
  kb.add("remote-test", s);
  return kb.finish();
}

const std::string& tinySo() {
  static std::string bytes = test::readFile(SK_TEST_TINY_SO);
  return bytes;
}

// A fake compiler that counts its calls and writes the tiny shared object.
struct FakeBuild {
  std::atomic<int> calls{0};
  int sleepMs = 0;
  BuildFn fn() {
    return [this](const fs::path& staging) -> Expected<BuildOutput> {
      calls.fetch_add(1);
      if (sleepMs) std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
      test::writeFile(staging / "lib.so", tinySo());
      BuildOutput o;
      o.artifactName = "lib.so";
      o.command = {"fakecc", "-o", "lib.so"};
      o.toolchain = "fakecc 1.0";
      o.metadata = R"({"op_list": "{\"ops\":[]}", "name": "sk1"})";
      return o;
    };
  }
};

// One machine: its own cache directory, the shared Redis.
struct Machine {
  TempDir dir{"machine"};
  std::shared_ptr<Cache> cache;
  FakeBuild fake;

  Machine(const std::string& url, const fs::path& secretFile, bool readOnly = false,
          std::chrono::milliseconds lockWait = 5s) {
    CacheConfig c;
    c.root = dir / "cache";
    c.remote.url = url;
    c.remote.secretFile = secretFile;
    c.remote.readOnly = readOnly;
    c.remote.timeout = 500ms;
    c.remote.lockWait = lockWait;
    auto r = Cache::open(c);
    EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message());
    cache = *r;
  }
  Expected<ArtifactPtr> get(const std::string& key, bool hold = true) {
    CacheRequest r;
    r.key = key;
    r.kind = kKindSuperKernel;
    r.hold = hold;
    r.build = fake.fn();
    return cache->getOrBuild(r);
  }
  CacheStats stats() {
    auto s = cache->stats();
    EXPECT_TRUE(s.ok());
    return *s;
  }
};

struct Fleet {
  RedisServer server;
  TempDir keys{"keys"};
  fs::path secret = keys / "secret";
  Fleet() { test::writeFile(secret, kSecret, 0600); }
};

TEST(RemoteCache, MachineBLoadsWhatMachineABuiltWithoutBuilding) {
  Fleet f;
  SK_REQUIRE_REDIS(f.server);
  Machine a(f.server.url(), f.secret), b(f.server.url(), f.secret);
  EXPECT_EQ(a.cache->remoteUrl(), f.server.url());
  const std::string key = keyOf("ab");
  auto ra = a.get(key);
  ASSERT_TRUE(ra.ok()) << ra.error().message();
  EXPECT_EQ(a.fake.calls, 1);
  auto rb = b.get(key);
  ASSERT_TRUE(rb.ok()) << rb.error().message();
  EXPECT_EQ(b.fake.calls, 0);
  EXPECT_EQ((*rb)->origin, Artifact::Origin::Remote);
  EXPECT_EQ(*(*rb)->bytes, *(*ra)->bytes);
  EXPECT_TRUE((*rb)->hold);  // held like any disk entry: eviction skips it while in use
  // Published into B's own store through the normal path: the next process
  // on B is a disk hit, not a remote one.
  EXPECT_TRUE(fs::exists(b.dir / "cache" / "entries" / key.substr(0, 2) / key / "manifest.json"));
  EXPECT_EQ(nlohmann::json::parse((*rb)->manifest)["metadata"]["op_list"], "{\"ops\":[]}");
  CacheStats sa = a.stats(), sb = b.stats();
  EXPECT_EQ(sa.compiles, 1u);
  EXPECT_EQ(sa.remoteUploads, 1u);
  EXPECT_EQ(sa.remoteMisses, 1u);
  EXPECT_EQ(sb.compiles, 0u);
  EXPECT_EQ(sb.misses, 0u);
  EXPECT_EQ(sb.remoteHits, 1u);
  EXPECT_EQ(sb.hits, 1u);
  EXPECT_EQ(sa.remoteErrors + sb.remoteErrors + sa.remoteRejected + sb.remoteRejected, 0u);
  auto j = nlohmann::json::parse(sb.toJson());
  for (const char* k : {"remote_hits", "remote_misses", "remote_uploads", "remote_errors", "remote_rejected"})
    EXPECT_TRUE(j.contains(k)) << k;

  CacheConfig again;
  again.root = b.dir / "cache";
  again.remote.off = true;
  auto reopened = Cache::open(again);
  ASSERT_TRUE(reopened.ok());
  auto hit = (*reopened)->lookup(key, kKindSuperKernel, true);
  ASSERT_TRUE(hit.ok() && *hit);
  EXPECT_EQ((**hit).origin, Artifact::Origin::Disk);
}

TEST(RemoteCache, WrongSecretTamperingAndNoSecretNeverLoad) {
  Fleet f;
  SK_REQUIRE_REDIS(f.server);
  Machine a(f.server.url(), f.secret);
  const std::string key = keyOf("trust");
  ASSERT_TRUE(a.get(key).ok());

  test::writeFile(f.keys / "other", "another-fleet-secret-987654321", 0600);
  Machine wrong(f.server.url(), f.keys / "other");
  auto r = wrong.get(key);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(wrong.fake.calls, 1);  // rejected, compiled locally
  EXPECT_EQ((*r)->origin, Artifact::Origin::Built);
  CacheStats sw = wrong.stats();
  EXPECT_EQ(sw.remoteRejected, 1u);
  EXPECT_EQ(sw.remoteHits, 0u);
  EXPECT_EQ(sw.compiles, 1u);
  EXPECT_EQ(sw.remoteUploads, 0u);  // it may hold the wrong secret: never overwrite what it cannot verify
  Machine right(f.server.url(), f.secret);
  ASSERT_TRUE(right.get(key).ok());
  EXPECT_EQ(right.fake.calls, 0);  // A's entry is intact for the rest of the fleet

  // Tamper with the stored artifact: the right secret rejects it as well.
  remote::RemoteStorage probe(**remote::resolveRemoteSettings([&] {
                                RemoteCacheConfig c;
                                c.url = f.server.url();
                                c.secretFile = f.secret;
                                return c;
                              }()),
                              nullptr);
  auto v = f.server.cmd({"GET", probe.entryKey(key)});
  ASSERT_EQ(v.type, remote::RedisReply::Type::String);
  f.server.cmd({"SETRANGE", probe.entryKey(key), std::to_string(v.str.size() - 10), "\x90\x90"});
  Machine c(f.server.url(), f.secret);
  r = c.get(key);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(c.fake.calls, 1);
  EXPECT_EQ(c.stats().remoteRejected, 1u);

  // Secret readable by others: the remote tier is not used at all.
  test::writeFile(f.keys / "loose", kSecret, 0644);
  Machine loose(f.server.url(), f.keys / "loose");
  EXPECT_EQ(loose.cache->remoteUrl(), "");
  f.server.cmd({"FLUSHALL"});
  ASSERT_TRUE(loose.get(keyOf("loose")).ok());
  EXPECT_EQ(loose.fake.calls, 1);
  EXPECT_EQ(f.server.cmd({"DBSIZE"}).integer, 0);  // nothing uploaded unsigned
}

TEST(RemoteCache, ReadOnlyMachinesLoadButNeverUpload) {
  Fleet f;
  SK_REQUIRE_REDIS(f.server);
  Machine a(f.server.url(), f.secret);
  Machine ro(f.server.url(), f.secret, /*readOnly=*/true);
  ASSERT_TRUE(a.get(keyOf("shared")).ok());
  ASSERT_TRUE(ro.get(keyOf("shared")).ok());
  EXPECT_EQ(ro.fake.calls, 0);
  const auto before = f.server.cmd({"DBSIZE"}).integer;
  ASSERT_TRUE(ro.get(keyOf("ro-only")).ok());
  EXPECT_EQ(ro.fake.calls, 1);
  EXPECT_EQ(f.server.cmd({"DBSIZE"}).integer, before);
  EXPECT_EQ(ro.stats().remoteUploads, 0u);
}

TEST(RemoteCache, ServerKilledMidRunAndRestartedLeavesBothMachinesWorking) {
  Fleet f;
  SK_REQUIRE_REDIS(f.server);
  Machine a(f.server.url(), f.secret), b(f.server.url(), f.secret);
  ASSERT_TRUE(a.get(keyOf("k1")).ok());
  f.server.kill();
  auto r2 = a.get(keyOf("k2"));  // remote down: counted, built locally
  ASSERT_TRUE(r2.ok()) << r2.error().message();
  EXPECT_EQ(a.fake.calls, 2);
  EXPECT_GE(a.stats().remoteErrors, 1u);
  ASSERT_TRUE(f.server.start());
  ASSERT_TRUE(a.get(keyOf("k3")).ok());
  EXPECT_EQ(a.fake.calls, 3);
  EXPECT_EQ(a.stats().remoteUploads, 2u);  // k1 before the crash, k3 after the restart

  // B: k1 was lost with the server (no persistence): built; k3: remote hit.
  ASSERT_TRUE(b.get(keyOf("k1")).ok());
  ASSERT_TRUE(b.get(keyOf("k3")).ok());
  EXPECT_EQ(b.fake.calls, 1);
  EXPECT_EQ(b.stats().remoteHits, 1u);
  // A keeps serving all three from memory.
  for (const char* k : {"k1", "k2", "k3"}) ASSERT_TRUE(a.get(keyOf(k)).ok());
  EXPECT_EQ(a.fake.calls, 3);
}

TEST(RemoteCache, AnUnreachableServerCostsABoundedTimeThenTheTierIsOff) {
  int port = 0;
  {
    RedisServer probe;
    SK_REQUIRE_REDIS(probe);
    port = probe.port();
  }
  TempDir keys("keys");
  test::writeFile(keys / "secret", kSecret, 0600);
  Machine m(fmt::format("redis://127.0.0.1:{}", port), keys / "secret");
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(m.get(keyOf(fmt::format("down{}", i))).ok());
  // A hang guard, not a timing claim: at most 3 connects of the 500 ms default timeout are tried (1.5 s), a
  // refused one returns at once; 20 s only trips on a connect that ignores its timeout or a retry per get.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  EXPECT_EQ(m.fake.calls, 6);
  EXPECT_EQ(m.stats().remoteErrors, 3u);  // then off for the rest of the process
}

TEST(RemoteCache, WaitsForAnotherMachinesBuildThenLoadsIt) {
  Fleet f;
  SK_REQUIRE_REDIS(f.server);
  Machine a(f.server.url(), f.secret), b(f.server.url(), f.secret);
  a.fake.sleepMs = 400;
  const std::string key = keyOf("wait");
  std::thread ta([&] { ASSERT_TRUE(a.get(key).ok()); });
  // Let A take the Redis lock first.
  remote::RemoteStorage probe(**remote::resolveRemoteSettings([&] {
                                RemoteCacheConfig c;
                                c.url = f.server.url();
                                c.secretFile = f.secret;
                                return c;
                              }()),
                              nullptr);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!probe.lockHeld(key) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(probe.lockHeld(key));
  auto rb = b.get(key);
  ta.join();
  ASSERT_TRUE(rb.ok());
  EXPECT_EQ(b.fake.calls, 0);
  EXPECT_EQ((*rb)->origin, Artifact::Origin::Remote);
  EXPECT_FALSE(probe.lockHeld(key));  // released after the upload

  // A holder that died: its lock is never released; B waits lockWait, then builds.
  std::string token;
  const std::string dead = keyOf("dead-holder");
  ASSERT_EQ(probe.tryLock(dead, token), remote::RemoteStorage::Lock::Acquired);
  Machine c(f.server.url(), f.secret, false, 300ms);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.get(dead).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 250ms);
  EXPECT_EQ(c.fake.calls, 1);
}

// 6 processes, 2 per cache directory (3 machines), one cold key: the local
// lock leaves one per machine, the Redis lock one in the fleet.
TEST(RemoteCache, SixProcessesOnThreeMachinesBuildAColdKeyOnce) {
  Fleet f;
  SK_REQUIRE_REDIS(f.server);
  TempDir work("race");
  test::ScopedEnv url("SK_REMOTE_CACHE", f.server.url().c_str());
  test::ScopedEnv sec("SK_REMOTE_CACHE_SECRET_FILE", f.secret.c_str());
  test::ScopedEnv wait("SK_REMOTE_CACHE_LOCK_WAIT_MS", "20000");
  const std::string key = keyOf("race");
  const fs::path counter = work / "builds";
  std::vector<pid_t> pids;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) {
    pids.push_back(test::spawnAsync({SK_TEST_CACHE_HELPER, "build", (work / fmt::format("m{}", i % 3)).string(), key,
                                     counter.string(), "400"}));
    ASSERT_GT(pids.back(), 0);
  }
  for (pid_t p : pids) EXPECT_EQ(test::waitChild(p), 0);
  // A hang guard, not a timing claim: one 400 ms build and five loads take a few seconds; a waiter that sat out
  // the whole 20 s lock wait still passes here (the build count below catches it).
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
  const std::string builds = test::readFile(counter);
  const auto n = std::count(builds.begin(), builds.end(), '\n');
  EXPECT_GE(n, 1);
  EXPECT_LE(n, 3) << "at worst once per machine";
  EXPECT_EQ(n, 1) << "the Redis lock should leave one build in the fleet";
  for (int m = 0; m < 3; ++m)
    EXPECT_TRUE(fs::exists(work / fmt::format("m{}", m) / "entries" / key.substr(0, 2) / key / "manifest.json"));
}

// A real plan through the Session: machine B compiles nothing and computes
// the same bits.
TEST(RemoteCache, SessionOnAFreshMachineCompilesNothing) {
  Fleet f;
  SK_REQUIRE_REDIS(f.server);
  TempDir da("sa"), db("sb");
  auto list = loadOpList(fs::path(SK_SOURCE_ROOT) / "examples" / "seed" / "seed.json");
  ASSERT_TRUE(list.ok()) << list.error().message();
  auto session = [&](const fs::path& dir) {
    SessionOptions so;
    so.workers = 2;
    so.cacheDir = dir;
    so.remoteCache.url = f.server.url();
    so.remoteCache.secretFile = f.secret;
    auto s = Session::create(so);
    EXPECT_TRUE(s.ok()) << (s ? "" : s.error().message());
    return std::move(*s);
  };
  auto runOnce = [&](Session& s, std::optional<BufferSet>& out) {
    auto cp = s.compile(*list);
    ASSERT_TRUE(cp.ok()) << cp.error().message();
    auto bufs = BufferSet::create(*list);
    ASSERT_TRUE(bufs.ok());
    ASSERT_TRUE(s.run(*cp, *bufs).ok());
    out = std::move(*bufs);
  };
  std::optional<BufferSet> ra, rb;
  {
    auto sa = session(da.path());
    runOnce(*sa, ra);
    auto st = sa->cache()->stats();
    EXPECT_GT(st->compiles, 0u);
    EXPECT_EQ(st->remoteUploads, st->compiles);
  }
  {
    auto sb = session(db.path());
    runOnce(*sb, rb);
    auto st = sb->cache()->stats();
    EXPECT_EQ(st->compiles, 0u);
    EXPECT_GT(st->remoteHits, 0u);
    EXPECT_EQ(st->remoteErrors + st->remoteRejected, 0u);
  }
  ASSERT_TRUE(ra && rb);
  auto diff = ra->compare(*rb);
  ASSERT_TRUE(diff.ok());
  EXPECT_FALSE(diff->has_value()) << (*diff)->message();
}

}  // namespace remote_cache_test
}  // namespace sk
