// The remote tier's storage layer against a real redis-server: URL parsing,
// the secret file rules, the signed envelope (wrong secret, tampering,
// truncation, replay under another key), the NX PX build lock, and faults
// (refused, timeout, restart, refused write, oversized value, eviction,
// AUTH) with their counters and the disable-after-repeated-errors rule.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "RedisServer.h"
#include "TestUtil.h"
#include "cache/remote/RemoteStorage.h"
#include "superkernel/cache/Key.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace remote_storage_test {
using namespace std::chrono_literals;
using remote::RemoteCounters;
using remote::RemoteEntry;
using remote::RemoteStorage;
using test::RedisServer;
using test::TempDir;

constexpr const char* kSecret = "0123456789abcdef-fleet-secret";

std::string keyFor(const std::string& s) { return sha256Hex("key:" + s); }

nlohmann::json manifestFor(const std::string& key, const std::string& artifact, const std::string& kind = "object") {
  return nlohmann::json{{"key", key},
                        {"kind", kind},
                        {"artifact", "object.o"},
                        {"sha256", sha256Hex(artifact)},
                        {"size", artifact.size()},
                        {"metadata", {{"op_list", "{\"ops\":[]}"}}}};
}

struct Fixture {
  TempDir dir{"remote"};
  std::filesystem::path secretFile = dir / "secret";
  explicit Fixture(const std::string& secret = kSecret) { test::writeFile(secretFile, secret, 0600); }

  RemoteCacheConfig config(const std::string& url) const {
    RemoteCacheConfig c;
    c.url = url;
    c.secretFile = secretFile;
    c.timeout = 300ms;
    c.readOnly = false;
    return c;
  }
  static std::unique_ptr<RemoteStorage> open(const RemoteCacheConfig& c, RemoteCounters* counters) {
    auto s = remote::resolveRemoteSettings(c);
    if (!s || !*s) return nullptr;
    return std::make_unique<RemoteStorage>(std::move(**s), counters);
  }
};

TEST(RemoteUrl, ParsesHostPortDbAndCredentials) {
  auto u = remote::parseRedisUrl("redis://cache.example:7000/3");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_EQ(u->host, "cache.example");
  EXPECT_EQ(u->port, 7000);
  EXPECT_EQ(u->db, 3);
  EXPECT_FALSE(u->password);

  u = remote::parseRedisUrl("redis://builder:p%40ss%3Aword@10.0.0.5");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_EQ(u->user, "builder");
  EXPECT_EQ(*u->password, "p@ss:word");
  EXPECT_EQ(u->port, 6379);
  EXPECT_EQ(u->redacted(), "redis://builder:***@10.0.0.5:6379/0");
  EXPECT_EQ(u->redacted().find("p@ss"), std::string::npos);

  u = remote::parseRedisUrl("redis://:only-password@[::1]:6380");
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 6380);
  EXPECT_TRUE(u->user.empty());
  EXPECT_EQ(*u->password, "only-password");
}

TEST(RemoteUrl, RejectsBadUrlsWithOneClearError) {
  for (const char* bad : {"http://host:6379", "redis://", "redis://host:", "redis://host:99999", "redis://host:abc",
                          "redis://host/x", "redis://[::1", "redis://u:%zz@host"}) {
    auto u = remote::parseRedisUrl(bad);
    ASSERT_FALSE(u) << bad;
    EXPECT_EQ(u.error().kind(), ErrorKind::BadInput);
    EXPECT_NE(u.error().message().find("expected redis://"), std::string::npos) << u.error().message();
  }
  auto tls = remote::parseRedisUrl("rediss://host:6380");
  ASSERT_FALSE(tls);
  EXPECT_NE(tls.error().message().find("TLS"), std::string::npos);
}

