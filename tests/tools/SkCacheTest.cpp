// sk-cache, run as a user (or a CI job) runs it: stats, ls, inspect, gc,
// clear, and verify catching a tampered entry, a stale key and a fused vs
// unfused mismatch.
#include <fmt/format.h>

#include "ToolTestUtil.h"
#include "superkernel/superkernel.h"

namespace sk::tooltest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

json statsJson(const std::string& dir) {
  Result r = run({kCache, "stats", "--json", "--cache-dir", dir});
  EXPECT_EQ(r.code, 0) << r.all();
  return json::parse(r.out, nullptr, false);
}

TEST(SkCache, HelpAndUsageErrors) {
  Result r = run({kCache, "--help"});
  ASSERT_EQ(r.code, 0) << r.all();
  for (const char* s : {"stats", "ls", "inspect", "verify", "gc", "clear", "--cache-dir"}) EXPECT_THAT(r.out, HasSubstr(s));
  r = run({kCache});
  EXPECT_EQ(r.code, 2) << r.all();  // a subcommand is required
  r = run({kCache, "frobnicate"});
  EXPECT_EQ(r.code, 2) << r.all();
  r = run({kCache, "gc"});
  EXPECT_EQ(r.code, 2) << r.all();  // --max-size is required
  EXPECT_THAT(r.err, HasSubstr("--max-size"));
  r = run({kCache, "--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("sk-cache 0."));
}

TEST(SkCache, StatsCountersPersistAcrossProcesses) {
  TempDir cache;
  const std::string dir = cache.path().string();
  // A cold compile: 1 object + 1 SuperKernel built.
  Result c = run({kCompile, seedList(), "--workers", "2", "--cache-dir", dir});
  ASSERT_EQ(c.code, 0) << c.all();
  json s = statsJson(dir);
  for (const char* k : {"hits", "misses", "compiles", "compile_failures", "corrupt", "untrusted", "evicted", "entries",
                        "bytes"}) {
    ASSERT_TRUE(s.contains(k)) << k << " " << s.dump();
  }
  EXPECT_EQ(s["misses"], 2);
  EXPECT_EQ(s["compiles"], 2);
  EXPECT_EQ(s["entries"], 2);
  EXPECT_GT(s["bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(s["compile_failures"], 0);
  // A second process: hits only, still 2 entries.
  c = run({kCompile, seedList(), "--workers", "2", "--cache-dir", dir});
  ASSERT_EQ(c.code, 0) << c.all();
  json s2 = statsJson(dir);
  EXPECT_EQ(s2["compiles"], 2);
  EXPECT_GE(s2["hits"].get<uint64_t>(), 2u);
  EXPECT_EQ(s2["entries"], 2);
  // A failed compile is counted.
  c = run({kCompile, dataFile("syntax_error.json"), "--cache-dir", dir});
  ASSERT_EQ(c.code, 3);
  EXPECT_EQ(statsJson(dir)["compile_failures"], 1);

  Result text = run({kCache, "stats", "--cache-dir", dir});
  ASSERT_EQ(text.code, 0) << text.all();
  for (const char* k : {"entries", "hits", "misses", "hit rate", "compiles", "compile failures", "corrupt", "untrusted",
                        "evicted"}) {
    EXPECT_THAT(text.out, HasSubstr(k));
  }
}

TEST(SkCache, MissingDirIsAnEmptyCacheAndIsNotCreated) {
  TempDir d;
  const fs::path none = d.path() / "nothing-here";
  json s = statsJson(none.string());
  EXPECT_EQ(s["entries"], 0);
  Result r = run({kCache, "ls", "--cache-dir", none.string()});
  EXPECT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("no entries"));
  r = run({kCache, "verify", "--cache-dir", none.string()});
  EXPECT_EQ(r.code, 0) << r.all();
  r = run({kCache, "inspect", "abcd", "--cache-dir", none.string()});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_FALSE(fs::exists(none));
}

TEST(SkCache, UntrustedDirIsRefused) {
  TempDir d;
  const fs::path shared = d.path() / "shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all);
  for (const char* cmd : {"stats", "ls", "verify", "clear"}) {
    Result r = run({kCache, cmd, "--cache-dir", shared.string()});
    EXPECT_EQ(r.code, 2) << cmd << r.all();
    EXPECT_THAT(r.err, HasSubstr("not trusted"));
    EXPECT_THAT(r.err, HasSubstr("writable by group or others"));
    EXPECT_THAT(r.err, HasSubstr("chmod 700"));
  }
  // A symbolic link gets a hint that can work (chmod cannot make a link trusted).
  const fs::path mine = d.path() / "mine", link = d.path() / "link";
  fs::create_directories(mine);
  fs::permissions(mine, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(mine, link);
  Result r = run({kCache, "stats", "--cache-dir", link.string()});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("symbolic link"));
  EXPECT_THAT(r.err, HasSubstr("hint: a cache root is never reached through a symbolic link"));
  EXPECT_THAT(r.err, Not(HasSubstr("chmod")));
}

TEST(SkCache, LsAndInspect) {
  TempDir cache;
  fillWarmCache(cache.path());
  const std::string dir = cache.path().string();
  Result r = run({kCache, "ls", "--cache-dir", dir});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("sk1 (fused, step 0)"));
  EXPECT_THAT(r.out, HasSubstr("(unfused, step"));
  EXPECT_THAT(r.out, HasSubstr("kernel add"));
  EXPECT_THAT(r.out, HasSubstr("[profiling]"));

  r = run({kCache, "ls", "--json", "--cache-dir", dir});
  ASSERT_EQ(r.code, 0) << r.all();
  json ls = json::parse(r.out);
  // The warm cache: the fused sk1, the profiled sk1, 1 object, and the
  // unfused ops: 4 launches but 2 distinct shared objects (add_1..add_3 bind
  // their buffers alike, so their generated text and key are the same).
  ASSERT_EQ(ls["entries"].size(), 5u);
  std::string fusedKey;
  for (const json& e : ls["entries"])
    if (e["what"] == "sk1 (fused, step 0)") fusedKey = e["key"];
  ASSERT_EQ(fusedKey.size(), 64u);

  // A unique prefix is enough; the text form summarizes the stored op list.
  r = run({kCache, "inspect", fusedKey.substr(0, 10), "--cache-dir", dir});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr(fusedKey));
  EXPECT_THAT(r.out, HasSubstr("superkernel.so"));
  EXPECT_THAT(r.out, HasSubstr("command"));
  EXPECT_THAT(r.out, HasSubstr("op_list      4 ops"));

  r = run({kCache, "inspect", fusedKey, "--json", "--cache-dir", dir});
  ASSERT_EQ(r.code, 0) << r.all();
  json m = json::parse(r.out);
  EXPECT_EQ(m["key"], fusedKey);
  EXPECT_EQ(m["kind"], "superkernel");
  EXPECT_EQ(m["metadata"]["name"], "sk1");
  json list = json::parse(m["metadata"]["op_list"].get<std::string>());
  EXPECT_EQ(list["ops"].size(), 4u);
  // sk-compile stores self-contained op lists (absolute kernel paths) so
  // that verify can replay them from anywhere.
  EXPECT_EQ(list["kernels"]["add"]["source"].get<std::string>().front(), '/');

  r = run({kCache, "inspect", "ffffffff", "--cache-dir", dir});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("no cache entry"));
  r = run({kCache, "inspect", "not-hex!", "--cache-dir", dir});
  EXPECT_EQ(r.code, 2) << r.all();
}

