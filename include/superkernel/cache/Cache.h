// The artifact cache (DESIGN section 6, normative): SHA-256 keyed, in memory
// and on disk, shared by every process of a user. It stores and verifies
// bytes; it never loads them (loading is the back end's job: dlopen for cpu,
// a module load for cuda, runtime registration for ascend). What it returns
// is the verified bytes plus a hold on the entry.
//
// Split by concern (src/cache/): Cache.cpp the memory map and getOrBuild;
// DiskStore the on-disk layout, entry check, publish, quarantine, locks, scan
// and eviction; Stats the persisted counters; Trust (public, Trust.h) the
// owner/mode checks, also used by the tools; Admin.cpp the sk-cache
// operations.
//
// IN MEMORY: a single-flight map. However many threads ask for one key at
// once, one runs the build; the others wait and share its result or its
// error. A failed build is NOT remembered: the flight's waiters get its
// error, the key is dropped, and the next request builds again (a failed
// compile is usually fixed by the user and retried in the same process).
// A memory hit is one hash lookup under a shared lock (well under 1 us).
//
// ON DISK (root: CacheConfig::root, made absolute against the current
// directory; else $SK_CACHE_DIR, else $XDG_CACHE_HOME/superkernel, else
// ~/.cache/superkernel; a relative $SK_CACHE_DIR or $XDG_CACHE_HOME is
// ignored with a warning, as the XDG spec says, so a relative path is never
// used as is). The layout is described in src/cache/DiskStore.h. An entry is
// built in tmp/ and published with one rename(); a failed write (disk full,
// SK_CACHE_FAULT=write) publishes nothing, removes its temp dir, warns, and
// the result is still returned (from memory).
//
// TRUST: a root that is a symlink, not owned by the effective user, or
// writable by group/others is not used: a warning is logged, `untrusted` is
// counted and a private temporary cache (mkdtemp, 0700, removed when the
// Cache is destroyed) is used instead. On every disk load the artifact is
// opened with O_NOFOLLOW and must be a regular file owned by the user, not
// group/other writable, with one link; its bytes are hashed and compared with
// the manifest; those hashed bytes are what the caller gets (and what a back
// end loads, never the file again). A bad entry is counted (corrupt, or
// untrusted for owner/mode problems), moved to quarantine/ and rebuilt: a
// miss, never a crash. Bytes that verify but do not load (the back end says
// so through discard()) are quarantined the same way.
//
// EVICTION: after each publish, if the store exceeds maxBytes, entries are
// removed in LRU order (last_use mtime) until it fits. An entry requested
// with hold = true is held with a shared flock on its directory while the
// Artifact lives; eviction (and clear/gc) take an exclusive non-blocking
// flock and skip held entries.
//
// COUNTERS: hits (memory + disk + flight waiters), misses (builds started),
// compiles (successful builds), compile_failures, corrupt, untrusted,
// evicted. Kept per process in atomics and merged into <root>/stats.json
// under flock after every disk-level event, on flushStats() and on
// destruction, so they persist across processes.
//
// JSON IN THIS API: manifests, build metadata and the stats' JSON form are
// JSON *text* (std::string, UTF-8), not a JSON library's value type, so
// that no installed header includes a third-party header (nlohmann-json is
// private to libsuperkernel; consumers need not have it). Text because what
// callers do with it is mostly pass it on (store, print, compare, upload),
// and the few that read fields (sk-cache, tests) already have a JSON
// parser: an opaque value type would be a second JSON API to document and
// keep. GeneratedSource::manifest (codegen/Emitter.h) is text for the same
// reason. Text the library returns is compact, with object keys sorted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/cache/Key.h"
#include "superkernel/cache/RemoteCache.h"
#include "superkernel/support/Error.h"
#include "superkernel/support/Size.h"