TEST(RemoteSettings, EnvironmentAndPrefix) {
  test::ScopedEnv url("SK_REMOTE_CACHE", "redis://127.0.0.1:1/2");
  test::ScopedEnv ro("SK_REMOTE_CACHE_READONLY", "1");
  test::ScopedEnv to("SK_REMOTE_CACHE_TIMEOUT_MS", "42");
  test::ScopedEnv sf("SK_REMOTE_CACHE_SECRET_FILE", nullptr);
  auto s = remote::resolveRemoteSettings({});
  ASSERT_TRUE(s && *s);
  EXPECT_EQ((*s)->url.db, 2);
  EXPECT_TRUE((*s)->readOnly);
  EXPECT_EQ((*s)->timeout, 42ms);
  EXPECT_EQ((*s)->prefix, fmt::format("superkernel:s{}:v{}:", kCacheKeySchemaVersion, libraryVersion()));
  EXPECT_TRUE((*s)->secret.empty());
  EXPECT_NE((*s)->secretProblem.find("SK_REMOTE_CACHE_SECRET_FILE is not set"), std::string::npos);

  RemoteCacheConfig off;
  off.off = true;
  auto none = remote::resolveRemoteSettings(off);
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);

  test::ScopedEnv badTo("SK_REMOTE_CACHE_TIMEOUT_MS", "soon");
  auto bad = remote::resolveRemoteSettings({});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("SK_REMOTE_CACHE_TIMEOUT_MS"), std::string::npos);
}

TEST(RemoteSettings, SecretFileMustBeOwnerOnlyAndLongEnough) {
  Fixture f;
  RemoteCacheConfig c = f.config("redis://127.0.0.1:1");
  auto s = remote::resolveRemoteSettings(c);
  ASSERT_TRUE(s && *s);
  EXPECT_EQ((*s)->secret, kSecret);
  EXPECT_TRUE((*s)->secretProblem.empty());

  ::chmod(f.secretFile.c_str(), 0644);
  s = remote::resolveRemoteSettings(c);
  ASSERT_TRUE(s && *s);
  EXPECT_TRUE((*s)->secret.empty());
  EXPECT_NE((*s)->secretProblem.find("group or others"), std::string::npos) << (*s)->secretProblem;
  RemoteStorage st(**s, nullptr);
  EXPECT_FALSE(st.usable());  // no secret: nothing is read or written, never unsigned

  test::writeFile(f.dir / "short", "tiny\n", 0600);
  c.secretFile = f.dir / "short";
  s = remote::resolveRemoteSettings(c);
  EXPECT_NE((*s)->secretProblem.find("fewer than 16 bytes"), std::string::npos);

  std::filesystem::create_symlink(f.secretFile, f.dir / "link");
  c.secretFile = f.dir / "link";
  s = remote::resolveRemoteSettings(c);
  EXPECT_NE((*s)->secretProblem.find("symbolic link"), std::string::npos);

  c.secretFile = f.dir / "missing";
  s = remote::resolveRemoteSettings(c);
  EXPECT_FALSE((*s)->secretProblem.empty());
}

TEST(RemoteEnvelope, SignedEntriesOpenAndEveryTamperingIsCaught) {
  const std::string key = keyFor("env"), art = std::string("\x7f" "ELF artifact bytes", 19);
  const std::string rk = "superkernel:s1:v0:e:" + key;
  const std::string mtext = manifestFor(key, art).dump();
  const std::string value = remote::sealEntry(kSecret, rk, mtext, art);
  ASSERT_FALSE(value.empty());

  auto ok = remote::openEntry(kSecret, rk, key, "object", value);
  ASSERT_EQ(ok.problem, remote::OpenProblem::None) << ok.message;
  EXPECT_EQ(ok.entry.artifact, art);
  EXPECT_EQ(ok.entry.manifest["key"], key);

  EXPECT_EQ(remote::openEntry("another-secret-of-16+", rk, key, "object", value).problem,
            remote::OpenProblem::Signature);
  EXPECT_EQ(remote::openEntry("", rk, key, "object", value).problem, remote::OpenProblem::Signature);
  // Every single-byte flip after the magic is caught (signature or lengths).
  for (size_t i = 8; i < value.size(); ++i) {
    std::string t = value;
    t[i] = static_cast<char>(t[i] ^ 0x01);
    EXPECT_NE(remote::openEntry(kSecret, rk, key, "object", t).problem, remote::OpenProblem::None) << "byte " << i;
  }
  EXPECT_EQ(remote::openEntry(kSecret, rk, key, "object", value.substr(0, value.size() - 1)).problem,
            remote::OpenProblem::Format);
  EXPECT_EQ(remote::openEntry(kSecret, rk, key, "object", "").problem, remote::OpenProblem::Format);
  EXPECT_EQ(remote::openEntry(kSecret, rk, key, "object", std::string(100, 'x')).problem, remote::OpenProblem::Format);
  // Replayed under another cache key or prefix (library version): rejected.
  const std::string other = keyFor("other");
  EXPECT_EQ(remote::openEntry(kSecret, "superkernel:s1:v0:e:" + other, other, "object", value).problem,
            remote::OpenProblem::Signature);
  EXPECT_EQ(remote::openEntry(kSecret, "superkernel:s1:v9:e:" + key, key, "object", value).problem,
            remote::OpenProblem::Signature);
  // Signed (by a holder of the secret) but inconsistent: still never loaded.
  nlohmann::json badSha = manifestFor(key, art);
  badSha["sha256"] = sha256Hex("something else");
  EXPECT_EQ(remote::openEntry(kSecret, rk, key, "object", remote::sealEntry(kSecret, rk, badSha.dump(), art)).problem,
            remote::OpenProblem::Contents);
  nlohmann::json badName = manifestFor(key, art);
  badName["artifact"] = "../../evil.so";
  EXPECT_EQ(remote::openEntry(kSecret, rk, key, "object", remote::sealEntry(kSecret, rk, badName.dump(), art)).problem,
            remote::OpenProblem::Contents);
  EXPECT_EQ(remote::openEntry(kSecret, rk, key, "superkernel", value).problem, remote::OpenProblem::Contents);
}

