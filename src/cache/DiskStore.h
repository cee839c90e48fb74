// The on-disk store of the cache (DESIGN section 6): layout, entry check,
// publish, quarantine, per-key locks, scan and eviction. Knows nothing of
// the memory map or of what an artifact is for. Private to the cache.
//
//   <root>/entries/<key[0:2]>/<key>/   one immutable entry per key:
//        <artifact file>   e.g. superkernel.so, object.o
//        manifest.json     written last (the entry's commit record)
//        last_use          its mtime is the LRU clock (touched on each load)
//   <root>/tmp/<key>.<pid>.XXXXXX/   builds in progress (flock'ed by their builder)
//   <root>/locks/<key>.lock          per-key flock: one compile across processes
//   <root>/quarantine/               corrupt/untrusted entries moved aside
//   <root>/stats.json (+ stats.lock) persisted counters (cache/Stats.h)
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/Stats.h"
#include "superkernel/cache/Cache.h"
#include "support/Fd.h"

namespace sk::cache {

inline constexpr const char* kManifest = "manifest.json";
inline constexpr const char* kLastUse = "last_use";

bool validKind(std::string_view k);
bool validArtifactName(std::string_view n);
int64_t nowSeconds();

/// Result of checking one on-disk entry.
enum class EntryState { Absent, Ok, Corrupt, Untrusted };
struct EntryCheck {
  EntryState state = EntryState::Absent;
  std::string problem;
  nlohmann::json manifest;
  std::shared_ptr<std::string> bytes;
  std::string sha;
  detail::UniqueFd dirFd;  // open, flock'ed shared when Ok
  struct stat dirStat {};
};

/// An entry found by scan().
struct Scanned {
  CacheEntryInfo info;
  bool complete = false;  // has a parseable manifest
};

class DiskStore {
 public:
  /// `counters` receives corrupt/untrusted/evicted counts.
  DiskStore(std::filesystem::path root, Counters& counters) : root_(std::move(root)), counters_(counters) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path entriesDir() const { return root_ / "entries"; }
  std::filesystem::path tmpDir() const { return root_ / "tmp"; }
  std::filesystem::path locksDir() const { return root_ / "locks"; }
  std::filesystem::path quarantineDir() const { return root_ / "quarantine"; }
  std::filesystem::path entryDir(std::string_view key) const;

  /// Create `root` and its subdirectories (0700) and check their trust: ""
  /// when usable, else why not.
  static std::string prepareRoot(const std::filesystem::path& root);

  /// Open, lock (shared) and verify the entry of `key` (kind checked unless
  /// empty): manifest, artifact owner/mode/links, size and SHA-256. `touch`
  /// refreshes last_use.
  EntryCheck check(std::string_view key, std::string_view kind, bool touch) const;
  /// Move a bad entry aside (counted corrupt or untrusted); never deletes
  /// what it cannot identify.
  void quarantine(std::string_view key, const std::string& why, EntryState state);

  /// The per-key process lock, waited for at most `wait` (then an invalid fd:
  /// build anyway).
  detail::UniqueFd lockKey(std::string_view key, std::chrono::milliseconds wait) const;
  /// A fresh build dir <root>/tmp/<key>.<pid>.XXXXXX, flock'ed in `lock`.
  /// false when it cannot be created (warned).
  bool makeStaging(std::string_view key, std::filesystem::path& dir, detail::UniqueFd& lock) const;
  /// Keep only the artifact in `staging`, write last_use and the manifest
  /// (last, fsync'ed) and rename it into place. Another process's entry of
  /// the same key wins. `fault` "write": fail like a full disk.
  Status publish(std::string_view key, const std::filesystem::path& staging, const std::string& artifactName,
                 const nlohmann::json& manifest, std::string_view fault) const;
  /// A shared flock on a published entry: eviction and clear skip it while
  /// the returned object lives. nullptr if the entry cannot be opened.
  std::shared_ptr<void> hold(std::string_view key) const;
  /// Wrap an already locked entry fd as a hold.
  static std::shared_ptr<void> hold(detail::UniqueFd lockedDirFd);

  /// Every entry directory (complete or not).
  std::vector<Scanned> scan() const;
  /// Remove one entry unless a live process holds it. true if removed.
  bool removeEntry(const std::filesystem::path& dir, const std::string& key);
  /// Remove LRU entries (never held ones, never `keep`) until <= limit.
  GcResult evict(uint64_t limit, std::string_view keep);
  /// Temp build dirs whose builder is gone (unlocked) and older than maxAge.
  void cleanStaleTemps(std::chrono::seconds maxAge) const;
  void cleanQuarantine() const;
  /// The entry dir of a full key or a unique prefix (>= 4 hex digits).
  Expected<std::filesystem::path> findByPrefix(std::string_view key) const;

 private:
  std::filesystem::path root_;
  Counters& counters_;
  mutable std::atomic<uint64_t> uniq_{0};
};

}  // namespace sk::cache