namespace sk {

/// Entry kinds used by the library (the cache itself accepts any word).
inline constexpr const char* kKindSuperKernel = "superkernel";
inline constexpr const char* kKindObject = "object";

struct CacheConfig {
  /// Empty: $SK_CACHE_DIR, else $XDG_CACHE_HOME/superkernel, else ~/.cache/superkernel.
  std::filesystem::path root;
  /// false: memory only (no disk reads or writes, no stats file).
  bool disk = true;
  /// true: the disk store is only read (sk-cache verify). Nothing under the
  /// root is created, touched, quarantined, evicted or counted; a miss is
  /// built in a private temporary directory and kept in memory only.
  bool readOnly = false;
  /// Size cap of the disk store in bytes; 0 = unlimited. nullopt:
  /// $SK_CACHE_MAX_SIZE (e.g. "2G"), else 4 GiB.
  std::optional<uint64_t> maxBytes;
  /// Longest wait for another process's per-key lock before building anyway.
  std::chrono::milliseconds lockWait{60000};
  /// Temp build dirs older than this and not locked are removed (at open).
  std::chrono::seconds staleTempAge{30 * 60};
  /// Fault injection (tests): "write" makes every publish fail like a full
  /// disk. Empty: $SK_CACHE_FAULT.
  std::string fault;
  /// Force recompilation: every key is built once more in this process
  /// (neither memory nor disk is consulted before that build) and its disk
  /// entry replaced, unless a live process holds it. nullopt:
  /// $SK_FORCE_RECOMPILE=1 (like ccache's CCACHE_RECACHE).
  std::optional<bool> recompile;
  /// The shared remote tier behind the disk store (RemoteCache.h): url
  /// empty means $SK_REMOTE_CACHE; unset means none.
  RemoteCacheConfig remote;
};

/// What a build function made in the staging directory it was given.
struct BuildOutput {
  std::string artifactName;                          // file name inside stagingDir
  std::vector<std::string> command;                  // for the manifest ("command")
  std::string toolchain;                             // for the manifest (version line / path)
  /// Free-form JSON text stored as the manifest's "metadata" (empty: {}).
  /// Text that does not parse fails the build with BadInput.
  std::string metadata = "{}";
  /// What the key was hashed from (KeyBuilder::recordInputs), stored in the
  /// manifest as "key_inputs" [[tag, value], ...] for `sk-cache explain`.
  KeyInputs keyInputs;
};

/// Builds the artifact into `stagingDir` (an empty private directory). Runs
/// at most once per key at a time (all threads, and processes sharing the
/// root, modulo the bounded lock wait). Its error is shared with waiters and
/// counted in compile_failures.
using BuildFn = std::function<Expected<BuildOutput>(const std::filesystem::path& stagingDir)>;

struct Artifact {
  enum class Origin : uint8_t { Built, Disk, Remote };
  std::string key;
  std::string kind;
  Origin origin = Origin::Built;
  std::string sha256;                                // of *bytes
  std::shared_ptr<const std::string> bytes;          // verified artifact content
  std::string manifest;                              // JSON text, as published (or as it would have been)
  std::filesystem::path entryDir;                    // published entry dir; empty if not published
  /// Opaque: a shared flock on the published entry (requested with
  /// hold = true and published); eviction skips the entry while it lives.
  std::shared_ptr<void> hold;
};
using ArtifactPtr = std::shared_ptr<const Artifact>;

struct CacheRequest {
  std::string key;                                   // from KeyBuilder::finish()
  std::string kind = kKindSuperKernel;
  /// Hold the disk entry (Artifact::hold) while the artifact is in use:
  /// what a loaded SuperKernel asks for, so no process evicts it.
  bool hold = false;
  BuildFn build;
};

struct CacheStats {
  uint64_t hits = 0, misses = 0, compiles = 0, compileFailures = 0;
  uint64_t corrupt = 0, untrusted = 0, evicted = 0;
  uint64_t diskFull = 0;                             // processes that fell back to a private cache: no space

