// The remote tier from the command line, against a real redis-server:
// sk-compile on machine A uploads, on machine B compiles nothing;
// `sk-cache stats --json` shows the remote_* counters; `sk-cache remote
// ping|ls|verify` for operators, verify catching a tampered entry; clear
// errors for no URL, a TLS URL, no secret and an unreachable server.
#include "ToolTestUtil.h"
#include "cache/RedisServer.h"

namespace sk::tooltest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kSecret = "tools-fleet-secret-0123456789";

struct RemoteFleet {
  test::RedisServer server;
  TempDir keys;
  std::string secret = (keys.path() / "secret").string();
  RemoteFleet() { test::writeFile(secret, kSecret, 0600); }
  std::map<std::string, std::optional<std::string>> env() const {
    return {{"SK_REMOTE_CACHE", server.url()}, {"SK_REMOTE_CACHE_SECRET_FILE", secret}};
  }
};

json stats(const std::string& dir) {
  Result r = run({kCache, "stats", "--json", "--cache-dir", dir});
  EXPECT_EQ(r.code, 0) << r.all();
  return json::parse(r.out, nullptr, false);
}

TEST(SkCacheRemote, FreshMachineCompilesNothingAndOperatorsCanInspectTheTier) {
  RemoteFleet f;
  SK_REQUIRE_REDIS(f.server);
  TempDir a, b;
  // Machine A: the URL as an option, the secret from the environment.
  Result c = run({{kCompile, seedList(), "--workers", "2", "--run", "--cache-dir", a.path().string(),
                   "--remote-cache", f.server.url()},
                  {{"SK_REMOTE_CACHE_SECRET_FILE", f.secret}}});
  ASSERT_EQ(c.code, 0) << c.all();
  json sa = stats(a.path().string());
  const uint64_t built = sa["compiles"].get<uint64_t>();  // fused + unfused reference + objects
  EXPECT_GE(built, 3u);
  EXPECT_EQ(sa["remote_uploads"], built);
  EXPECT_EQ(sa["remote_misses"], built);
  // Machine B: everything from the environment; nothing compiled.
  c = run({{kCompile, seedList(), "--workers", "2", "--cache-dir", b.path().string(), "--run"}, f.env()});
  ASSERT_EQ(c.code, 0) << c.all();
  json sb = stats(b.path().string());
  EXPECT_EQ(sb["compiles"], 0);
  EXPECT_EQ(sb["remote_hits"], built);
  EXPECT_EQ(sb["remote_errors"], 0);
  EXPECT_EQ(sb["remote_rejected"], 0);
  Result st = run({kCache, "stats", "--cache-dir", b.path().string()});
  EXPECT_THAT(st.out, HasSubstr(fmt::format("remote            hits {}, misses 0, uploads 0, errors 0, rejected 0", built)));

  Result p = run({{kCache, "remote", "ping"}, f.env()});
  ASSERT_EQ(p.code, 0) << p.all();
  EXPECT_THAT(p.out, HasSubstr("PONG"));
  EXPECT_THAT(p.out, HasSubstr("secret   ok"));
  p = run({{kCache, "remote", "ping", "--json", "--remote", f.server.url()},
           {{"SK_REMOTE_CACHE_SECRET_FILE", f.secret}}});
  ASSERT_EQ(p.code, 0) << p.all();
  json pj = json::parse(p.out, nullptr, false);
  EXPECT_EQ(pj["ok"], true);
  EXPECT_EQ(pj["secret_ok"], true);

  Result l = run({{kCache, "remote", "ls", "--json"}, f.env()});
  ASSERT_EQ(l.code, 0) << l.all();
  json lj = json::parse(l.out, nullptr, false);
  ASSERT_EQ(lj["entries"].size(), built) << l.out;
  l = run({{kCache, "remote", "ls"}, f.env()});
  EXPECT_THAT(l.out, HasSubstr(fmt::format("{} entries", built)));
  EXPECT_THAT(l.out, HasSubstr("superkernel"));

  Result v = run({{kCache, "remote", "verify"}, f.env()});
  EXPECT_EQ(v.code, 0) << v.all();
  EXPECT_THAT(v.out, HasSubstr(fmt::format("all good ({} ok, 0 bad)", built)));
  // Tamper with one entry: verify names it and fails.
  const std::string victim = lj["entries"][0]["key"];
  const std::string rk = lj["prefix"].get<std::string>() + "e:" + victim;
  f.server.cmd({"SETRANGE", rk, "100", "tampered"});
  v = run({{kCache, "remote", "verify"}, f.env()});
  EXPECT_EQ(v.code, 1) << v.all();
  EXPECT_THAT(v.out, HasSubstr("REJECTED"));
  EXPECT_THAT(v.out, HasSubstr(victim.substr(0, 16)));
  // An operator whose secret is right removes it; the next machine rebuilds and re-uploads.
  v = run({{kCache, "remote", "verify", "--delete-bad"}, f.env()});
  EXPECT_EQ(v.code, 0) << v.all();
  EXPECT_THAT(v.out, HasSubstr("deleted 1"));
  v = run({{kCache, "remote", "verify"}, f.env()});
  EXPECT_EQ(v.code, 0) << v.all();
  EXPECT_THAT(v.out, HasSubstr(fmt::format("all good ({} ok, 0 bad)", built - 1)));
}

TEST(SkCacheRemote, ClearErrors) {
  Result r = run({{kCache, "remote", "ping"}, {{"SK_REMOTE_CACHE", std::nullopt}}});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("no remote cache configured"));
  r = run({kCache, "remote", "ping", "--remote", "rediss://cache:6380"});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("TLS"));
  r = run({kCache, "remote", "ping", "--remote", "redis://host:notaport"});
  EXPECT_EQ(r.code, 2) << r.all();

  RemoteFleet f;
  SK_REQUIRE_REDIS(f.server);
  // No secret: ping works and says this machine will not use the tier;
  // verify refuses; sk-compile warns and compiles locally.
  auto noSecret = f.env();
  noSecret["SK_REMOTE_CACHE_SECRET_FILE"] = std::nullopt;
  r = run({{kCache, "remote", "ping"}, noSecret});
  EXPECT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("NOT USABLE"));
  r = run({{kCache, "remote", "verify"}, noSecret});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("without the secret"));
  TempDir d;
  Result c = run({{kCompile, seedList(), "--workers", "2", "--cache-dir", d.path().string()}, noSecret});
  ASSERT_EQ(c.code, 0) << c.all();
  EXPECT_THAT(c.err, HasSubstr("not used: SK_REMOTE_CACHE_SECRET_FILE is not set"));
  EXPECT_EQ(f.server.cmd({"DBSIZE"}).integer, 0);

  // Unreachable: an I/O failure, promptly.
  const int port = f.server.port();
  f.server.kill();
  r = run({kCache, "remote", "ping", "--remote", fmt::format("redis://127.0.0.1:{}", port)});
  EXPECT_EQ(r.code, 4) << r.all();
  EXPECT_THAT(r.err, HasSubstr("Connection refused"));
}

}  // namespace
}  // namespace sk::tooltest