TEST(RemoteStorage, UploadOnOneMachineFetchOnAnother) {
  RedisServer server;
  SK_REQUIRE_REDIS(server);
  Fixture f;
  RemoteCounters ca, cb;
  auto a = Fixture::open(f.config(server.url()), &ca);
  auto b = Fixture::open(f.config(server.url()), &cb);
  ASSERT_TRUE(a && b && a->usable());
  const std::string key = keyFor("share"), art = "artifact-bytes";
  RemoteEntry e;
  EXPECT_EQ(b->fetch(key, "object", e), RemoteStorage::Fetch::Miss);
  EXPECT_TRUE(a->upload(key, manifestFor(key, art), art));
  EXPECT_EQ(b->fetch(key, "object", e), RemoteStorage::Fetch::Hit);
  EXPECT_EQ(e.artifact, art);
  EXPECT_EQ(e.manifest["metadata"]["op_list"], "{\"ops\":[]}");
  EXPECT_EQ(ca.uploads, 1u);
  EXPECT_EQ(cb.hits, 1u);
  EXPECT_EQ(cb.misses, 1u);
  EXPECT_EQ(ca.errors + cb.errors + ca.rejected + cb.rejected, 0u);
  // The stored key carries the schema and library version.
  EXPECT_EQ(server.cmd({"EXISTS", a->entryKey(key)}).integer, 1);
  EXPECT_NE(a->entryKey(key).find(fmt::format(":v{}:", libraryVersion())), std::string::npos);
}

TEST(RemoteStorage, WrongSecretAndTamperedValuesAreCountedRejections) {
  RedisServer server;
  SK_REQUIRE_REDIS(server);
  Fixture f, other("a-different-secret-0123456789");
  RemoteCounters ca, cb;
  auto a = Fixture::open(f.config(server.url()), &ca);
  auto b = Fixture::open(other.config(server.url()), &cb);
  const std::string key = keyFor("trust"), art = "code that would be loaded";
  ASSERT_TRUE(a->upload(key, manifestFor(key, art), art));
  RemoteEntry e;
  EXPECT_EQ(b->fetch(key, "object", e), RemoteStorage::Fetch::Rejected);
  EXPECT_EQ(cb.rejected, 1u);
  EXPECT_EQ(cb.hits, 0u);
  EXPECT_TRUE(e.artifact.empty());

  // Flip one artifact byte in Redis: the right secret rejects it too.
  auto v = server.cmd({"GET", a->entryKey(key)});
  ASSERT_EQ(v.type, remote::RedisReply::Type::String);
  server.cmd({"SETRANGE", a->entryKey(key), std::to_string(v.str.size() - 3), "X"});
  EXPECT_EQ(a->fetch(key, "object", e), RemoteStorage::Fetch::Rejected);
  // An unsigned value planted by someone without the secret.
  server.cmd({"SET", a->entryKey(key), art});
  EXPECT_EQ(a->fetch(key, "object", e), RemoteStorage::Fetch::Rejected);
  EXPECT_EQ(ca.rejected, 2u);
  EXPECT_EQ(ca.hits, 0u);
  EXPECT_EQ(ca.errors, 0u);
  EXPECT_TRUE(a->usable());  // rejections do not disable the tier
}