TEST(SkCache, GcAndClear) {
  TempDir cache;
  fillWarmCache(cache.path());
  const std::string dir = cache.path().string();
  const json before = statsJson(dir);
  ASSERT_GE(before["entries"].get<int>(), 5);

  Result r = run({kCache, "gc", "--max-size", "1G", "--cache-dir", dir});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("removed 0 entries"));
  EXPECT_EQ(statsJson(dir)["entries"], before["entries"]);

  // Half the size: least recently used entries go until it fits.
  const uint64_t half = before["bytes"].get<uint64_t>() / 2;
  r = run({kCache, "gc", "--max-size", std::to_string(half), "--json", "--cache-dir", dir});
  ASSERT_EQ(r.code, 0) << r.all();
  json g = json::parse(r.out);
  EXPECT_GT(g["removed_entries"].get<int>(), 0);
  json after = statsJson(dir);
  EXPECT_LE(after["bytes"].get<uint64_t>(), half);
  EXPECT_GE(after["evicted"].get<int>(), g["removed_entries"].get<int>());

  r = run({kCache, "gc", "--max-size", "lots", "--cache-dir", dir});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--max-size"));

  // 0 is "unlimited" in SK_CACHE_MAX_SIZE: gc refuses it (in any spelling)
  // instead of emptying the cache, and says what empties it.
  const json kept = statsJson(dir);
  ASSERT_GT(kept["entries"].get<int>(), 0);
  for (const char* zero : {"0", "0K", "0.0GiB"}) {
    r = run({kCache, "gc", "--max-size", zero, "--cache-dir", dir});
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_THAT(r.err, HasSubstr(fmt::format("sk-cache: error: --max-size {}: a limit of 0 is refused "
                                             "(SK_CACHE_MAX_SIZE=0 means unlimited); run sk-cache clear",
                                             zero)));
    EXPECT_EQ(statsJson(dir)["entries"], kept["entries"]);
  }

  r = run({kCache, "clear", "--cache-dir", dir});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("clear"));
  EXPECT_EQ(statsJson(dir)["entries"], 0);
  r = run({kCache, "ls", "--cache-dir", dir});
  EXPECT_THAT(r.out, HasSubstr("no entries"));
}

