// The remote tier against a hostile or broken server (HostileRedis.h): every
// bad reply to the entry GET, to the upload SET and to the build lock's
// SET NX ends within 2 x the timeout with a local build and the counters
// saying why (remote_errors, or remote_rejected for a well-formed value that
// does not verify), without the memory the reply announces; only an entry
// whose signature verifies is loaded.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "HostileRedis.h"
#include "TestUtil.h"
#include "cache/remote/RemoteStorage.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace hostile_remote_test {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::Answer;
using test::HostileRedis;
using test::TempDir;

constexpr auto kTimeout = 300ms;
constexpr const char* kSecret = "hostile-test-secret-0123456789";

std::string cacheKey(const std::string& s) {
  KeyBuilder kb;
  kb.add("hostile-remote-test", s);
  return kb.finish();
}

// What every other command of a case gets: a well-behaved server's answer.
Answer normal(const std::vector<std::string>& argv) {
  const std::string& cmd = argv.at(0);
  if (cmd == "GET") return Answer::reply("$-1\r\n");
  if (cmd == "SET" || cmd == "SELECT" || cmd == "AUTH") return Answer::reply("+OK\r\n");
  if (cmd == "EVAL") return Answer::reply(":1\r\n");
  if (cmd == "EXISTS") return Answer::reply(":0\r\n");
  return Answer::reply("-ERR unknown command\r\n");
}

bool isLock(const std::vector<std::string>& argv) { return argv.size() > 3 && argv[0] == "SET" && argv[3] == "NX"; }
bool isUpload(const std::vector<std::string>& argv) { return argv.size() == 3 && argv[0] == "SET"; }

// One process's cache directory with the fake server as its remote tier.
struct Machine {
  TempDir dir{"hostile"};
  std::shared_ptr<Cache> cache;
  int builds = 0;

  explicit Machine(const std::string& url, const fs::path& secret) {
    CacheConfig c;
    c.root = dir / "cache";
    c.remote.url = url;
    c.remote.secretFile = secret;
    c.remote.readOnly = false;
    c.remote.timeout = kTimeout;
    c.remote.lockWait = 2s;
    c.remote.maxErrors = 100;
    auto r = Cache::open(c);
    EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message());
    if (r) cache = *r;
  }
  Expected<ArtifactPtr> get(const std::string& key) {
    CacheRequest r;
    r.key = key;
    r.kind = kKindSuperKernel;
    r.build = [this](const fs::path& staging) -> Expected<BuildOutput> {
      ++builds;
      test::writeFile(staging / "lib.so", "not really a shared object");
      BuildOutput o;
      o.artifactName = "lib.so";
      o.command = {"fakecc"};
      o.toolchain = "fakecc 1.0";
      o.metadata = R"({"name": "sk1"})";
      return o;
    };
    return cache->getOrBuild(r);
  }
  CacheStats stats() const { return *cache->stats(); }
};

struct Keys {
  TempDir dir{"hostile-keys"};
  fs::path secret = dir / "secret";
  Keys() { test::writeFile(secret, kSecret, 0600); }
};

remote::RedisUrl loopback(const HostileRedis& server) {
  remote::RedisUrl u;
  u.host = "127.0.0.1";
  u.port = server.port();
  return u;
}

long maxRssKb() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A well-formed entry the fleet uploaded: recorded from a real upload to the fake server.
struct Recorded {
  std::string redisKey, value;
};

Recorded recordUpload(const Keys& keys, const std::string& key) {
  std::mutex mu;
  Recorded rec;
  HostileRedis server([&](const std::vector<std::string>& argv) {
    if (isUpload(argv)) {
      std::lock_guard<std::mutex> g(mu);
      rec = {argv[1], argv[2]};
    }
    return normal(argv);
  });
  EXPECT_TRUE(server.ok()) << server.reason();
  Machine m(server.url(), keys.secret);
  EXPECT_TRUE(m.get(key).ok());
  EXPECT_EQ(m.stats().remoteUploads, 1u);
  std::lock_guard<std::mutex> g(mu);
  return rec;
}

enum class Path { Get, Upload, Lock };
const char* pathName(Path p) { return p == Path::Get ? "GET" : p == Path::Upload ? "upload SET" : "lock SET NX"; }

struct Case {
  std::string name;
  std::function<Answer(const std::vector<std::string>& argv)> bad;  // the answer to the command under test
  bool rejectedOnGet = false;  // a well-formed value that must not verify: remote_rejected, not remote_errors
};

