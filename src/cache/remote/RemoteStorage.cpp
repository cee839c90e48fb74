#include "cache/remote/RemoteStorage.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "superkernel/cache/Key.h"
#include "superkernel/support/Sha256.h"
#include "support/Fd.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Paths.h"

namespace sk::remote {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'s', 'k', 'r', 'c', 1, 0, 0, 0};
constexpr size_t kHeader = 8 + 32 + 8 + 8;
constexpr std::string_view kDomain = "superkernel remote cache entry v1";
constexpr size_t kMinSecret = 16;

// One warning per process for faults, one for rejected entries, one for an
// unusable secret: a fleet with a broken Redis must not flood its logs.
std::atomic<bool> gWarnedFault{false};
std::atomic<bool> gWarnedReject{false};

void putU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t getU64(std::string_view s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

// HMAC-SHA-256 over length-prefixed parts (OpenSSL 3 EVP_MAC).
bool hmac(std::string_view key, std::initializer_list<std::string_view> parts, unsigned char out[32]) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (!mac) return false;
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  bool ok = ctx != nullptr;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
  ok = ok && EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) == 1;
  for (std::string_view p : parts) {
    std::string len;
    putU64(len, p.size());
    ok = ok && EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(len.data()), len.size()) == 1;
    ok = ok && EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(p.data()), p.size()) == 1;
  }
  size_t n = 0;
  ok = ok && EVP_MAC_final(ctx, out, &n, 32) == 1 && n == 32;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return ok;
}

// The same rule as the local store's (Cache.cpp): a plain file name.
bool validArtifactName(std::string_view n) {
  if (n.empty() || n.size() > 128 || n == "." || n == ".." || n == "manifest.json" || n == "last_use") return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

Expected<std::optional<uint64_t>> envMs(const char* name, uint64_t max) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::optional<uint64_t>();
  std::string s(v);
  if (s.size() > 10 || !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return badInput(fmt::format("{}='{}' is not a number of milliseconds", name, s));
  uint64_t ms = std::stoull(s);
  if (ms == 0 || ms > max) return badInput(fmt::format("{}={} is out of range (1..{})", name, ms, max));
  return std::optional<uint64_t>(ms);
}

std::string trimNewlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string randomToken() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) {
    for (auto& c : b) c = static_cast<unsigned char>(std::rand());
  }
  char host[64] = {};
  ::gethostname(host, sizeof host - 1);
  std::string hex;
  for (unsigned char c : b) hex += fmt::format("{:02x}", c);
  return fmt::format("{}:{}:{}", host, ::getpid(), hex);
}

}  // namespace

Expected<std::string> readOwnerOnlyFile(const fs::path& file, std::string_view what) {
  detail::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    return badInput(fmt::format("{} {}: {}", what, file.string(),
                                errno == ELOOP ? "is a symbolic link (point at the file itself)"
                                               : detail::errnoText(errno)));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return badInput(fmt::format("{} {}: cannot stat", what, file.string()));
  if (!S_ISREG(st.st_mode)) return badInput(fmt::format("{} {} is not a regular file", what, file.string()));
  if (st.st_uid != ::geteuid())
    return badInput(fmt::format("{} {} is owned by uid {}, not by this user (uid {})", what, file.string(), st.st_uid,
                                ::geteuid()));
  if (st.st_mode & 077)
    return badInput(fmt::format("{} {} is accessible by group or others (mode {:04o}); run chmod 600 {}", what,
                                file.string(), st.st_mode & 07777, file.string()));
  if (st.st_size > 65536) return badInput(fmt::format("{} {} is larger than 64 KiB", what, file.string()));
  return detail::readAllFd(fd.get(), file.string());
}