  uint64_t memoryHits = 0, diskHits = 0;             // breakdown of hits
  /// The remote tier: verified entries fetched (also counted in hits), keys
  /// it did not have, local builds uploaded, faults (refused, timeout, ...),
  /// entries refused for a missing/wrong signature or bad contents.
  uint64_t remoteHits = 0, remoteMisses = 0, remoteUploads = 0, remoteErrors = 0, remoteRejected = 0;
  uint64_t entries = 0, bytes = 0;                   // computed from the disk store
  uint64_t maxBytes = 0;                             // the size cap (0: unlimited)
  /// {"hits","misses","compiles","compile_failures","corrupt","untrusted",
  ///  "evicted","entries","bytes","max_bytes","memory_hits","disk_hits","remote_hits",
  ///  "remote_misses","remote_uploads","remote_errors","remote_rejected","disk_full",
  ///  "root"}
  /// JSON text (one object, compact).
  std::string toJson() const;
  std::filesystem::path root;
};

struct CacheEntryInfo {
  std::string key;
  std::string kind;
  std::string artifactName;
  uint64_t bytes = 0;                                // artifact + manifest on disk
  int64_t created = 0;                               // unix seconds (manifest)
  int64_t lastUse = 0;                               // unix seconds (last_use mtime)
  std::filesystem::path dir;
};

struct IntegrityItem {
  CacheEntryInfo info;
  bool ok = false;
  std::string problem;                               // empty when ok
  std::string manifest;                              // JSON text; empty if unreadable ("metadata" for replay)
};
struct IntegrityReport {
  std::vector<IntegrityItem> entries;                // sorted by key
  size_t problems = 0;
};

struct GcResult {
  uint64_t removedEntries = 0, removedBytes = 0;
  uint64_t skippedHeld = 0;                          // in use by a live process
  uint64_t remainingEntries = 0, remainingBytes = 0;
};

class Cache {
 public:
  /// Open (creating the directories, mode 0700). An untrusted root falls
  /// back to a private temporary cache (warning, counted); an error only if
  /// even that cannot be created.
  static Expected<std::shared_ptr<Cache>> open(const CacheConfig& config = {});
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  /// Memory, then disk, then build (single flight). Never returns a
  /// half-published entry; a corrupt disk entry is rebuilt.
  Expected<ArtifactPtr> getOrBuild(const CacheRequest& request);
  /// Memory then disk, without building: nullptr when absent (or bad).
  Expected<ArtifactPtr> lookup(std::string_view key, std::string_view kind, bool hold);
  /// The caller found verified bytes unusable (e.g. the back end could not
  /// load them): forget the key in memory and quarantine its disk entry
  /// (counted corrupt), so the next getOrBuild builds again.
  void discard(std::string_view key, const std::string& why);
  /// Memory only (the fast path): nullptr when absent.
  ArtifactPtr findInMemory(std::string_view key) const;

  /// The root in use (the private temp dir when the configured one was untrusted).
  const std::filesystem::path& root() const;
  /// The root asked for (resolved), before any trust fallback.
  const std::filesystem::path& requestedRoot() const;
  bool usingPrivateFallback() const;
  /// The remote tier in use, its URL with any password masked ("" when none).
  std::string remoteUrl() const;
  /// The cache's file system ran out of space (ENOSPC, EDQUOT) during a
  /// build: from then on this process builds into a private temporary cache
  /// ($TMPDIR, else /tmp) and publishes nothing (counted as "disk_full",
  /// warned once). Entries already in the cache still load.
  bool usingDiskFullFallback() const;
  bool diskEnabled() const;
  uint64_t maxBytes() const;

  // sk-cache
  /// Persisted counters + this process's unflushed ones, entries/bytes computed.
  Expected<CacheStats> stats();
  /// Every complete entry, newest use first.
  Expected<std::vector<CacheEntryInfo>> list() const;
  /// The manifest of `key` as JSON text (a unique key prefix of >= 4 hex
  /// digits is accepted); an Io error if it is not JSON.
  Expected<std::string> inspect(std::string_view key) const;
  /// Rehash every entry; problems are reported (and with quarantineBad,
  /// moved to quarantine/ and counted). Items carry the stored manifest.
  Expected<IntegrityReport> verifyIntegrity(bool quarantineBad = false);
  /// Evict LRU entries (never held ones) until the store is <= maxBytes;
  /// also removes stale temp dirs and the quarantine.
  Expected<GcResult> gc(uint64_t maxBytes);
  /// Remove every entry not held by a live process, temp dirs and quarantine;
  /// forgets the memory map. Counters are kept.
  Expected<GcResult> clear();
  /// Merge this process's counter deltas into stats.json now.
  void flushStats();
  /// Set every persisted counter (and this process's pending ones) to zero;
  /// entries are untouched (sk-cache zero-stats, like ccache -z).
  Status zeroStats();

 private:
  Cache();
  struct Impl;  // src/cache/CacheImpl.h
  std::unique_ptr<Impl> impl_;
};

/// The size cap when CacheConfig::maxBytes is not set: $SK_CACHE_MAX_SIZE,
/// else 4 GiB (BadInput naming the variable if it does not parse).
Expected<uint64_t> defaultCacheMaxBytes();

/// The default root (env resolution above), absolute.
Expected<std::filesystem::path> defaultCacheRoot();

}  // namespace sk
