// The remote tier's storage layer (private): Redis keys, the signed entry
// envelope, the cross-machine build lock, error counting and the
// disable-after-repeated-errors rule. The Cache calls it from its lookup
// path; sk-cache reaches it through RemoteCacheAdmin.
//
// KEYS: "<ns>:s<schema>:v<library version>:" then "e:<cache key>" for an
// entry and "l:<cache key>" for its build lock, so two library versions (or
// key schemas) never read each other's entries.
//
// ENVELOPE (one Redis string per entry, so an eviction removes all of it):
//   "skrc\x01\0\0\0"                8 bytes: magic + format version
//   HMAC-SHA-256                    32 bytes
//   u64le manifest length, u64le artifact length
//   manifest JSON text, artifact bytes
// The HMAC covers a domain tag, the full Redis key (so an entry cannot be
// replayed under another key, prefix or library version), the manifest and
// the artifact, each length-prefixed. The manifest carries the op list
// (metadata.op_list) that `sk-cache verify` replays.
//
// FAULTS: any failure counts `errors`; the first one per process logs a
// warning; after maxErrors the storage turns itself off for the process.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cache/remote/RedisClient.h"
#include "cache/remote/RemoteCounters.h"
#include "superkernel/cache/RemoteCache.h"
#include "superkernel/support/Error.h"

namespace sk::remote {


/// A RemoteCacheConfig with the environment applied and files read.
struct RemoteSettings {
  RedisUrl url;
  std::string prefix;                      // "<ns>:s1:v0.1.0:"
  std::string secret;                      // HMAC key; empty when unusable
  std::string secretProblem;               // why there is no secret ("" when there is)
  bool readOnly = false;
  std::chrono::milliseconds timeout{500};
  std::chrono::milliseconds lockWait{30000};
  std::chrono::milliseconds lockTtl{30000};
  uint32_t maxErrors = 3;
  uint64_t maxValueBytes = 0;
};

/// nullopt when no remote tier is configured (no URL, or config.off).
/// BadInput for a bad URL, timeout or password file; a secret problem is
/// recorded in secretProblem, not returned.
Expected<std::optional<RemoteSettings>> resolveRemoteSettings(const RemoteCacheConfig& config);

/// Read a key file that must be a regular file owned by this user and not
/// readable or writable by group/others. `what` names it in errors.
Expected<std::string> readOwnerOnlyFile(const std::filesystem::path& file, std::string_view what);

/// What a fetched, verified entry holds.
struct RemoteEntry {
  nlohmann::json manifest;
  std::string artifact;
};

/// The envelope (exposed for tests and RemoteCacheAdmin).
std::string sealEntry(std::string_view secret, std::string_view redisKey, std::string_view manifestText,
                      std::string_view artifact);
enum class OpenProblem : uint8_t { None, Format, Signature, Contents };
struct OpenResult {
  OpenProblem problem = OpenProblem::None;
  std::string message;
  RemoteEntry entry;
};
/// Check the envelope, the signature (constant time), then the manifest
/// against the cache key, the expected kind (empty: any) and the artifact.
OpenResult openEntry(std::string_view secret, std::string_view redisKey, std::string_view cacheKey,
                     std::string_view kind, std::string_view value);

class RemoteStorage {
 public:
  RemoteStorage(RemoteSettings settings, RemoteCounters* counters);
  ~RemoteStorage();
  RemoteStorage(const RemoteStorage&) = delete;
  RemoteStorage& operator=(const RemoteStorage&) = delete;

  const RemoteSettings& settings() const { return settings_; }
  /// A secret is present and the tier has not been disabled.
  bool usable() const { return !settings_.secret.empty() && !disabled_.load(); }
  bool disabled() const { return disabled_.load(); }
  std::string entryKey(std::string_view cacheKey) const { return settings_.prefix + "e:" + std::string(cacheKey); }
  std::string lockKey(std::string_view cacheKey) const { return settings_.prefix + "l:" + std::string(cacheKey); }

  enum class Fetch : uint8_t { Hit, Miss, Rejected, Error, Off };
  /// GET and verify. Counts hits / misses (when countMiss) / rejected / errors.
  Fetch fetch(std::string_view cacheKey, std::string_view kind, RemoteEntry& out, bool countMiss = true);
  /// Count a miss decided by the caller (a fetch with countMiss = false
  /// that ended in a local build).
  void countMiss();
  /// Sign and SET (not in read-only mode). Counts uploads / errors.
  bool upload(std::string_view cacheKey, const nlohmann::json& manifest, std::string_view artifact);
  /// The same with the manifest already as JSON text (Artifact::manifest).
  bool uploadText(std::string_view cacheKey, std::string_view manifestText, std::string_view artifact);

  enum class Lock : uint8_t { Acquired, Held, Error, Off };
  /// SET lock token NX PX ttl. `token` is filled when acquired.
  Lock tryLock(std::string_view cacheKey, std::string& token);
  /// Whether another machine holds the build lock (false on error).
  bool lockHeld(std::string_view cacheKey);
  /// Delete the lock only if it still holds our token (a Lua compare-and-delete).
  void unlock(std::string_view cacheKey, const std::string& token);

  /// A raw command for admin tools: not counted, never disables the tier.
  std::optional<RedisFailure> raw(const std::vector<std::string_view>& argv, RedisReply& reply,
                                  const ReplyLimits& limits = {});
  /// What a GET of an entry may answer: nil or a string no larger than the
  /// largest entry allowed (maxValueBytes; 0: Redis' own 512 MiB limit).
  ReplyLimits entryLimits() const;

 private:
  void fault(const RedisFailure& f, std::string_view what);
  std::optional<RedisFailure> run(const std::vector<std::string_view>& argv, RedisReply& reply,
                                  const ReplyLimits& limits);

  RemoteSettings settings_;
  RemoteCounters* counters_;
  RemoteCounters ownCounters_;   // when the caller passes none
  std::mutex mutex_;             // one connection, one command at a time
  RedisClient client_;
  std::atomic<uint32_t> errors_{0};
  std::atomic<bool> disabled_{false};
};

}  // namespace sk::remote