Expected<std::optional<RemoteSettings>> resolveRemoteSettings(const RemoteCacheConfig& config) {
  if (config.off) return std::optional<RemoteSettings>();
  std::string url = config.url;
  if (url.empty()) {
    if (const char* v = std::getenv("SK_REMOTE_CACHE"); v && *v) url = v;
  }
  if (url.empty()) return std::optional<RemoteSettings>();
  RemoteSettings s;
  SK_ASSIGN_OR_RETURN(s.url, parseRedisUrl(url));
  if (config.keyNamespace.empty() || config.keyNamespace.find_first_of(" \n\r\t") != std::string::npos)
    return badInput("remote cache key namespace must be a non-empty word");
  s.prefix = fmt::format("{}:s{}:v{}:", config.keyNamespace, kCacheKeySchemaVersion, libraryVersion());

  if (config.readOnly) {
    s.readOnly = *config.readOnly;
  } else if (const char* v = std::getenv("SK_REMOTE_CACHE_READONLY"); v && *v) {
    std::string t(v);
    if (t == "1" || t == "true" || t == "yes") s.readOnly = true;
    else if (t == "0" || t == "false" || t == "no") s.readOnly = false;
    else return badInput(fmt::format("SK_REMOTE_CACHE_READONLY='{}' is not 1 or 0", t));
  }
  if (config.timeout) {
    s.timeout = *config.timeout;
  } else {
    SK_ASSIGN_OR_RETURN(auto ms, envMs("SK_REMOTE_CACHE_TIMEOUT_MS", 600000));
    if (ms) s.timeout = std::chrono::milliseconds(*ms);
  }
  if (s.timeout.count() <= 0) return badInput("remote cache timeout must be positive");
  if (config.lockWait) {
    s.lockWait = *config.lockWait;
  } else {
    SK_ASSIGN_OR_RETURN(auto ms, envMs("SK_REMOTE_CACHE_LOCK_WAIT_MS", 3600000));
    if (ms) s.lockWait = std::chrono::milliseconds(*ms);
  }
  s.lockTtl = config.lockTtl.count() > 0 ? config.lockTtl : std::chrono::milliseconds(30000);
  s.maxErrors = std::max<uint32_t>(1, config.maxErrors);
  s.maxValueBytes = config.maxValueBytes;

  if (!s.url.password) {
    fs::path pwFile = config.passwordFile;
    if (pwFile.empty()) {
      if (const char* v = std::getenv("SK_REMOTE_CACHE_PASSWORD_FILE"); v && *v) pwFile = v;
    }
    if (!pwFile.empty()) {
      SK_ASSIGN_OR_RETURN(std::string pw, readOwnerOnlyFile(pwFile, "Redis password file"));
      pw = pw.substr(0, pw.find('\n'));
      s.url.password = trimNewlines(pw);
    }
  }

  fs::path secretFile = config.secretFile;
  if (secretFile.empty()) {
    if (const char* v = std::getenv("SK_REMOTE_CACHE_SECRET_FILE"); v && *v) secretFile = v;
  }
  if (secretFile.empty()) {
    s.secretProblem = "SK_REMOTE_CACHE_SECRET_FILE is not set";
  } else {
    auto secret = readOwnerOnlyFile(secretFile, "remote cache secret file");
    if (!secret) {
      s.secretProblem = secret.error().message();
    } else if (trimNewlines(*secret).size() < kMinSecret) {
      s.secretProblem = fmt::format("remote cache secret file {} holds fewer than {} bytes", secretFile.string(),
                                    kMinSecret);
    } else {
      s.secret = trimNewlines(std::move(*secret));
    }
  }
  return std::optional<RemoteSettings>(std::move(s));
}

std::string sealEntry(std::string_view secret, std::string_view redisKey, std::string_view manifestText,
                      std::string_view artifact) {
  unsigned char mac[32] = {};
  if (!hmac(secret, {kDomain, redisKey, manifestText, artifact}, mac)) return {};
  std::string out;
  out.reserve(kHeader + manifestText.size() + artifact.size());
  out.append(kMagic, sizeof kMagic);
  out.append(reinterpret_cast<const char*>(mac), sizeof mac);
  putU64(out, manifestText.size());
  putU64(out, artifact.size());
  out.append(manifestText);
  out.append(artifact);
  return out;
}

