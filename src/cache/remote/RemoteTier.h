// The remote tier as the Cache's lookup path sees it (private): after memory
// and local disk missed, under the local per-key lock (so at most one
// process per machine gets here for a key):
//
//   auto claim = tier->fetchOrClaim(key, kind, entry);
//   if (entry)  -> publish it locally through the normal path, then load it
//   else        -> build locally; if published, tier->uploadBuilt(...);
//   claim.release() (also on every error path: it is RAII)
//
// fetchOrClaim: GET; on a miss take the cross-machine build lock (SET NX PX)
// or, when another machine holds it, poll for its upload until lockWait,
// then build anyway (taking the lock when it frees). Read-only clients never
// take the lock but do wait for a holder. Errors and rejections go straight
// to a local build (counted by RemoteStorage).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/remote/RemoteStorage.h"

namespace sk::remote {

class RemoteTier {
 public:
  /// nullptr when no remote cache is configured, or it is configured but
  /// unusable (bad URL, no usable secret): then one warning per process says
  /// why and what to do. Never an error: the cache works without it.
  static std::unique_ptr<RemoteTier> open(const RemoteCacheConfig& config, RemoteCounters* counters);

  /// The cross-machine build lock of one key; released on destruction.
  class Claim {
   public:
    Claim() = default;
    Claim(Claim&& o) noexcept;
    Claim& operator=(Claim&& o) noexcept;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() { release(); }
    void release();
    bool held() const { return !token_.empty(); }
    /// Upload a local build: only after a clean miss. After a rejection the
    /// stored value may be valid for the rest of the fleet (this machine may
    /// hold the wrong secret) and is left alone; after an error the tier is
    /// unhealthy and the upload would most likely fail too.
    bool mayUpload() const { return mayUpload_; }

   private:
    friend class RemoteTier;
    RemoteStorage* storage_ = nullptr;
    std::string key_, token_;
    bool mayUpload_ = false;
  };

  /// A verified entry (counted remote_hits), or nullopt with `claim` holding
  /// the build lock when this machine should build and upload.
  std::optional<RemoteEntry> fetchOrClaim(std::string_view key, std::string_view kind, Claim& claim);
  /// Upload a build that was published locally (not in read-only mode, and
  /// only when claim.mayUpload()).
  /// `manifestText`: Artifact::manifest (JSON text), signed as is.
  void uploadBuilt(const Claim& claim, std::string_view key, std::string_view manifestText,
                   std::string_view artifact);

  RemoteStorage& storage() { return *storage_; }

 private:
  explicit RemoteTier(std::unique_ptr<RemoteStorage> s) : storage_(std::move(s)) {}
  std::unique_ptr<RemoteStorage> storage_;
};

}  // namespace sk::remote
