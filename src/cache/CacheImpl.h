// Private: the state behind sk::Cache, shared by Cache.cpp (memory map,
// getOrBuild) and Admin.cpp (sk-cache operations).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/DiskStore.h"
#include "cache/Stats.h"
#include "cache/remote/RemoteTier.h"
#include "superkernel/cache/Cache.h"

namespace sk {

struct Cache::Impl {
  CacheConfig cfg;
  std::filesystem::path requested;
  std::filesystem::path root;
  bool disk = true;
  bool privateFallback = false;
  std::filesystem::path privateTemp;  // memory-only staging / untrusted fallback (removed at exit)
  std::mutex privateTempMutex;
  std::atomic<bool> diskFull{false};  // no space in the store: private builds from now on (DiskFull.h)
  uint64_t maxBytes = 0;
  std::string fault;
  bool recompile = false;

  // memory: ready artifacts (the hit path) and builds in flight
  struct Flight {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    ArtifactPtr value;
    std::optional<Error> error;
  };
  mutable std::shared_mutex mapMutex;
  // Transparent hash: the hit path looks keys up by string_view, no copy.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
  };
  std::unordered_map<std::string, ArtifactPtr, KeyHash, std::equal_to<>> ready;
  std::unordered_map<std::string, std::shared_ptr<Flight>> flights;

  cache::Counters pending;  // not yet merged into stats.json
  cache::StatsFile statsFile;
  std::unique_ptr<cache::DiskStore> store;  // null when !disk
  std::unique_ptr<remote::RemoteTier> remote;  // null: no remote tier (cache/remote/RemoteTier.h)

  void flush(bool force) {
    if (!cfg.readOnly) statsFile.flush(pending, force);
  }
  void countMemoryHit() {
    cache::Counters::count(pending.hits);
    cache::Counters::count(pending.memoryHits);
  }
  void countDiskHit() {
    cache::Counters::count(pending.hits);
    cache::Counters::count(pending.diskHits);
  }

  Status makePrivateTemp(std::filesystem::path& out);
  /// The store's file system is full: warn once, count, build privately from now on.
  void enterDiskFull(const std::string& why);
  Status makeStaging(std::string_view key, std::filesystem::path& dir, detail::UniqueFd& lock, bool& publishable);
  Expected<ArtifactPtr> loadFromDisk(std::string_view key, std::string_view kind, bool hold);
  Expected<ArtifactPtr> build(const CacheRequest& req);
  Expected<ArtifactPtr> resolve(const CacheRequest& req);
  /// A verified remote entry, published here and loaded from the store.
  Expected<ArtifactPtr> adoptRemote(const CacheRequest& req, remote::RemoteEntry entry);
  /// A memory artifact requested with hold = true that has none yet.
  ArtifactPtr withHold(const ArtifactPtr& a);
  static bool needsHold(const ArtifactPtr& a, bool hold) { return hold && !a->hold && !a->entryDir.empty(); }
};

}  // namespace sk