// An entry is judged against the compiler it was built with: a g++ build
// verified where SK_CXX says clang++ (or nothing) is replayed with g++ and
// passes; where its compiler is not found it is UNVERIFIED, never STALE (the
// advice for stale entries is to delete them).
TEST(SkCache, VerifyReplaysAnEntryWithTheCompilerItWasBuiltWith) {
  TempDir d;
  const std::string dir = d / "cache";
  Result r = run({kCompile, seedList(), "--run", "--repeat", "1", "--workers", "2", "--cache-dir", dir},
                 {{"SK_CXX", std::string("g++")}});
  ASSERT_EQ(r.code, 0) << r.all();
  ASSERT_THAT(r.out, HasSubstr("g++"));  // the header names the compiler that built it
  for (const std::optional<std::string>& today : {std::optional<std::string>("clang++"), std::optional<std::string>()}) {
    r = run({kCache, "verify", "--cache-dir", dir}, {{"SK_CXX", today}});
    EXPECT_EQ(r.code, 0) << r.all();
    EXPECT_THAT(r.out, HasSubstr("verify: all good"));
    EXPECT_THAT(r.out, HasSubstr(": identical (1 fused vs 4 unfused launches)"));
    EXPECT_THAT(r.all(), Not(HasSubstr("STALE")));
  }
  json v = json::parse(run({kCache, "verify", "--json", "--cache-dir", dir}).out);
  ASSERT_EQ(v["replays"].size(), 1u) << v.dump(2);
  EXPECT_THAT(v["replays"][0].value("compiler", ""), HasSubstr("g++"));

  // The recorded compiler gone (another machine's path): not checked, not stale.
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename() != "manifest.json") continue;
    json m = json::parse(readFile(e.path()));
    if (!m["metadata"].contains("compiler")) continue;
    m["metadata"]["compiler"] = "/no/such/dir/g++";
    fs::permissions(e.path(), fs::perms::owner_read | fs::perms::owner_write);
    writeFile(e.path(), m.dump());
  }
  r = run({kCache, "verify", "--cache-dir", dir});
  EXPECT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("UNVERIFIED"));
  EXPECT_THAT(r.out, HasSubstr("built with /no/such/dir/g++, which cannot be used here"));
  EXPECT_THAT(r.out, HasSubstr("not stale"));
  EXPECT_THAT(r.all(), Not(HasSubstr("STALE")));
  EXPECT_THAT(r.all(), Not(HasSubstr("gc/clear")));
}