TEST(HostileRemote, EveryBadReplyEndsWithinTwiceTheTimeoutWithALocalBuild) {
  Keys keys;
  const std::string recordedKey = cacheKey("recorded");
  const Recorded good = recordUpload(keys, recordedKey);
  ASSERT_FALSE(good.value.empty());
  auto opened = remote::openEntry(kSecret, good.redisKey, recordedKey, "", good.value);
  ASSERT_EQ(opened.problem, remote::OpenProblem::None) << opened.message;

  std::vector<Case> cases = {
      {"garbage bytes", [](auto&) { return Answer::reply("\x16\x03\x01\x02\x00 HTTP/1.1 400 Bad Request\r\n\r\n"); }},
      {"negative bulk length", [](auto&) { return Answer::reply("$-7\r\n"); }},
      {"integer reply", [](auto&) { return Answer::reply(":42\r\n"); }},
      {"error reply", [](auto&) { return Answer::reply("-ERR hostile server says no\r\n"); }},
      {"closed connection", [](auto&) { return Answer::closed(); }},
      {"deep nesting", [](auto&) {
         std::string s;
         for (int i = 0; i < 100000; ++i) s += "*1\r\n";
         return Answer::reply(s);
       }},
      {"bulk length of 100 GB", [](auto&) { return Answer::reply("$107374182400\r\n"); }},
      {"1 GB value sent slowly", [](auto&) {
         Answer a = Answer::trickle("$1073741824\r\n", 5ms);
         a.chunk = 64 * 1024;
         a.endless = true;
         return a;
       }},
      {"array header of 2^31 - 1 elements", [](auto&) { return Answer::reply("*2147483647\r\n"); }},
      {"a valid reply trickled a byte per 100 ms",
       [](auto& argv) { return Answer::trickle(normal(argv).bytes, 100ms); }},
      {"reply cut mid-frame, then closed", [](auto&) { return Answer::closed("$100\r\nabc"); }},
      {"reply cut mid-frame, then silence", [](auto&) { return Answer::reply("$100\r\nabc"); }},
      {"accepts and never answers", [](auto&) { return Answer::silence(); }},
      {"a signed entry for another key",
       [&](auto&) { return Answer::reply(fmt::format("${}\r\n{}\r\n", good.value.size(), good.value)); }, true},
      {"a signed entry with another key inside",
       [&](auto& argv) {
         // Signed for the very Redis key asked for, by the fleet's secret, but its manifest is another key's.
         std::string v = remote::sealEntry(kSecret, argv.at(1), opened.entry.manifest.dump(), opened.entry.artifact);
         return Answer::reply(fmt::format("${}\r\n{}\r\n", v.size(), v));
       },
       true},
  };

  const long rssBefore = maxRssKb();
  int n = 0;
  for (const Case& c : cases) {
    for (Path path : {Path::Get, Path::Upload, Path::Lock}) {
      SCOPED_TRACE(fmt::format("{} to the {}", c.name, pathName(path)));
      HostileRedis server([&](const std::vector<std::string>& argv) {
        const bool target = path == Path::Get ? argv.at(0) == "GET" : path == Path::Upload ? isUpload(argv) : isLock(argv);
        return target ? c.bad(argv) : normal(argv);
      });
      ASSERT_TRUE(server.ok()) << server.reason();
      Machine m(server.url(), keys.secret);
      const std::string key = cacheKey(fmt::format("case-{}", n++));
      const auto t0 = std::chrono::steady_clock::now();
      auto r = m.get(key);
      const auto took = std::chrono::steady_clock::now() - t0;
      ASSERT_TRUE(r.ok()) << r.error().message();
      EXPECT_EQ((*r)->origin, Artifact::Origin::Built);
      EXPECT_EQ(m.builds, 1);
      EXPECT_LT(took, 2 * kTimeout) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
      const CacheStats s = m.stats();
      EXPECT_EQ(s.remoteHits, 0u);
      EXPECT_EQ(s.remoteUploads, 0u);
      EXPECT_EQ(s.compiles, 1u);
      const bool rejected = path == Path::Get && c.rejectedOnGet;
      EXPECT_EQ(s.remoteErrors, rejected ? 0u : 1u);
      EXPECT_EQ(s.remoteRejected, rejected ? 1u : 0u);
      // A miss is counted once the server said it has no entry (then the lock or the upload failed).
      EXPECT_EQ(s.remoteMisses, path == Path::Upload ? 1u : 0u);
    }
  }
  // Nothing any reply announced (100 GB, 2^31 - 1 elements, 1 GB) was allocated.
  EXPECT_LT(maxRssKb() - rssBefore, 100 * 1024) << "KiB";
}