OpenResult openEntry(std::string_view secret, std::string_view redisKey, std::string_view cacheKey,
                     std::string_view kind, std::string_view value) {
  OpenResult r;
  auto fail = [&](OpenProblem p, std::string why) {
    r.problem = p;
    r.message = std::move(why);
    return std::move(r);
  };
  if (value.size() < kHeader) return fail(OpenProblem::Format, fmt::format("value of {} bytes is too short", value.size()));
  if (std::memcmp(value.data(), kMagic, sizeof kMagic) != 0)
    return fail(OpenProblem::Format, "not a superkernel remote cache entry (bad magic)");
  const uint64_t m = getU64(value, 40), a = getU64(value, 48);
  const uint64_t body = value.size() - kHeader;
  if (m > body || a > body - m || m + a != body)
    return fail(OpenProblem::Format, "entry lengths do not match the value's size (truncated?)");
  std::string_view manifestText = value.substr(kHeader, m), artifact = value.substr(kHeader + m, a);
  unsigned char mac[32];
  if (secret.empty() || !hmac(secret, {kDomain, redisKey, manifestText, artifact}, mac))
    return fail(OpenProblem::Signature, "cannot compute the signature");
  if (CRYPTO_memcmp(mac, value.data() + 8, sizeof mac) != 0)
    return fail(OpenProblem::Signature, "signature does not match (another secret, or the entry was modified)");
  auto j = nlohmann::json::parse(manifestText, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail(OpenProblem::Contents, "manifest is not a JSON object");
  auto str = [&](const char* f) -> std::string {
    auto it = j.find(f);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (str("key") != cacheKey) return fail(OpenProblem::Contents, "manifest key does not match");
  if (!kind.empty() && str("kind") != kind)
    return fail(OpenProblem::Contents, fmt::format("entry kind '{}' is not the requested '{}'", str("kind"), kind));
  if (!validArtifactName(str("artifact"))) return fail(OpenProblem::Contents, "manifest names no valid artifact");
  auto size = j.find("size");
  if (size == j.end() || !size->is_number_unsigned() || size->get<uint64_t>() != a)
    return fail(OpenProblem::Contents, "artifact size does not match the manifest");
  if (sha256Hex(artifact) != str("sha256"))
    return fail(OpenProblem::Contents, "artifact SHA-256 does not match the manifest");
  r.entry.manifest = std::move(j);
  r.entry.artifact = std::string(artifact);
  return r;
}

RemoteStorage::RemoteStorage(RemoteSettings settings, RemoteCounters* counters)
    : settings_(std::move(settings)),
      counters_(counters ? counters : &ownCounters_),
      client_(settings_.url, settings_.timeout) {
  initLogging();
}

void RemoteStorage::countMiss() { counters_->misses.fetch_add(1, std::memory_order_relaxed); }

RemoteStorage::~RemoteStorage() = default;

std::optional<RedisFailure> RemoteStorage::run(const std::vector<std::string_view>& argv, RedisReply& reply,
                                               const ReplyLimits& limits) {
  std::lock_guard<std::mutex> g(mutex_);
  return client_.command(argv, reply, limits);
}

std::optional<RedisFailure> RemoteStorage::raw(const std::vector<std::string_view>& argv, RedisReply& reply,
                                               const ReplyLimits& limits) {
  return run(argv, reply, limits);
}

ReplyLimits RemoteStorage::entryLimits() const {
  return ReplyLimits::value(settings_.maxValueBytes ? settings_.maxValueBytes : uint64_t{512} << 20);
}

void RemoteStorage::fault(const RedisFailure& f, std::string_view what) {
  counters_->errors.fetch_add(1, std::memory_order_relaxed);
  const uint32_t n = errors_.fetch_add(1) + 1;
  const bool disableNow = n >= settings_.maxErrors && !disabled_.exchange(true);
  if (!gWarnedFault.exchange(true)) {
    spdlog::warn(
        "remote cache {}: {}: {}; compiling locally ({}; further remote cache errors in this process are logged at "
        "debug level)",
        settings_.url.redacted(), what, f.message,
        disableNow ? "the remote tier is now off for this process"
                   : fmt::format("the remote tier turns itself off after {} errors", settings_.maxErrors));
  } else {
    spdlog::debug("remote cache {}: {}: {}", settings_.url.redacted(), what, f.message);
  }
  if (disableNow)
    spdlog::info("remote cache {} is off for the rest of this process after {} errors", settings_.url.redacted(), n);
}

RemoteStorage::Fetch RemoteStorage::fetch(std::string_view cacheKey, std::string_view kind, RemoteEntry& out,
                                          bool countMiss) {
  if (!usable()) return Fetch::Off;
  const std::string key = entryKey(cacheKey);
  RedisReply r;
  if (auto f = run({"GET", key}, r, entryLimits())) {
    fault(*f, fmt::format("fetching {}", cacheKey.substr(0, 16)));
    return Fetch::Error;
  }
  if (r.type == RedisReply::Type::Nil) {
    if (countMiss) counters_->misses.fetch_add(1, std::memory_order_relaxed);
    return Fetch::Miss;
  }
  if (r.type != RedisReply::Type::String) {
    fault(RedisFailure{false, "GET returned no string"}, fmt::format("fetching {}", cacheKey.substr(0, 16)));
    return Fetch::Error;
  }
  OpenResult o = openEntry(settings_.secret, key, cacheKey, kind, r.str);
  if (o.problem != OpenProblem::None) {
    counters_->rejected.fetch_add(1, std::memory_order_relaxed);
    if (!gWarnedReject.exchange(true)) {
      spdlog::warn(
          "remote cache entry {} from {} rejected: {}; not loaded, compiling locally (check that every machine uses "
          "the same SK_REMOTE_CACHE_SECRET_FILE; further rejections are logged at debug level)",
          cacheKey, settings_.url.redacted(), o.message);
    } else {
      spdlog::debug("remote cache entry {} rejected: {}", cacheKey, o.message);
    }
    return Fetch::Rejected;
  }
  counters_->hits.fetch_add(1, std::memory_order_relaxed);
  out = std::move(o.entry);
  return Fetch::Hit;
}

bool RemoteStorage::upload(std::string_view cacheKey, const nlohmann::json& manifest, std::string_view artifact) {
  return uploadText(cacheKey, manifest.dump(), artifact);
}

bool RemoteStorage::uploadText(std::string_view cacheKey, std::string_view manifestText, std::string_view artifact) {
  if (!usable() || settings_.readOnly) return false;
  const std::string key = entryKey(cacheKey);
  const std::string value = sealEntry(settings_.secret, key, manifestText, artifact);
  if (value.empty()) {
    fault(RedisFailure{false, "cannot compute the signature"}, fmt::format("uploading {}", cacheKey.substr(0, 16)));
    return false;
  }
  if (settings_.maxValueBytes && value.size() > settings_.maxValueBytes) {
    fault(RedisFailure{false, fmt::format("the entry is {} bytes, over the remote limit of {} bytes; not uploaded",
                                          value.size(), settings_.maxValueBytes)},
          fmt::format("uploading {}", cacheKey.substr(0, 16)));
    return false;
  }
  RedisReply r;
  if (auto f = run({"SET", key, value}, r, ReplyLimits::status())) {
    fault(*f, fmt::format("uploading {}", cacheKey.substr(0, 16)));
    return false;
  }
  counters_->uploads.fetch_add(1, std::memory_order_relaxed);
  return true;
}

RemoteStorage::Lock RemoteStorage::tryLock(std::string_view cacheKey, std::string& token) {
  if (!usable() || settings_.readOnly) return Lock::Off;
  std::string t = randomToken();
  std::string ttl = std::to_string(settings_.lockTtl.count());
  RedisReply r;
  if (auto f = run({"SET", lockKey(cacheKey), t, "NX", "PX", ttl}, r, ReplyLimits::status())) {
    fault(*f, fmt::format("locking {}", cacheKey.substr(0, 16)));
    return Lock::Error;
  }
  if (r.type == RedisReply::Type::Nil) return Lock::Held;
  token = std::move(t);
  return Lock::Acquired;
}

bool RemoteStorage::lockHeld(std::string_view cacheKey) {
  if (!usable()) return false;
  RedisReply r;
  if (auto f = run({"EXISTS", lockKey(cacheKey)}, r, ReplyLimits::integer())) {
    fault(*f, fmt::format("checking the lock of {}", cacheKey.substr(0, 16)));
    return false;
  }
  return r.type == RedisReply::Type::Integer && r.integer > 0;
}

void RemoteStorage::unlock(std::string_view cacheKey, const std::string& token) {
  if (token.empty() || disabled_.load()) return;
  static constexpr std::string_view kScript =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  RedisReply r;
  if (auto f = run({"EVAL", kScript, "1", lockKey(cacheKey), token}, r, ReplyLimits::integer()))
    fault(*f, fmt::format("unlocking {}", cacheKey.substr(0, 16)));
}

}  // namespace sk::remote