TEST(SkCache, VerifyPassesOnAHealthyCache) {
  TempDir cache;
  fillWarmCache(cache.path());
  Result r = run({kCache, "verify", "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("all good"));
  EXPECT_THAT(r.out, HasSubstr("identical"));
  r = run({kCache, "verify", "--json", "-v", "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  json j = json::parse(r.out);
  EXPECT_EQ(j["problems"], 0);
  EXPECT_GE(j["replays"].size(), 1u);
  for (const json& rep : j["replays"]) EXPECT_EQ(rep["result"], "identical");
}

TEST(SkCache, VerifyCatchesATamperedEntry) {
  TempDir cache;
  fillWarmCache(cache.path());
  const fs::path entry = findEntry(cache.path(), "sk1", true);
  ASSERT_FALSE(entry.empty());
  const fs::path so = entry / "superkernel.so";
  std::string bytes = readFile(so);
  ASSERT_GT(bytes.size(), 200u);
  bytes[bytes.size() / 2] ^= 0x01;  // one flipped bit
  fs::permissions(so, fs::perms::owner_read | fs::perms::owner_write);
  writeFile(so, bytes);
  fs::permissions(so, fs::perms::owner_read);

  Result r = run({kCache, "verify", "--no-replay", "--cache-dir", cache.path().string()});
  EXPECT_EQ(r.code, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("CORRUPT"));
  EXPECT_THAT(r.out, HasSubstr(entry.filename().string().substr(0, 16)));
  EXPECT_THAT(r.out, HasSubstr("SHA-256"));
  EXPECT_THAT(r.err, HasSubstr("failed verification"));

  // --quarantine moves it aside; the next verify is clean again.
  r = run({kCache, "verify", "--no-replay", "--quarantine", "--cache-dir", cache.path().string()});
  EXPECT_EQ(r.code, 1) << r.all();
  EXPECT_FALSE(fs::exists(entry));
  r = run({kCache, "verify", "--no-replay", "--cache-dir", cache.path().string()});
  EXPECT_EQ(r.code, 0) << r.all();
}

TEST(SkCache, VerifyCatchesAStaleKey) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  // Today's templates differ from the ones the entries were built with (as
  // after an upgrade): the replay recomputes different keys.
  const fs::path templates = d.path() / "templates";
  fs::copy(sourceRoot() / "templates", templates, fs::copy_options::recursive);
  const fs::path tmpl = templates / "cpu" / "superkernel.cpp.tmpl";
  writeFile(tmpl, readFile(tmpl) + "// a template change\n");
  // First, with the templates the entries were built from: all good.
  Result r = run({kCache, "verify", "--json", "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  r = run({kCache, "verify", "--cache-dir", d / "cache"}, {{"SK_TEMPLATES_DIR", templates.string()}});
  EXPECT_EQ(r.code, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("STALE"));
  EXPECT_THAT(r.out, HasSubstr("sk1 (fused, step 0)"));
  EXPECT_THAT(r.out, HasSubstr("a template"));
  EXPECT_THAT(r.err, HasSubstr("failed verification"));
}

TEST(SkCache, VerifyReportsEntriesWhoseKernelSourceIsGoneAsStale) {
  TempDir d;
  fs::copy(sourceRoot() / "examples/seed", d.path() / "seed", fs::copy_options::recursive);
  Result c = run({kCompile, d / "seed/seed.json", "--workers", "2", "--cache-dir", d / "cache"});
  ASSERT_EQ(c.code, 0) << c.all();
  fs::remove(d.path() / "seed/kernels/add.cpp");
  Result r = run({kCache, "verify", "--cache-dir", d / "cache"});
  EXPECT_EQ(r.code, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("STALE"));
  EXPECT_THAT(r.out, HasSubstr("no longer loads"));
  EXPECT_THAT(r.out, HasSubstr("add.cpp"));
}

TEST(SkCache, VerifyReplaysAndCatchesAMismatch) {
  TempDir cache;
  // sk-compile finds the mismatch (exit 1) but the builds are cached, with
  // their op list: verify replays it and finds it again (the CI case).
  Result c = run({kCompile, dataFile("mismatch.json"), "--run", "--workers", "2", "--cache-dir",
                  cache.path().string()});
  ASSERT_EQ(c.code, 1) << c.all();
  Result r = run({kCache, "verify", "--cache-dir", cache.path().string()});
  EXPECT_EQ(r.code, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("MISMATCH"));
  EXPECT_THAT(r.out, HasSubstr("buffer out: element 0"));
}

// An entry made through the C++ API from an op list whose kernel path is
// relative replays too: the Session stores the list's base directory with it.
TEST(SkCache, VerifyReplaysOpListsWithRelativePaths) {
  TempDir cache;
  std::string text = readFile(seedList());
  auto list = sk::parseOpList(text, "seed (in memory)", sourceRoot() / "examples/seed");
  ASSERT_TRUE(list.ok()) << list.error().message();
  sk::SessionOptions so;
  so.cacheDir = cache.path();
  so.workers = 2;
  {
    auto session = sk::Session::create(so);
    ASSERT_TRUE(session.ok()) << session.error().message();
    auto plan = (*session)->compile(*list);
    ASSERT_TRUE(plan.ok()) << plan.error().message();
  }
  Result r = run({kCache, "verify", "--cache-dir", cache.path().string()});
  EXPECT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("1 op lists replayed"));
  EXPECT_THAT(r.out, Not(HasSubstr("skipped")));
  EXPECT_THAT(r.out, HasSubstr("all good"));
}

}  // namespace
}  // namespace sk::tooltest
