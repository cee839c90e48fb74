#include "cache/remote/RemoteTier.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

namespace sk::remote {

namespace {
std::atomic<bool> gWarnedConfig{false};
}

std::unique_ptr<RemoteTier> RemoteTier::open(const RemoteCacheConfig& config, RemoteCounters* counters) {
  auto settings = resolveRemoteSettings(config);
  if (!settings) {
    if (!gWarnedConfig.exchange(true))
      spdlog::warn("remote cache not used: {}", settings.error().message());
    return nullptr;
  }
  if (!*settings) return nullptr;
  if ((*settings)->secret.empty()) {
    // An entry from a network store is code this process would load: without
    // a secret nothing can be verified, so nothing is read (or written).
    if (!gWarnedConfig.exchange(true))
      spdlog::warn(
          "remote cache {} not used: {}. Remote entries are code this process would load, so they are only used "
          "when signed: give every machine of the fleet the same secret file (e.g. head -c 32 /dev/urandom | "
          "base64 > ~/.config/superkernel/remote-secret; chmod 600 it) and set SK_REMOTE_CACHE_SECRET_FILE",
          (*settings)->url.redacted(), (*settings)->secretProblem);
    return nullptr;
  }
  return std::unique_ptr<RemoteTier>(
      new RemoteTier(std::make_unique<RemoteStorage>(std::move(**settings), counters)));
}

RemoteTier::Claim::Claim(Claim&& o) noexcept
    : storage_(o.storage_), key_(std::move(o.key_)), token_(std::move(o.token_)), mayUpload_(o.mayUpload_) {
  o.token_.clear();
}

RemoteTier::Claim& RemoteTier::Claim::operator=(Claim&& o) noexcept {
  if (this != &o) {
    release();
    storage_ = o.storage_;
    key_ = std::move(o.key_);
    token_ = std::move(o.token_);
    mayUpload_ = o.mayUpload_;
    o.token_.clear();
  }
  return *this;
}

void RemoteTier::Claim::release() {
  if (storage_ && !token_.empty()) storage_->unlock(key_, token_);
  token_.clear();
}

std::optional<RemoteEntry> RemoteTier::fetchOrClaim(std::string_view key, std::string_view kind, Claim& claim) {
  RemoteStorage& st = *storage_;
  if (!st.usable()) return std::nullopt;
  RemoteEntry e;
  auto f = st.fetch(key, kind, e, /*countMiss=*/false);
  if (f == RemoteStorage::Fetch::Hit) return e;
  if (f != RemoteStorage::Fetch::Miss) return std::nullopt;  // error / rejected: counted, build here

  // A miss: one machine builds, the others wait a bounded time for its upload.
  const auto waitStart = std::chrono::steady_clock::now();
  const auto deadline = waitStart + st.settings().lockWait;
  auto sleep = std::chrono::milliseconds(10);
  bool waited = false;
  while (true) {
    if (!st.settings().readOnly) {
      std::string token;
      auto l = st.tryLock(key, token);
      if (l == RemoteStorage::Lock::Acquired) {
        claim.storage_ = &st;
        claim.key_ = std::string(key);
        claim.token_ = std::move(token);
        if (waited) {
          // The holder may have uploaded between our last GET and its unlock.
          f = st.fetch(key, kind, e, false);
          if (f == RemoteStorage::Fetch::Hit) {
            claim.release();
            return e;
          }
        }
        st.countMiss();
        claim.mayUpload_ = true;
        return std::nullopt;
      }
      if (l != RemoteStorage::Lock::Held) return std::nullopt;  // error (counted) or off
    } else if (!st.lockHeld(key)) {
      st.countMiss();
      return std::nullopt;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      spdlog::info("waited {} ms for another machine to build {}; building here", st.settings().lockWait.count(),
                   key.substr(0, 16));
      st.countMiss();
      claim.storage_ = &st;
      claim.mayUpload_ = true;
      return std::nullopt;
    }
    waited = true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(sleep, deadline - now));
    sleep = std::min(sleep * 2, std::chrono::milliseconds(200));
    f = st.fetch(key, kind, e, false);
    if (f == RemoteStorage::Fetch::Hit) return e;
    if (f != RemoteStorage::Fetch::Miss) return std::nullopt;
  }
}

void RemoteTier::uploadBuilt(const Claim& claim, std::string_view key, std::string_view manifestText,
                             std::string_view artifact) {
  if (claim.mayUpload()) storage_->uploadText(key, manifestText, artifact);
}

}  // namespace sk::remote