TEST(RemoteStorage, ReadOnlyClientsNeverWriteOrLock) {
  RedisServer server;
  SK_REQUIRE_REDIS(server);
  Fixture f;
  RemoteCacheConfig c = f.config(server.url());
  c.readOnly = true;
  RemoteCounters cnt;
  auto ro = Fixture::open(c, &cnt);
  const std::string key = keyFor("ro"), art = "x";
  EXPECT_FALSE(ro->upload(key, manifestFor(key, art), art));
  std::string token;
  EXPECT_EQ(ro->tryLock(key, token), RemoteStorage::Lock::Off);
  EXPECT_EQ(server.cmd({"DBSIZE"}).integer, 0);
  EXPECT_EQ(cnt.uploads + cnt.errors, 0u);
}

TEST(RemoteStorage, BuildLockIsExclusiveExpiresAndOnlyItsOwnerReleasesIt) {
  RedisServer server;
  SK_REQUIRE_REDIS(server);
  Fixture f;
  RemoteCacheConfig c = f.config(server.url());
  c.lockTtl = 150ms;
  auto a = Fixture::open(c, nullptr);
  auto b = Fixture::open(c, nullptr);
  const std::string key = keyFor("lock");
  std::string ta, tb;
  EXPECT_EQ(a->tryLock(key, ta), RemoteStorage::Lock::Acquired);
  EXPECT_EQ(b->tryLock(key, tb), RemoteStorage::Lock::Held);
  EXPECT_TRUE(b->lockHeld(key));
  b->unlock(key, "not-the-owner");
  EXPECT_TRUE(b->lockHeld(key));
  a->unlock(key, ta);
  EXPECT_FALSE(b->lockHeld(key));
  EXPECT_EQ(b->tryLock(key, tb), RemoteStorage::Lock::Acquired);
  // A builder that dies never unlocks: the PX expiry frees the key.
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (a->tryLock(key, ta) != RemoteStorage::Lock::Acquired && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  EXPECT_NE(ta, tb);
  b->unlock(key, tb);  // stale token: leaves a's lock alone
  EXPECT_TRUE(b->lockHeld(key));
}

TEST(RemoteStorage, ConnectionRefusedIsCountedBoundedAndDisablesTheTier) {
  Fixture f;
  // A port nobody listens on: take a free one and do not start a server there.
  int port = 0;
  {
    RedisServer probe;
    SK_REQUIRE_REDIS(probe);
    port = probe.port();
  }
  RemoteCounters cnt;
  auto s = Fixture::open(f.config(fmt::format("redis://127.0.0.1:{}", port)), &cnt);
  const std::string key = keyFor("refused");
  RemoteEntry e;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Error);
  EXPECT_FALSE(s->upload(key, manifestFor(key, "a"), "a"));
  std::string tok;
  EXPECT_EQ(s->tryLock(key, tok), RemoteStorage::Lock::Error);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // no hang (refusal is immediate)
  EXPECT_EQ(cnt.errors, 3u);
  EXPECT_TRUE(s->disabled());
  // Disabled: no more network traffic and no more counting.
  EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Off);
  EXPECT_EQ(cnt.errors, 3u);
}

TEST(RemoteStorage, AServerThatStopsAnsweringTimesOut) {
  RedisServer server;
  SK_REQUIRE_REDIS(server);
  Fixture f;
  RemoteCacheConfig c = f.config(server.url());
  c.timeout = 200ms;
  RemoteCounters cnt;
  auto s = Fixture::open(c, &cnt);
  const std::string key = keyFor("timeout");
  RemoteEntry e;
  EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Miss);  // connected
  server.pause();
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Error);
  auto took = std::chrono::steady_clock::now() - t0;
  server.resume();
  // Bounded by the timeout (one write + one read), with slack for a loaded CI box.
  EXPECT_LT(took, 3s);
  EXPECT_GE(took, 150ms);
  EXPECT_EQ(cnt.errors, 1u);
  EXPECT_FALSE(s->disabled());
  EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Miss);  // reconnected
}

TEST(RemoteStorage, ServerRestartMidRunReconnects) {
  RedisServer server;
  SK_REQUIRE_REDIS(server);
  Fixture f;
  RemoteCounters cnt;
  auto s = Fixture::open(f.config(server.url()), &cnt);
  const std::string k1 = keyFor("r1"), k2 = keyFor("r2");
  ASSERT_TRUE(s->upload(k1, manifestFor(k1, "one"), "one"));
  server.kill();
  RemoteEntry e;
  EXPECT_EQ(s->fetch(k1, "object", e), RemoteStorage::Fetch::Error);
  ASSERT_TRUE(server.start());
  // The restarted server lost everything (no persistence): a miss, then the
  // tier works again on a new connection.
  EXPECT_EQ(s->fetch(k1, "object", e), RemoteStorage::Fetch::Miss);
  EXPECT_TRUE(s->upload(k2, manifestFor(k2, "two"), "two"));
  EXPECT_EQ(s->fetch(k2, "object", e), RemoteStorage::Fetch::Hit);
  EXPECT_EQ(cnt.errors, 1u);
  EXPECT_FALSE(s->disabled());
}

