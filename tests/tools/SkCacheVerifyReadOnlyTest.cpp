// `sk-cache verify` only reads the cache it verifies (issue 10): no entry is
// added (not even when a replay compiles something new), no lock, temp,
// stats or last-use file is written, and an op list that cannot be run
// (its init file is gone) is reported as such, never as stale.
#include "tools/ToolTestUtil.h"

namespace sk::tooltest {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

// Every file and directory under `root` with its size, mtime and content.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    std::string v = std::to_string(st.st_mode) + " " + std::to_string(st.st_size) + " " +
                    std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    if (S_ISREG(st.st_mode)) v += " " + std::to_string(std::hash<std::string>{}(readFile(it->path())));
    out[fs::relative(it->path(), root).string()] = v;
  }
  return out;
}

void expectUnchanged(const std::map<std::string, std::string>& before, const std::map<std::string, std::string>& after) {
  for (const auto& [path, v] : after) {
    auto it = before.find(path);
    if (it == before.end()) ADD_FAILURE() << "verify created " << path;
    else if (it->second != v) ADD_FAILURE() << "verify modified " << path;
  }
  for (const auto& [path, v] : before)
    if (!after.count(path)) ADD_FAILURE() << "verify removed " << path;
}

TEST(SkCacheVerify, ReadsOnly) {
  TempDir cache;
  fillWarmCache(cache.path());
  const auto before = snapshot(cache.path());
  Result r = run({kCache, "verify", "--cache-dir", cache.path().string()});
  ASSERT_EQ(r.code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("identical"));
  expectUnchanged(before, snapshot(cache.path()));
}

TEST(SkCacheVerify, ReadsOnlyEvenWhenTheReplayBuildsSomethingNew) {
  TempDir d;
  fillWarmCache(d.path() / "cache");
  // A template change (an upgrade): the replay compiles new SuperKernels. It
  // must report the entries stale without adding the new ones.
  const fs::path templates = d.path() / "templates";
  fs::copy(sourceRoot() / "templates", templates, fs::copy_options::recursive);
  const fs::path tmpl = templates / "cpu" / "superkernel.cpp.tmpl";
  writeFile(tmpl, readFile(tmpl) + "// a template change\n");
  const auto before = snapshot(d.path() / "cache");
  Result r = run({kCache, "verify", "--cache-dir", d / "cache"}, {{"SK_TEMPLATES_DIR", templates.string()}});
  EXPECT_EQ(r.code, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("STALE"));
  expectUnchanged(before, snapshot(d.path() / "cache"));
}

TEST(SkCacheVerify, SaysWhatItCouldNotRunWhenAnInitFileIsGone) {
  TempDir d;
  fs::copy(sourceRoot() / "examples/seed", d.path() / "seed", fs::copy_options::recursive);
  json list = json::parse(readFile(d.path() / "seed/seed.json"));
  list["buffers"]["x"]["init"] = {{"file", "x.bin"}};
  writeFile(d.path() / "seed/seed.json", list.dump(1));
  std::string bytes(4096 * 4, '\0');
  for (size_t i = 0; i < bytes.size(); i += 4) bytes[i + 1] = static_cast<char>(i % 251);
  writeFile(d.path() / "seed/x.bin", bytes);
  Result c = run({kCompile, d / "seed/seed.json", "--run", "--repeat", "1", "--workers", "2", "--cache-dir", d / "cache"});
  ASSERT_EQ(c.code, 0) << c.all();
  Result ok = run({kCache, "verify", "--cache-dir", d / "cache"});
  ASSERT_EQ(ok.code, 0) << ok.all();
  EXPECT_THAT(ok.out, HasSubstr("identical"));

  fs::remove(d.path() / "seed/x.bin");
  const auto before = snapshot(d.path() / "cache");
  Result r = run({kCache, "verify", "--cache-dir", d / "cache"});
  EXPECT_EQ(r.code, 0) << r.all();  // nothing is wrong with the cache
  EXPECT_THAT(r.out, Not(HasSubstr("STALE")));
  EXPECT_THAT(r.out, HasSubstr("not run"));
  EXPECT_THAT(r.out, HasSubstr("x.bin"));
  EXPECT_THAT(r.out, HasSubstr("not fully verified"));
  Result j = run({kCache, "verify", "--json", "--cache-dir", d / "cache"});
  json jj = json::parse(j.out);
  ASSERT_GE(jj["replays"].size(), 1u);
  EXPECT_EQ(jj["replays"][0]["result"], "keys_only");
  EXPECT_THAT(jj["replays"][0].value("reason", ""), HasSubstr("x.bin"));
  expectUnchanged(before, snapshot(d.path() / "cache"));
}

}  // namespace
}  // namespace sk::tooltest
