// CacheConfig::readOnly (sk-cache verify): entries on disk are used, nothing
// under the root is created or changed, misses are built in memory only.
#include <gtest/gtest.h>

#include <map>

#include "cache/TestUtil.h"
#include "superkernel/cache/Cache.h"

namespace sk {
namespace {
namespace fs = std::filesystem;

std::string key(const std::string& what) {
  KeyBuilder kb;
  kb.add("test", what);
  return kb.finish();
}

CacheRequest request(const std::string& k, int& calls, const std::string& payload) {
  CacheRequest r;
  r.key = k;
  r.kind = kKindObject;
  r.build = [&calls, payload](const fs::path& staging) -> Expected<BuildOutput> {
    ++calls;
    test::writeFile(staging / "object.o", payload);
    BuildOutput o;
    o.artifactName = "object.o";
    return o;
  };
  return r;
}

std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st;
    ::lstat(it->path().c_str(), &st);
    out[it->path().string()] = std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
                               std::to_string(st.st_mtim.tv_nsec);
  }
  return out;
}

TEST(CacheReadOnly, UsesEntriesAndWritesNothing) {
  test::TempDir t("ro");
  const fs::path root = t / "cache";
  int calls = 0;
  {
    CacheConfig c;
    c.root = root;
    auto rw = Cache::open(c);
    ASSERT_TRUE(rw) << rw.error().message();
    ASSERT_TRUE((*rw)->getOrBuild(request(key("a"), calls, "AAAA")));
  }
  ASSERT_EQ(calls, 1);
  const auto before = tree(root);
  {
    CacheConfig c;
    c.root = root;
    c.readOnly = true;
    auto ro = Cache::open(c);
    ASSERT_TRUE(ro) << ro.error().message();
    auto hit = (*ro)->getOrBuild(request(key("a"), calls, "XXXX"));
    ASSERT_TRUE(hit);
    EXPECT_EQ(calls, 1) << "a disk entry must be used, not rebuilt";
    EXPECT_EQ(*(*hit)->bytes, "AAAA");
    auto miss = (*ro)->getOrBuild(request(key("b"), calls, "BBBB"));
    ASSERT_TRUE(miss);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(*(*miss)->bytes, "BBBB");
    EXPECT_TRUE((*miss)->entryDir.empty());
    auto again = (*ro)->getOrBuild(request(key("b"), calls, "BBBB"));
    EXPECT_EQ(calls, 2) << "kept in memory";
    (*ro)->flushStats();
  }
  EXPECT_EQ(tree(root), before);
}

TEST(CacheReadOnly, AMissingRootIsAnEmptyStoreAndIsNotCreated) {
  test::TempDir t("ro2");
  CacheConfig c;
  c.root = t / "absent";
  c.readOnly = true;
  auto ro = Cache::open(c);
  ASSERT_TRUE(ro) << ro.error().message();
  int calls = 0;
  ASSERT_TRUE((*ro)->getOrBuild(request(key("c"), calls, "CCCC")));
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(fs::exists(t / "absent"));
}

}  // namespace
}  // namespace sk