TEST(RemoteStorage, RefusedWritesOversizedValuesAndEvictions) {
  RedisServer server({"--proto-max-bulk-len", "1mb"});
  SK_REQUIRE_REDIS(server);
  Fixture f;
  RemoteCacheConfig c = f.config(server.url());
  c.maxErrors = 10;
  RemoteCounters cnt;
  auto s = Fixture::open(c, &cnt);
  const std::string key = keyFor("oom");
  // Out of memory with noeviction: Redis refuses the SET.
  server.cmd({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  server.cmd({"CONFIG", "SET", "maxmemory", "1"});
  EXPECT_FALSE(s->upload(key, manifestFor(key, "x"), "x"));
  EXPECT_EQ(cnt.errors, 1u);
  server.cmd({"CONFIG", "SET", "maxmemory", "0"});
  EXPECT_TRUE(s->upload(key, manifestFor(key, "x"), "x"));
  // Larger than the server's proto-max-bulk-len: the server drops the
  // connection mid-write (SIGPIPE must not kill us); the next command reconnects.
  const std::string big(1536 * 1024, 'b');
  const std::string bigKey = keyFor("big");
  EXPECT_FALSE(s->upload(bigKey, manifestFor(bigKey, big), big));
  EXPECT_EQ(cnt.errors, 2u);
  RemoteEntry e;
  EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Hit);
  // Over the client's own limit: not sent at all.
  RemoteCacheConfig small = c;
  small.maxValueBytes = 1024;
  RemoteCounters cs;
  auto t = Fixture::open(small, &cs);
  const std::string mid(4096, 'm');
  EXPECT_FALSE(t->upload(bigKey, manifestFor(bigKey, mid), mid));
  EXPECT_EQ(cs.errors, 1u);
  EXPECT_EQ(server.cmd({"EXISTS", t->entryKey(bigKey)}).integer, 0);
  // Evicted on the Redis side: a plain miss (one value per entry, so never half an entry).
  server.cmd({"FLUSHALL"});
  EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Miss);
}

TEST(RemoteStorage, AuthFromTheUrlOrAPasswordFileAndDatabaseSelection) {
  RedisServer server({"--requirepass", "s3cret-pass"});
  SK_REQUIRE_REDIS(server);
  server.setPassword("s3cret-pass");
  Fixture f;
  const std::string key = keyFor("auth");
  {
    RemoteCounters cnt;
    auto s = Fixture::open(f.config(fmt::format("redis://:s3cret-pass@127.0.0.1:{}/4", server.port())), &cnt);
    EXPECT_TRUE(s->upload(key, manifestFor(key, "a"), "a"));
    EXPECT_EQ(server.cmd({"EXISTS", s->entryKey(key)}, 4).integer, 1);
    EXPECT_EQ(server.cmd({"EXISTS", s->entryKey(key)}, 0).integer, 0);
  }
  {
    test::writeFile(f.dir / "pw", "s3cret-pass\n", 0600);
    RemoteCacheConfig c = f.config(server.url(4));
    c.passwordFile = f.dir / "pw";
    auto s = Fixture::open(c, nullptr);
    RemoteEntry e;
    EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Hit);
  }
  {
    ::chmod((f.dir / "pw").c_str(), 0640);
    RemoteCacheConfig c = f.config(server.url(4));
    c.passwordFile = f.dir / "pw";
    auto st = remote::resolveRemoteSettings(c);
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message().find("chmod 600"), std::string::npos);
  }
  {
    RemoteCounters cnt;
    auto s = Fixture::open(f.config(fmt::format("redis://:wrong@127.0.0.1:{}", server.port())), &cnt);
    RemoteEntry e;
    EXPECT_EQ(s->fetch(key, "object", e), RemoteStorage::Fetch::Error);
    EXPECT_EQ(cnt.errors, 1u);
  }
}

}  // namespace remote_storage_test
}  // namespace sk
