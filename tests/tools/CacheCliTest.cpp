// The cache features ccache/sccache users expect (issue 10): forced
// recompilation (flag and environment), zero-stats, the size cap in stats,
// `sk-cache explain` (why a lookup missed), and SK_LOG_LEVEL=info/debug
// showing misses, evictions and hits as docs/CACHE.md says.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/ToolTestUtil.h"

namespace sk::tooltest {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

json parse(const Result& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.all();
  return j;
}

TEST(CacheCli, ForceRecompileRebuildsEverythingAndReplacesTheEntries) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("SuperKernels 1 hit / 0 miss, objects 1 hit / 0 miss"));
  const json before = parse(run({kCache, "stats", "--json", "--cache-dir", d / "cache"}));
  r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--force-recompile"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("SuperKernels 0 hit / 1 miss, objects 0 hit / 1 miss"));
  r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache"},
          {{"SK_FORCE_RECOMPILE", std::string("1")}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("SuperKernels 0 hit / 1 miss, objects 0 hit / 1 miss"));
  // The replaced entries serve the next normal run; nothing piled up.
  r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache"});
  EXPECT_THAT(r.out, HasSubstr("SuperKernels 1 hit / 0 miss, objects 1 hit / 0 miss"));
  json s = parse(run({kCache, "stats", "--json", "--cache-dir", d / "cache"}));
  EXPECT_EQ(s["entries"], before["entries"]);  // replaced, not added
  EXPECT_EQ(s["compiles"].get<uint64_t>(), before["compiles"].get<uint64_t>() + 4);
  r = run({kCompile, seedList(), "--cache-dir", d / "cache"}, {{"SK_FORCE_RECOMPILE", std::string("yes")}});
  EXPECT_EQ(r.code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("SK_FORCE_RECOMPILE"));
}

