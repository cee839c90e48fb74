// The remote cache tier (docs/CACHE.md, "Remote cache"): a Redis server
// shared by a fleet, behind each machine's local disk cache.
//
// Lookup order in Cache::getOrBuild: memory, local disk, remote. A remote hit
// is verified (HMAC-SHA-256 under the shared secret, then the manifest's key,
// kind, size and SHA-256), written to the local cache through the normal
// publish path and loaded from there. A local build is uploaded after it is
// published locally. Across machines a short Redis lock (SET NX PX) lets one
// machine compile a cold key while the others wait a bounded time for its
// upload, then compile anyway.
//
// TRUST: an entry from the network is code this process will load, so
// nothing unsigned is ever loaded. Without a usable secret file
// (SK_REMOTE_CACHE_SECRET_FILE: a regular file owned by this user, mode
// 0600/0400, at least 16 bytes) the remote tier is not used at all (one
// warning). A missing, wrong or tampered signature is a counted
// `remote_rejected` miss.
//
// FAULTS: every request is bounded by one timeout (connect + write + the
// whole reply) and every reply by what its command can return (a GET: nil or
// one string of at most maxValueBytes); a refused connection, a timeout, a
// dropped connection, a refused write or a refused reply is a counted
// `remote_errors` and a local compile, with one warning per process; after
// `maxErrors` errors the tier is disabled for the rest of the process.
//
// This header is JSON-library-free: nlohmann-json is private to
// libsuperkernel (manifests are JSON text, as in Cache.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

struct RemoteCacheConfig {
  /// redis://[[user]:password@]host[:port][/db]. Empty: $SK_REMOTE_CACHE
  /// (unset or empty: no remote tier).
  std::string url;
  /// true: no remote tier, whatever the environment says.
  bool off = false;
  /// HMAC key file. Empty: $SK_REMOTE_CACHE_SECRET_FILE.
  std::filesystem::path secretFile;
  /// Redis AUTH password file (first line; owner-only like the secret).
  /// Empty: $SK_REMOTE_CACHE_PASSWORD_FILE. A password in the URL wins.
  std::filesystem::path passwordFile;
  /// Only read: never upload, never take the build lock. nullopt:
  /// $SK_REMOTE_CACHE_READONLY=1.
  std::optional<bool> readOnly;
  /// Bound on each request, everything included: the connect when one is
  /// needed, writing it and reading the whole reply. nullopt:
  /// $SK_REMOTE_CACHE_TIMEOUT_MS, else 500 ms.
  std::optional<std::chrono::milliseconds> timeout;
  /// Longest wait for another machine's build of a cold key. nullopt:
  /// $SK_REMOTE_CACHE_LOCK_WAIT_MS, else 30 s.
  std::optional<std::chrono::milliseconds> lockWait;
  /// Expiry of the build lock (a crashed builder's lock frees itself).
  std::chrono::milliseconds lockTtl{30000};
  /// Errors after which the tier is disabled for the rest of the process.
  uint32_t maxErrors = 3;
  /// Entries larger than this (signed envelope) are not uploaded, and a GET
  /// reply announcing a larger value is refused before it is read (each
  /// counted as an error). 0: Redis' own proto-max-bulk-len, 512 MiB.
  uint64_t maxValueBytes = uint64_t{64} << 20;
  /// First part of every Redis key: "<ns>:s<key schema>:v<library version>:".
  std::string keyNamespace = "superkernel";
};

/// One remote entry, as `sk-cache remote ls|verify` reports it.
struct RemoteEntryInfo {
  std::string key;                 // the cache key (64 hex digits)
  uint64_t bytes = 0;              // size of the stored value
  /// "ok", "rejected" (signature missing/wrong/tampered), "corrupt" (signed
  /// but inconsistent, or not an entry), "unchecked" (ls without verify).
  std::string status = "unchecked";
  std::string problem;
  std::string manifest;            // JSON text; empty when unreadable
};

/// Operator access to the remote tier (sk-cache remote ping|ls|verify).
class RemoteCacheAdmin {
 public:
  /// BadInput when no URL is configured or the URL / password file is bad.
  /// A missing or unsafe secret is not an error here (ping and ls work
  /// without one); secretProblem() says what is wrong.
  static Expected<std::unique_ptr<RemoteCacheAdmin>> open(const RemoteCacheConfig& config = {});
  ~RemoteCacheAdmin();
  RemoteCacheAdmin(const RemoteCacheAdmin&) = delete;
  RemoteCacheAdmin& operator=(const RemoteCacheAdmin&) = delete;

  /// The URL with any password masked.
  std::string url() const;
  /// The key prefix of this library version ("superkernel:s1:v0.1.0:").
  std::string prefix() const;
  bool readOnly() const;
  std::chrono::milliseconds timeout() const;
  /// Empty when the secret file is usable.
  std::string secretProblem() const;

  /// PING round trip (connect included). Io error on any failure.
  Expected<std::chrono::microseconds> ping();
  /// Server version and memory policy from INFO (best effort, for ping):
  /// the fields redis_version, maxmemory, maxmemory_policy and used_memory
  /// that the server reported, by name.
  Expected<std::map<std::string, std::string>> serverInfo();
  /// Every entry under prefix(), sorted by key. With verify, each value's
  /// signature and contents are checked (needs the secret: BadInput without).
  Expected<std::vector<RemoteEntryInfo>> list(bool verify);
  /// Delete entries of this prefix by cache key (not in read-only mode).
  /// Returns how many existed.
  Expected<uint64_t> remove(const std::vector<std::string>& keys);

 private:
  RemoteCacheAdmin();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sk