// The lock answered (another machine holds it), then the polling GET never is.
TEST(HostileRemote, ALockAnsweredAndAValueNeverIsEndsWithinTwiceTheTimeout) {
  Keys keys;
  std::atomic<int> gets{0};
  HostileRedis server([&](const std::vector<std::string>& argv) {
    if (isLock(argv)) return Answer::reply("$-1\r\n");  // held elsewhere
    if (argv.at(0) == "GET" && gets.fetch_add(1) > 0) return Answer::silence();
    return normal(argv);
  });
  ASSERT_TRUE(server.ok()) << server.reason();
  Machine m(server.url(), keys.secret);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = m.get(cacheKey("lock-then-silence"));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_LT(took, 2 * kTimeout);
  EXPECT_EQ(m.builds, 1);
  EXPECT_EQ(m.stats().remoteErrors, 1u);
  EXPECT_EQ(m.stats().remoteUploads, 0u);
  EXPECT_EQ(gets.load(), 2);
}

// The same reader loads a real entry: what the fleet uploaded, served back
// for its own key, is a verified hit and nothing is built.
TEST(HostileRemote, OnlyAVerifiedEntryIsLoaded) {
  Keys keys;
  const std::string key = cacheKey("served-back");
  const Recorded good = recordUpload(keys, key);
  ASSERT_FALSE(good.value.empty());
  const std::string reply = fmt::format("${}\r\n{}\r\n", good.value.size(), good.value);
  HostileRedis server([&](const std::vector<std::string>& argv) {
    return argv.at(0) == "GET" && argv.at(1) == good.redisKey ? Answer::reply(reply) : normal(argv);
  });
  ASSERT_TRUE(server.ok()) << server.reason();
  Machine m(server.url(), keys.secret);
  auto r = m.get(key);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ((*r)->origin, Artifact::Origin::Remote);
  EXPECT_EQ(m.builds, 0);
  EXPECT_EQ(m.stats().remoteHits, 1u);
  // The same bytes trickled in 7-byte pieces (a slow but live server) still arrive within the timeout.
  HostileRedis slow([&](const std::vector<std::string>& argv) {
    if (argv.at(0) != "GET") return normal(argv);
    Answer a = Answer::trickle(reply, 1ms);
    a.chunk = (reply.size() + 9) / 10;
    return a;
  });
  Machine m2(slow.url(), keys.secret);
  r = m2.get(key);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ((*r)->origin, Artifact::Origin::Remote);
  EXPECT_EQ(m2.stats().remoteErrors, 0u);
}

// A value over the largest allowed entry is refused at its header, whatever it is.
TEST(HostileRemote, AValueOverTheEntryLimitIsRefusedUnread) {
  std::atomic<bool> sent{false};
  HostileRedis server([&](const std::vector<std::string>&) {
    sent = true;
    Answer a = Answer::reply(fmt::format("${}\r\n", 2048));
    a.bytes += std::string(2048, 'v') + "\r\n";
    return a;
  });
  ASSERT_TRUE(server.ok()) << server.reason();
  remote::RedisClient client(loopback(server), kTimeout);
  remote::RedisReply reply;
  auto f = client.command({"GET", "k"}, reply, remote::ReplyLimits::value(1024));
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->transport);
  EXPECT_NE(f->message.find("over the limit of 1024 bytes"), std::string::npos) << f->message;
  EXPECT_FALSE(client.connected());
  f = client.command({"GET", "k"}, reply, remote::ReplyLimits::value(4096));
  ASSERT_FALSE(f.has_value()) << f->message;
  EXPECT_EQ(reply.str, std::string(2048, 'v'));
  EXPECT_TRUE(sent);
}

// A server that sends more than the reply (a second, stale one): the next
// command must not take the stale reply for its own.
TEST(HostileRemote, BytesAfterAReplyAreNeverTheNextCommandsReply) {
  std::atomic<int> gets{0};
  HostileRedis server([&](const std::vector<std::string>&) {
    return gets.fetch_add(1) == 0 ? Answer::reply("$-1\r\n$5\r\nstale\r\n") : Answer::reply("$5\r\nfresh\r\n");
  });
  ASSERT_TRUE(server.ok()) << server.reason();
  remote::RedisClient client(loopback(server), kTimeout);
  remote::RedisReply reply;
  ASSERT_FALSE(client.command({"GET", "k"}, reply, remote::ReplyLimits::value(1024)).has_value());
  EXPECT_EQ(reply.type, remote::RedisReply::Type::Nil);
  ASSERT_FALSE(client.command({"GET", "k"}, reply, remote::ReplyLimits::value(1024)).has_value());
  EXPECT_EQ(reply.str, "fresh");
}

}  // namespace hostile_remote_test
}  // namespace sk