TEST(CacheCli, StatsShowTheSizeCapAndZeroStatsResetsCounters) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  ASSERT_EQ(run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache"}).code, 0);
  Result r = run({kCache, "stats", "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("size cap          4.0 GiB ("));
  r = run({kCache, "stats", "--cache-dir", d / "cache"}, {{"SK_CACHE_MAX_SIZE", std::string("512M")}});
  EXPECT_THAT(r.out, HasSubstr("size cap          512.0 MiB"));
  json s = parse(run({kCache, "stats", "--json", "--cache-dir", d / "cache"}));
  EXPECT_EQ(s["max_bytes"], uint64_t{4} << 30);
  EXPECT_GT(s["hits"].get<uint64_t>(), 0u);
  const uint64_t entries = s["entries"].get<uint64_t>();
  r = run({kCache, "zero-stats", "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("statistics zeroed"));
  s = parse(run({kCache, "stats", "--json", "--cache-dir", d / "cache"}));
  for (const char* k : {"hits", "misses", "compiles", "compile_failures", "evicted", "memory_hits", "disk_hits"})
    EXPECT_EQ(s[k], 0) << k;
  EXPECT_EQ(s["entries"], entries);  // entries are kept
}

TEST(CacheCli, ExplainSaysWhichKeyInputChanged) {
  TempDir d;
  Result a = run({kCompile, seedList(), "--json", "--workers", "2", "--cache-dir", d / "cache"});
  ASSERT_EQ(a.code, 0) << a.all();
  Result r = run({kCache, "explain", parse(a)["plan"]["steps"][0]["key"], "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("a first build, not a changed input"));
  // func-align changes the objects' compile flags (and so the SuperKernel).
  Result b = run({kCompile, seedList(), "--json", "--workers", "2", "--cache-dir", d / "cache", "--options",
                  "func-align=64"});
  ASSERT_EQ(b.code, 0) << b.all();
  const std::string keyA = parse(a)["plan"]["steps"][0]["key"];
  const std::string keyB = parse(b)["plan"]["steps"][0]["key"];
  ASSERT_NE(keyA, keyB);
  // The closest entry built for the same SuperKernel is found by itself.
  r = run({kCache, "explain", keyB.substr(0, 12), "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("compared with " + keyA.substr(0, 16)));
  EXPECT_THAT(r.out, HasSubstr("func-align=64"));
  EXPECT_THAT(r.out, HasSubstr("func-align=512"));
  // The two objects against each other.
  json ls = parse(run({kCache, "ls", "--json", "--cache-dir", d / "cache"}));
  std::vector<std::string> objects;
  for (const auto& e : ls["entries"])
    if (e["kind"] == "object") objects.push_back(e["key"]);
  ASSERT_EQ(objects.size(), 2u) << ls.dump(2);
  json j = parse(run({kCache, "explain", objects[0], objects[1], "--json", "--cache-dir", d / "cache"}));
  EXPECT_EQ(j["compared_with"], objects[1]);
  bool sawFlags = false, sawToolchain = false, sawSource = false;
  for (const auto& diff : j["differences"]) {
    const std::string both = diff.value("this", "") + " | " + diff.value("other", "");
    sawFlags |= diff["input"] == "flags" && both.find("-falign-functions=64") != std::string::npos &&
                both.find("-falign-functions=512") != std::string::npos;
    sawToolchain |= diff["input"] == "toolchain";
    sawSource |= diff["input"] == "source";
  }
  EXPECT_TRUE(sawFlags) << j.dump(2);
  EXPECT_FALSE(sawToolchain) << j.dump(2);  // only what changed is listed
  EXPECT_FALSE(sawSource) << j.dump(2);
  r = run({kCache, "explain", "ffff", "--cache-dir", d / "cache"});
  EXPECT_EQ(r.code, 2) << r.all();
}

// CACHE.md's explain example: a planning option (early-start) changes a
// SuperKernel's key through its generated source; the recorded key inputs
// say only what was hashed (the build options), and explain names the
// option from the entries' metadata.
TEST(CacheCli, ExplainNamesThePlanningOptionThatChangedTheSource) {
  TempDir d;
  fillWarmCache(d.path() / "cache");  // the seed example with the default early-start=1
  Result b = run({kCompile, seedList(), "--json", "--workers", "2", "--cache-dir", d / "cache", "--options",
                  "early-start=0"});
  ASSERT_EQ(b.code, 0) << b.all();
  const std::string key = parse(b)["plan"]["steps"][0]["key"];
  Result r = run({kCache, "explain", key.substr(0, 8), "--cache-dir", d / "cache"});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("1 of 11 key inputs differ"));
  EXPECT_THAT(r.out, HasSubstr("    source                this:  sha256:"));
  EXPECT_THAT(r.out, HasSubstr("  built with other options (they reach the key through the generated source):\n"
                               "    early-start           this:  0\n"
                               "                          other: 1\n"));
  json j = parse(run({kCache, "explain", key, "--json", "--cache-dir", d / "cache"}));
  ASSERT_EQ(j["option_differences"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["option_differences"][0], (json{{"option", "early-start"}, {"this", "0"}, {"other", "1"}}));
  // The recorded inputs are true: nothing in them claims early-start=1 for
  // this early-start=0 build; the options that reach the compiler are there.
  bool sawBuildOptions = false;
  for (const auto& in : j["inputs"]) {
    EXPECT_EQ(in[1].get<std::string>().find("early-start"), std::string::npos) << in.dump();
    sawBuildOptions |= in[0] == "build-options" && in[1] == "func-align=512";
  }
  EXPECT_TRUE(sawBuildOptions) << j["inputs"].dump(2);
}

TEST(CacheCli, LogLevelsShowMissesEvictionsAndHits) {
  TempDir d;
  Result r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache"},
                 {{"SK_LOG_LEVEL", std::string("info")}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.err, HasSubstr("cache miss: building object"));
  EXPECT_THAT(r.err, HasSubstr("cache miss: building superkernel"));
  EXPECT_THAT(r.err, Not(HasSubstr("cache hit")));
  r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache"},
          {{"SK_LOG_LEVEL", std::string("debug")}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.err, HasSubstr("cache hit (disk): superkernel"));
  r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache"});  // default: warn
  EXPECT_THAT(r.err, Not(HasSubstr("cache")));
  // A 1-byte cap evicts everything but the entry just published.
  r = run({kCompile, seedList(), "--workers", "2", "--cache-dir", d / "cache", "--options", "early-start=0"},
          {{"SK_LOG_LEVEL", std::string("info")}, {"SK_CACHE_MAX_SIZE", std::string("1")}});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.err, HasSubstr("cache evicted"));
}

}  // namespace
}  // namespace sk::tooltest
