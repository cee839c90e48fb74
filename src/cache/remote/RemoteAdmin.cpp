// RemoteCacheAdmin: what `sk-cache remote ping|ls|verify` does. Unlike the
// lookup path, failures here are errors for the operator (the tool exits
// non-zero), not counted fallbacks, and nothing is ever loaded.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "cache/remote/RemoteStorage.h"
#include "superkernel/cache/Key.h"
#include "superkernel/support/Sha256.h"
#include "superkernel/cache/RemoteCache.h"
#include "superkernel/support/Log.h"

namespace sk {
using remote::RedisReply;

struct RemoteCacheAdmin::Impl {
  std::unique_ptr<remote::RemoteStorage> storage;

  Error failure(const remote::RedisFailure& f) const {
    return ioError(fmt::format("remote cache {}: {}", storage->settings().url.redacted(), f.message));
  }
};

RemoteCacheAdmin::RemoteCacheAdmin() : impl_(std::make_unique<Impl>()) {}
RemoteCacheAdmin::~RemoteCacheAdmin() = default;

Expected<std::unique_ptr<RemoteCacheAdmin>> RemoteCacheAdmin::open(const RemoteCacheConfig& config) {
  initLogging();
  SK_ASSIGN_OR_RETURN(auto settings, remote::resolveRemoteSettings(config));
  if (!settings)
    return badInput("no remote cache configured: set SK_REMOTE_CACHE=redis://host:port[/db] or pass --remote URL");
  std::unique_ptr<RemoteCacheAdmin> a(new RemoteCacheAdmin());
  a->impl_->storage = std::make_unique<remote::RemoteStorage>(std::move(*settings), nullptr);
  return a;
}

std::string RemoteCacheAdmin::url() const { return impl_->storage->settings().url.redacted(); }
std::string RemoteCacheAdmin::prefix() const { return impl_->storage->settings().prefix; }
bool RemoteCacheAdmin::readOnly() const { return impl_->storage->settings().readOnly; }
std::chrono::milliseconds RemoteCacheAdmin::timeout() const { return impl_->storage->settings().timeout; }
std::string RemoteCacheAdmin::secretProblem() const { return impl_->storage->settings().secretProblem; }

Expected<std::chrono::microseconds> RemoteCacheAdmin::ping() {
  auto t0 = std::chrono::steady_clock::now();
  RedisReply r;
  if (auto f = impl_->storage->raw({"PING"}, r, remote::ReplyLimits::status())) return impl_->failure(*f);
  if (r.str != "PONG") return ioError(fmt::format("remote cache {}: PING answered '{}'", url(), r.str));
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
}

Expected<std::map<std::string, std::string>> RemoteCacheAdmin::serverInfo() {
  std::map<std::string, std::string> out;
  for (const char* section : {"server", "memory"}) {
    RedisReply r;
    if (auto f = impl_->storage->raw({"INFO", section}, r, remote::ReplyLimits::value(1 << 20))) return impl_->failure(*f);
    size_t pos = 0;
    while (pos < r.str.size()) {
      size_t end = r.str.find("\r\n", pos);
      if (end == std::string::npos) end = r.str.size();
      std::string line = r.str.substr(pos, end - pos);
      pos = end + 2;
      size_t colon = line.find(':');
      if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
      std::string k = line.substr(0, colon);
      if (k == "redis_version" || k == "maxmemory" || k == "maxmemory_policy" || k == "used_memory")
        out[k] = line.substr(colon + 1);
    }
  }
  return out;
}

Expected<std::vector<RemoteEntryInfo>> RemoteCacheAdmin::list(bool verify) {
  remote::RemoteStorage& st = *impl_->storage;
  const std::string secret = st.settings().secret;
  if (verify && secret.empty())
    return badInput(fmt::format("cannot verify remote entries without the secret: {}", secretProblem()));
  const std::string entryPrefix = st.settings().prefix + "e:";
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    RedisReply r;
    if (auto f = st.raw({"SCAN", cursor, "MATCH", entryPrefix + "*", "COUNT", "1000"}, r)) return impl_->failure(*f);
    if (r.type != RedisReply::Type::Array || r.elements.size() != 2)
      return ioError(fmt::format("remote cache {}: unexpected SCAN reply", url()));
    cursor = r.elements[0].str;
    for (const auto& e : r.elements[1].elements) keys.push_back(e.str);
  } while (cursor != "0");
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  std::vector<RemoteEntryInfo> out;
  for (const std::string& rk : keys) {
    RemoteEntryInfo info;
    info.key = rk.substr(entryPrefix.size());
    RedisReply r;
    if (auto f = st.raw({"GET", rk}, r, st.entryLimits())) return impl_->failure(*f);
    if (r.type == RedisReply::Type::Nil) continue;  // evicted meanwhile
    info.bytes = r.str.size();
    if (!isValidCacheKey(info.key)) {
      info.status = "corrupt";
      info.problem = "not a cache key";
      out.push_back(std::move(info));
      continue;
    }
    // Parse the manifest without trusting it (for display), then verify.
    if (r.str.size() >= 56) {
      uint64_t m = 0;
      for (int i = 7; i >= 0; --i) m = (m << 8) | static_cast<unsigned char>(r.str[40 + static_cast<size_t>(i)]);
      if (m <= r.str.size() - 56) {
        auto j = nlohmann::json::parse(std::string_view(r.str).substr(56, m), nullptr, false);
        if (!j.is_discarded()) info.manifest = j.dump();
      }
    }
    if (verify) {
      remote::OpenResult o = remote::openEntry(secret, rk, info.key, "", r.str);
      switch (o.problem) {
        case remote::OpenProblem::None: info.status = "ok"; break;
        case remote::OpenProblem::Signature: info.status = "rejected"; break;
        default: info.status = "corrupt"; break;
      }
      info.problem = o.message;
    }
    out.push_back(std::move(info));
  }
  return out;
}

Expected<uint64_t> RemoteCacheAdmin::remove(const std::vector<std::string>& keys) {
  if (readOnly()) return badInput("the remote cache is read-only here (SK_REMOTE_CACHE_READONLY=1): not deleting");
  uint64_t n = 0;
  for (const std::string& k : keys) {
    RedisReply r;
    if (auto f = impl_->storage->raw({"DEL", impl_->storage->entryKey(k)}, r, remote::ReplyLimits::integer())) return impl_->failure(*f);
    n += r.type == RedisReply::Type::Integer ? static_cast<uint64_t>(r.integer) : 0;
  }
  return n;
}

}  // namespace sk
