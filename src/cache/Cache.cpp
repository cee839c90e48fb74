#include "superkernel/cache/Cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cache/FileUtil.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace fs = std::filesystem;
using detail::UniqueFd;
using detail::errnoText;

// ---------------------------------------------------------------------------
// sizes

Expected<uint64_t> parseSize(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != ' ') s += c;
  if (s.empty()) return badInput("empty size (expected e.g. 500M, 2G, 4096)");
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  std::string num = s.substr(0, i), unit = s.substr(i);
  if (num.empty() || std::count(num.begin(), num.end(), '.') > 1)
    return badInput(fmt::format("bad size '{}' (expected e.g. 500M, 2G, 4096)", text));
  double v = std::strtod(num.c_str(), nullptr);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") mult = 1024.0 * 1024 * 1024 * 1024;
  else return badInput(fmt::format("bad size unit in '{}' (accepted: B, K, M, G, T)", text));
  double bytes = v * mult;
  if (!std::isfinite(bytes) || bytes > 1.8e19) return badInput(fmt::format("size '{}' is too large", text));
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string formatSize(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", v, units[u]);
}

// ---------------------------------------------------------------------------
// root

static fs::path homeDir() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (struct passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir) return pw->pw_dir;
  return {};
}

Expected<fs::path> defaultCacheRoot() {
  initLogging();
  if (const char* v = std::getenv("SK_CACHE_DIR"); v && *v) {
    fs::path p(v);
    if (p.is_absolute()) return p.lexically_normal();
    spdlog::warn("SK_CACHE_DIR='{}' is a relative path; ignored (set an absolute path)", v);
  }
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) {
    fs::path p(v);
    if (p.is_absolute()) return (p / "superkernel").lexically_normal();
    spdlog::warn("XDG_CACHE_HOME='{}' is a relative path; ignored", v);
  }
  fs::path home = homeDir();
  if (home.empty() || !home.is_absolute())
    return ioError("no cache directory: set SK_CACHE_DIR (HOME is not set to an absolute path)");
  return (home / ".cache" / "superkernel").lexically_normal();
}

// ---------------------------------------------------------------------------

namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kLastUse = "last_use";

bool validKind(std::string_view k) {
  if (k.empty() || k.size() > 32) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool validArtifactName(std::string_view n) {
  if (n.empty() || n.size() > 128 || n == "." || n == ".." || n == kManifest || n == kLastUse) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

int64_t nowSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

// Why a directory is not trusted ("" when it is).
std::string trustProblem(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return fmt::format("cannot stat: {}", errnoText(errno));
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != ::geteuid()) return fmt::format("it is owned by uid {}, not by this user (uid {})", st.st_uid, ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("it is writable by group or others (mode {:04o})", st.st_mode & 07777);
  return {};
}

// A file in an entry: regular, ours, not group/other writable, one link.
std::string fileTrustProblem(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != ::geteuid()) return fmt::format("owned by uid {}, not this user", st.st_uid);
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return fmt::format("writable by group or others (mode {:04o})", st.st_mode & 07777);
  if (st.st_nlink != 1) return fmt::format("has {} hard links", st.st_nlink);
  return {};
}

struct Counters {
  std::atomic<uint64_t> hits{0}, misses{0}, compiles{0}, compileFailures{0}, corrupt{0}, untrusted{0}, evicted{0},
      memoryHits{0}, diskHits{0};
};

const char* const kCounterNames[] = {"hits", "misses", "compiles", "compile_failures", "corrupt",
                                     "untrusted", "evicted", "memory_hits", "disk_hits"};

std::atomic<uint64_t>* counterArray(Counters& c, int i) {
  std::atomic<uint64_t>* a[] = {&c.hits,    &c.misses,    &c.compiles,   &c.compileFailures, &c.corrupt,
                                &c.untrusted, &c.evicted, &c.memoryHits, &c.diskHits};
  return a[i];
}
constexpr int kNumCounters = 9;

// Closes the directory fd (releasing its shared flock) when the last
// reference goes away.
struct EntryHold {
  UniqueFd fd;
};

// Result of checking one on-disk entry.
enum class EntryState { Absent, Ok, Corrupt, Untrusted };
struct EntryCheck {
  EntryState state = EntryState::Absent;
  std::string problem;
  nlohmann::json manifest;
  std::shared_ptr<std::string> bytes;
  std::string sha;
  UniqueFd dirFd;        // open, flock'ed shared when Ok
  struct stat dirStat {};
};

}  // namespace

struct Cache::Impl {
  CacheConfig cfg;
  fs::path requested;
  fs::path root;
  bool disk = true;
  bool privateFallback = false;
  fs::path privateTemp;  // memory-only staging / untrusted fallback (removed at exit)
  std::mutex privateTempMutex;
  uint64_t maxBytes = 0;
  std::string fault;

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

  Counters pending;  // not yet merged into stats.json
  std::mutex flushMutex;
  std::chrono::steady_clock::time_point lastFlush{};
  std::atomic<uint64_t> uniq{0};

  fs::path entriesDir() const { return root / "entries"; }
  fs::path tmpDir() const { return root / "tmp"; }
  fs::path locksDir() const { return root / "locks"; }
  fs::path quarantineDir() const { return root / "quarantine"; }
  fs::path entryDir(std::string_view key) const {
    return entriesDir() / std::string(key.substr(0, 2)) / std::string(key);
  }

  // ---- setup -------------------------------------------------------------

  Status makePrivateTemp(fs::path& out) {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = fmt::format("{}/superkernel-cache-XXXXXX", t && *t ? t : "/tmp");
    if (!::mkdtemp(tmpl.data())) return ioError(fmt::format("cannot create a private temp dir: {}", errnoText(errno)));
    ::chmod(tmpl.c_str(), 0700);
    out = tmpl;
    return Status::success();
  }

  // Create root and its subdirectories (0700) and check their trust.
  std::string prepareRoot(const fs::path& r) {
    std::error_code ec;
    struct stat st;
    if (::lstat(r.c_str(), &st) != 0) {
      if (errno != ENOENT) return fmt::format("cannot stat: {}", errnoText(errno));
      fs::create_directories(r.parent_path(), ec);
      if (::mkdir(r.c_str(), 0700) != 0 && errno != EEXIST)
        return fmt::format("cannot create it: {}", errnoText(errno));
    }
    if (std::string p = trustProblem(r); !p.empty()) return p;
    for (const char* sub : {"entries", "tmp", "locks", "quarantine"}) {
      fs::path d = r / sub;
      if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) return fmt::format("cannot create {}: {}", sub, errnoText(errno));
      if (std::string p = trustProblem(d); !p.empty()) return fmt::format("{}/: {}", sub, p);
    }
    return {};
  }

  // ---- counters ----------------------------------------------------------

  void count(std::atomic<uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

  // Merge pending deltas into <root>/stats.json under <root>/stats.lock.
  void flush(bool force) {
    if (!disk || cfg.readOnly) return;
    std::lock_guard<std::mutex> g(flushMutex);
    auto now = std::chrono::steady_clock::now();
    if (!force && now - lastFlush < std::chrono::milliseconds(200)) return;
    lastFlush = now;
    uint64_t delta[kNumCounters];
    bool any = false;
    for (int i = 0; i < kNumCounters; ++i) {
      delta[i] = counterArray(pending, i)->exchange(0);
      any |= delta[i] != 0;
    }
    if (!any) return;
    auto restore = [&] {
      for (int i = 0; i < kNumCounters; ++i) counterArray(pending, i)->fetch_add(delta[i]);
    };
    UniqueFd lock(::open((root / "stats.lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) {
      restore();
      return;
    }
    nlohmann::json j = readStatsFile();
    for (int i = 0; i < kNumCounters; ++i) {
      uint64_t old = j.contains(kCounterNames[i]) && j[kCounterNames[i]].is_number_unsigned()
                         ? j[kCounterNames[i]].get<uint64_t>()
                         : 0;
      j[kCounterNames[i]] = old + delta[i];
    }
    fs::path tmp = root / fmt::format("stats.json.{}.tmp", ::getpid());
    ::unlink(tmp.c_str());
    Status st = detail::writeNewFile(tmp, j.dump(2) + "\n", 0600, false);
    if (!st || ::rename(tmp.c_str(), (root / "stats.json").c_str()) != 0) {
      ::unlink(tmp.c_str());
      restore();
    }
  }

  nlohmann::json readStatsFile() const {
    UniqueFd fd(::open((root / "stats.json").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return nlohmann::json::object();
    auto text = detail::readAllFd(fd.get(), "stats.json");
    if (!text) return nlohmann::json::object();
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return nlohmann::json::object();
    return j;
  }

  // ---- entry checks ------------------------------------------------------

  // Open, lock (shared) and verify the entry of `key`. With wantBytes the
  // artifact is read and hashed (always done for loads and verify).
  EntryCheck checkEntry(std::string_view key, std::string_view kind, bool touch) {
    EntryCheck r;
    fs::path dir = entryDir(key);
    r.dirFd = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!r.dirFd.valid()) {
      if (errno == ENOENT) return r;
      r.state = (errno == ELOOP || errno == ENOTDIR) ? EntryState::Untrusted : EntryState::Corrupt;
      r.problem = fmt::format("cannot open entry directory: {}", errnoText(errno));
      return r;
    }
    // Shared lock: eviction (exclusive, non-blocking) skips us from here on.
    while (::flock(r.dirFd.get(), LOCK_SH) != 0 && errno == EINTR) {
    }
    struct stat now;
    if (::fstat(r.dirFd.get(), &r.dirStat) != 0 || ::lstat(dir.c_str(), &now) != 0 ||
        now.st_ino != r.dirStat.st_ino || now.st_dev != r.dirStat.st_dev) {
      r.dirFd.reset();  // evicted or replaced while we waited
      return r;
    }
    if (r.dirStat.st_uid != ::geteuid() || (r.dirStat.st_mode & (S_IWGRP | S_IWOTH))) {
      r.state = EntryState::Untrusted;
      r.problem = fmt::format("entry directory owner/mode not trusted (uid {}, mode {:04o})", r.dirStat.st_uid,
                              r.dirStat.st_mode & 07777);
      return r;
    }
    auto fail = [&](EntryState s, std::string why) {
      r.state = s;
      r.problem = std::move(why);
      return std::move(r);
    };
    // manifest
    UniqueFd mfd(::openat(r.dirFd.get(), kManifest, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!mfd.valid()) {
      if (errno == ELOOP) return fail(EntryState::Untrusted, "manifest.json is a symbolic link");
      return fail(EntryState::Corrupt, fmt::format("manifest.json: {}", errnoText(errno)));
    }
    struct stat mst;
    if (::fstat(mfd.get(), &mst) != 0) return fail(EntryState::Corrupt, "manifest.json: cannot stat");
    if (std::string p = fileTrustProblem(mst); !p.empty()) return fail(EntryState::Untrusted, "manifest.json: " + p);
    auto mtext = detail::readAllFd(mfd.get(), "manifest.json");
    if (!mtext) return fail(EntryState::Corrupt, mtext.error().message());
    r.manifest = nlohmann::json::parse(*mtext, nullptr, false);
    if (r.manifest.is_discarded() || !r.manifest.is_object())
      return fail(EntryState::Corrupt, "manifest.json is not a JSON object");
    auto str = [&](const char* f) -> std::string {
      auto it = r.manifest.find(f);
      return it != r.manifest.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (str("key") != key) return fail(EntryState::Corrupt, "manifest key does not match the entry");
    if (!kind.empty() && str("kind") != kind)
      return fail(EntryState::Corrupt, fmt::format("entry kind '{}' is not the requested '{}'", str("kind"), kind));
    std::string artifact = str("artifact");
    if (!validArtifactName(artifact)) return fail(EntryState::Corrupt, "manifest names no valid artifact");
    auto sizeIt = r.manifest.find("size");
    if (sizeIt == r.manifest.end() || !sizeIt->is_number_unsigned())
      return fail(EntryState::Corrupt, "manifest has no artifact size");
    // artifact
    UniqueFd afd(::openat(r.dirFd.get(), artifact.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!afd.valid()) {
      if (errno == ELOOP) return fail(EntryState::Untrusted, artifact + " is a symbolic link");
      return fail(EntryState::Corrupt, fmt::format("{}: {}", artifact, errnoText(errno)));
    }
    struct stat ast;
    if (::fstat(afd.get(), &ast) != 0) return fail(EntryState::Corrupt, artifact + ": cannot stat");
    if (std::string p = fileTrustProblem(ast); !p.empty()) return fail(EntryState::Untrusted, artifact + ": " + p);
    auto bytes = detail::readAllFd(afd.get(), artifact);
    if (!bytes) return fail(EntryState::Corrupt, bytes.error().message());
    if (bytes->size() != sizeIt->get<uint64_t>())
      return fail(EntryState::Corrupt, fmt::format("{} has {} bytes, the manifest says {}", artifact, bytes->size(),
                                                   sizeIt->get<uint64_t>()));
    std::string sha = sha256Hex(*bytes);
    if (sha != str("sha256")) return fail(EntryState::Corrupt, fmt::format("{}: SHA-256 mismatch", artifact));
    if (touch) {
      int lfd = ::openat(r.dirFd.get(), kLastUse, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (lfd >= 0) {
        ::futimens(lfd, nullptr);
        ::close(lfd);
      }
    }
    r.state = EntryState::Ok;
    r.sha = std::move(sha);
    r.bytes = std::make_shared<std::string>(std::move(*bytes));
    return r;
  }

  // Move a bad entry aside (never deletes what it cannot identify).
  void quarantine(std::string_view key, const std::string& why, EntryState state) {
    count(state == EntryState::Untrusted ? pending.untrusted : pending.corrupt);
    fs::path dir = entryDir(key);
    fs::path dest = quarantineDir() / fmt::format("{}.{}.{}.{}", key, ::getpid(), nowSeconds(), uniq.fetch_add(1));
    spdlog::warn("cache entry {} is {} ({}); moved to {} and rebuilt", key,
                 state == EntryState::Untrusted ? "untrusted" : "corrupt", why, dest.string());
    if (::rename(dir.c_str(), dest.c_str()) != 0 && errno != ENOENT) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  }

  // Load a verified entry into an Artifact; nullptr when absent or bad.
  Expected<ArtifactPtr> loadFromDisk(std::string_view key, std::string_view kind, bool load) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      EntryCheck c = checkEntry(key, kind, !cfg.readOnly);
      if (c.state == EntryState::Absent) return ArtifactPtr();
      if (c.state != EntryState::Ok) {
        c.dirFd.reset();
        if (cfg.readOnly) return ArtifactPtr();  // reported by verifyIntegrity, rebuilt in memory
        quarantine(key, c.problem, c.state);
        return ArtifactPtr();
      }
      auto a = std::make_shared<Artifact>();
      a->key = std::string(key);
      a->kind = c.manifest.value("kind", std::string());
      a->origin = Artifact::Origin::Disk;
      a->sha256 = c.sha;
      a->bytes = c.bytes;
      a->manifest = std::move(c.manifest);
      a->entryDir = entryDir(key);
      if (load) {
        auto lib = LoadedLibrary::fromBytes(*a->bytes, std::string(key));
        if (!lib) {
          c.dirFd.reset();
          if (cfg.readOnly) return std::move(lib).error();
          quarantine(key, lib.error().message(), EntryState::Corrupt);
          if (attempt == 0) continue;
          return std::move(lib).error();
        }
        a->library = *lib;
        auto hold = std::make_shared<EntryHold>();
        hold->fd = std::move(c.dirFd);
        a->hold = hold;
      }
      return ArtifactPtr(std::move(a));
    }
    return ArtifactPtr();
  }

  // ---- per-key process lock ----------------------------------------------

  UniqueFd lockKey(std::string_view key) {
    fs::path p = locksDir() / (std::string(key) + ".lock");
    UniqueFd fd(::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) {
      spdlog::warn("cannot open lock file {}: {}; building without it", p.string(), errnoText(errno));
      return fd;
    }
    auto deadline = std::chrono::steady_clock::now() + cfg.lockWait;
    auto sleep = std::chrono::milliseconds(2);
    while (true) {
      if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return fd;
      if (errno != EWOULDBLOCK && errno != EINTR) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        spdlog::warn("waited {} ms for another process building cache key {}; building anyway",
                     cfg.lockWait.count(), key);
        return UniqueFd();
      }
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::milliseconds(50));
    }
    return UniqueFd();
  }

  // ---- staging and publishing --------------------------------------------

  // A fresh build dir: <root>/tmp/<key>.<pid>.XXXXXX (flock'ed), or a
  // private one when the store cannot take it (then nothing is published).
  Status makeStaging(std::string_view key, fs::path& dir, UniqueFd& lock, bool& publishable) {
    publishable = false;
    if (disk && !cfg.readOnly) {
      std::string tmpl = (tmpDir() / fmt::format("{}.{}.XXXXXX", key.substr(0, 16), ::getpid())).string();
      if (::mkdtemp(tmpl.data())) {
        dir = tmpl;
        lock = UniqueFd(::open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (lock.valid()) ::flock(lock.get(), LOCK_EX);
        publishable = true;
        return Status::success();
      }
      spdlog::warn("cannot create a build dir in {}: {}; building outside the cache", tmpDir().string(),
                   errnoText(errno));
    }
    {
      std::lock_guard<std::mutex> g(privateTempMutex);
      if (privateTemp.empty()) SK_RETURN_IF_ERROR(makePrivateTemp(privateTemp));
    }
    std::string tmpl = (privateTemp / fmt::format("{}.XXXXXX", key.substr(0, 16))).string();
    if (!::mkdtemp(tmpl.data())) return ioError(fmt::format("cannot create a build dir: {}", errnoText(errno)));
    dir = tmpl;
    return Status::success();
  }

  Status publish(std::string_view key, const fs::path& staging, const std::string& artifactName,
                 const nlohmann::json& manifest) {
    // Keep only the artifact: drop the build's scratch files.
    std::error_code ec;
    for (auto& e : fs::directory_iterator(staging, ec)) {
      if (e.path().filename() != artifactName) fs::remove_all(e.path(), ec);
    }
    fs::path art = staging / artifactName;
    {
      UniqueFd fd(::open(art.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      struct stat st;
      if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return ioError("cannot reopen the artifact");
      ::fchmod(fd.get(), st.st_mode & 0755);
      if (::fsync(fd.get()) != 0) return ioError(fmt::format("fsync of the artifact failed: {}", errnoText(errno)));
    }
    if (fault == "write") return ioError("injected write failure (SK_CACHE_FAULT=write): No space left on device");
    SK_RETURN_IF_ERROR(detail::writeNewFile(staging / kLastUse, "", 0600, false));
    SK_RETURN_IF_ERROR(detail::writeNewFile(staging / kManifest, manifest.dump(2) + "\n", 0644, true));
    SK_RETURN_IF_ERROR(detail::fsyncDir(staging));
    ::chmod(staging.c_str(), 0700);
    fs::path parent = entriesDir() / std::string(key.substr(0, 2));
    if (::mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST)
      return ioError(fmt::format("cannot create {}: {}", parent.string(), errnoText(errno)));
    fs::path final = parent / std::string(key);
    if (::rename(staging.c_str(), final.c_str()) != 0) {
      if (errno == EEXIST || errno == ENOTEMPTY) {
        // Another process published the same key meanwhile: keep theirs.
        fs::remove_all(staging, ec);
        return Status::success();
      }
      return ioError(fmt::format("cannot publish {}: {}", final.string(), errnoText(errno)));
    }
    (void)detail::fsyncDir(parent);
    return Status::success();
  }

  // ---- build -------------------------------------------------------------

  Expected<ArtifactPtr> build(const CacheRequest& req) {
    count(pending.misses);
    fs::path staging;
    UniqueFd stagingLock;
    bool publishable = false;
    SK_RETURN_IF_ERROR(makeStaging(req.key, staging, stagingLock, publishable));
    std::error_code ec;
    auto cleanup = [&] {
      if (!staging.empty()) fs::remove_all(staging, ec);
    };
    Expected<BuildOutput> out = internalError("no build function");
    if (req.build) {
      try {
        out = req.build(staging);
      } catch (const std::exception& e) {
        out = internalError(fmt::format("build of {} threw: {}", req.key, e.what()));
      }
    }
    if (!out) {
      count(pending.compileFailures);
      cleanup();
      return std::move(out).error();
    }
    count(pending.compiles);
    if (!validArtifactName(out->artifactName)) {
      cleanup();
      return internalError(fmt::format("build of {} named an invalid artifact '{}'", req.key, out->artifactName));
    }
    fs::path art = staging / out->artifactName;
    UniqueFd afd(::open(art.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!afd.valid()) {
      cleanup();
      return compileError(fmt::format("the build produced no {}", art.string()));
    }
    auto bytes = detail::readAllFd(afd.get(), art.string());
    afd.reset();
    if (!bytes) {
      cleanup();
      return std::move(bytes).error();
    }
    auto a = std::make_shared<Artifact>();
    a->key = req.key;
    a->kind = req.kind;
    a->origin = Artifact::Origin::Built;
    a->sha256 = sha256Hex(*bytes);
    a->bytes = std::make_shared<const std::string>(std::move(*bytes));
    nlohmann::json m;
    m["format"] = "superkernel.cache-entry";
    m["schema"] = kCacheKeySchemaVersion;
    m["key"] = req.key;
    m["kind"] = req.kind;
    m["artifact"] = out->artifactName;
    m["sha256"] = a->sha256;
    m["size"] = static_cast<uint64_t>(a->bytes->size());
    m["toolchain"] = out->toolchain;
    m["command"] = out->command;
    m["created"] = nowSeconds();
    m["library_version"] = libraryVersion();
    m["metadata"] = out->metadata;
    a->manifest = m;

    if (publishable) {
      Status st = publish(req.key, staging, out->artifactName, m);
      if (st) {
        staging.clear();
        a->entryDir = entryDir(req.key);
      } else {
        spdlog::warn("could not store cache entry {}: {}; nothing published, using the build from memory", req.key,
                     st.error().message());
      }
    }
    cleanup();
    stagingLock.reset();
    if (req.load) {
      auto lib = LoadedLibrary::fromBytes(*a->bytes, req.key);
      if (!lib) return std::move(lib).error();
      a->library = *lib;
      if (!a->entryDir.empty()) {
        auto hold = std::make_shared<EntryHold>();
        hold->fd = UniqueFd(::open(a->entryDir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (hold->fd.valid()) {
          ::flock(hold->fd.get(), LOCK_SH);
          a->hold = hold;
        }
      }
    }
    if (!a->entryDir.empty() && maxBytes > 0) {
      auto r = evict(maxBytes, req.key);
      (void)r;
    }
    return ArtifactPtr(std::move(a));
  }

  // Memory miss: disk, then (under the per-key lock) disk again, then build.
  Expected<ArtifactPtr> resolve(const CacheRequest& req) {
    if (!disk) return build(req);
    auto finish = [&](Expected<ArtifactPtr> r, bool force) {
      flush(force);
      return r;
    };
    {
      auto hit = loadFromDisk(req.key, req.kind, req.load);
      if (!hit) return finish(std::move(hit).error(), true);
      if (*hit) {
        count(pending.hits);
        count(pending.diskHits);
        return finish(std::move(*hit), false);
      }
    }
    if (cfg.readOnly) return finish(build(req), false);
    UniqueFd keyLock = lockKey(req.key);
    {
      auto hit = loadFromDisk(req.key, req.kind, req.load);
      if (!hit) return finish(std::move(hit).error(), true);
      if (*hit) {
        count(pending.hits);
        count(pending.diskHits);
        return finish(std::move(*hit), false);
      }
    }
    auto r = build(req);
    keyLock.reset();
    return finish(std::move(r), true);
  }

  // Give an artifact a library (a hit on something first built with load=false).
  Expected<ArtifactPtr> withLibrary(const ArtifactPtr& a) {
    auto lib = LoadedLibrary::fromBytes(*a->bytes, a->key);
    if (!lib) return std::move(lib).error();
    auto copy = std::make_shared<Artifact>(*a);
    copy->library = *lib;
    if (!copy->entryDir.empty()) {
      auto hold = std::make_shared<EntryHold>();
      hold->fd = UniqueFd(::open(copy->entryDir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (hold->fd.valid()) {
        ::flock(hold->fd.get(), LOCK_SH);
        copy->hold = hold;
      }
    }
    ArtifactPtr p = copy;
    std::unique_lock<std::shared_mutex> lk(mapMutex);
    auto it = ready.find(a->key);
    if (it != ready.end() && it->second->library) return it->second;
    ready[a->key] = p;
    return p;
  }

  // ---- scanning, eviction ------------------------------------------------

  struct Scanned {
    CacheEntryInfo info;
    bool complete = false;
  };

  std::vector<Scanned> scan() const {
    std::vector<Scanned> out;
    std::error_code ec;
    for (auto& shard : fs::directory_iterator(entriesDir(), ec)) {
      std::error_code ec2;
      if (!shard.is_directory(ec2) || shard.is_symlink(ec2)) continue;
      for (auto& e : fs::directory_iterator(shard.path(), ec2)) {
        std::error_code ec3;
        if (e.is_symlink(ec3) || !e.is_directory(ec3)) continue;
        Scanned s;
        s.info.key = e.path().filename().string();
        s.info.dir = e.path();
        for (auto& f : fs::directory_iterator(e.path(), ec3)) {
          std::error_code ec4;
          if (f.is_regular_file(ec4)) s.info.bytes += f.file_size(ec4);
        }
        struct stat st;
        if (::lstat((e.path() / kLastUse).c_str(), &st) == 0 || ::lstat(e.path().c_str(), &st) == 0)
          s.info.lastUse = st.st_mtim.tv_sec;
        UniqueFd mfd(::open((e.path() / kManifest).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (mfd.valid()) {
          auto text = detail::readAllFd(mfd.get(), "manifest");
          if (text) {
            auto j = nlohmann::json::parse(*text, nullptr, false);
            if (j.is_object()) {
              s.complete = true;
              s.info.kind = j.value("kind", std::string());
              s.info.artifactName = j.value("artifact", std::string());
              s.info.created = j.value("created", int64_t{0});
            }
          }
        }
        out.push_back(std::move(s));
      }
    }
    return out;
  }

  // Remove one entry unless a live process holds it. true if removed.
  bool removeEntry(const fs::path& dir, const std::string& key) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return false;
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return false;
    fs::path trash = quarantineDir() / fmt::format(".evict.{}.{}.{}", key, ::getpid(), uniq.fetch_add(1));
    if (::rename(dir.c_str(), trash.c_str()) != 0) return false;
    std::error_code ec;
    fs::remove_all(trash, ec);
    return true;
  }

  GcResult evict(uint64_t limit, std::string_view keep) {
    GcResult r;
    auto all = scan();
    uint64_t total = 0;
    for (auto& s : all) total += s.info.bytes;
    std::sort(all.begin(), all.end(), [](const Scanned& a, const Scanned& b) {
      if (a.info.lastUse != b.info.lastUse) return a.info.lastUse < b.info.lastUse;
      return a.info.key < b.info.key;
    });
    for (auto& s : all) {
      if (total <= limit) break;
      if (s.info.key == keep) continue;
      if (removeEntry(s.info.dir, s.info.key)) {
        ++r.removedEntries;
        r.removedBytes += s.info.bytes;
        total -= s.info.bytes;
        count(pending.evicted);
      } else {
        ++r.skippedHeld;
      }
    }
    r.remainingBytes = total;
    r.remainingEntries = all.size() - r.removedEntries;
    return r;
  }

  // Temp build dirs whose builder is gone (unlocked) and older than maxAge.
  void cleanStaleTemps(std::chrono::seconds maxAge) {
    std::error_code ec;
    int64_t now = nowSeconds();
    for (auto& e : fs::directory_iterator(tmpDir(), ec)) {
      UniqueFd fd(::open(e.path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!fd.valid()) continue;
      struct stat st;
      if (::fstat(fd.get(), &st) != 0 || now - st.st_mtim.tv_sec < maxAge.count()) continue;
      if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its builder is alive
      std::error_code ec2;
      fs::remove_all(e.path(), ec2);
      spdlog::debug("removed stale cache build dir {}", e.path().string());
    }
  }

  void cleanQuarantine() {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(quarantineDir(), ec)) {
      std::error_code ec2;
      fs::remove_all(e.path(), ec2);
    }
  }
};

// ---------------------------------------------------------------------------

Cache::Cache() : impl_(std::make_unique<Impl>()) {}

Cache::~Cache() {
  impl_->flush(true);
  {
    std::unique_lock<std::shared_mutex> lk(impl_->mapMutex);
    impl_->ready.clear();
  }
  std::error_code ec;
  if (!impl_->privateTemp.empty()) fs::remove_all(impl_->privateTemp, ec);
}

Expected<std::shared_ptr<Cache>> Cache::open(const CacheConfig& config) {
  initLogging();
  std::shared_ptr<Cache> c(new Cache());
  Impl& d = *c->impl_;
  d.cfg = config;
  d.disk = config.disk;
  d.fault = config.fault;
  if (d.fault.empty()) {
    if (const char* f = std::getenv("SK_CACHE_FAULT"); f && *f) d.fault = f;
  }
  if (config.maxBytes) {
    d.maxBytes = *config.maxBytes;
  } else if (const char* m = std::getenv("SK_CACHE_MAX_SIZE"); m && *m) {
    auto v = parseSize(m);
    if (!v) return Error(v.error()).context("SK_CACHE_MAX_SIZE");
    d.maxBytes = *v;
  } else {
    d.maxBytes = uint64_t{4} << 30;
  }
  if (!d.disk) return c;

  if (!config.root.empty()) {
    std::error_code ec;
    d.requested = fs::absolute(config.root, ec).lexically_normal();
    if (ec) return ioError(fmt::format("cache dir {}: {}", config.root.string(), ec.message()));
  } else {
    SK_ASSIGN_OR_RETURN(d.requested, defaultCacheRoot());
  }
  // A trailing separator would make lstat follow a final symlink.
  if (d.requested.filename().empty()) d.requested = d.requested.parent_path();
  d.root = d.requested;
  if (config.readOnly) {
    // Trust is checked as for any root, but nothing is created or cleaned:
    // a root that does not exist is an empty store.
    struct stat st;
    if (::lstat(d.root.c_str(), &st) == 0) {
      if (std::string p = trustProblem(d.root); !p.empty())
        return badInput(fmt::format("cache directory {} is not trusted: {}", d.root.string(), p));
    }
    return c;
  }
  std::string problem = d.prepareRoot(d.root);
  if (!problem.empty()) {
    fs::path priv;
    SK_RETURN_IF_ERROR(d.makePrivateTemp(priv));
    spdlog::warn(
        "cache directory {} is not trusted: {}. Not loading from it; using a private temporary cache {} for this "
        "process instead (fix: chmod 700 it, or set SK_CACHE_DIR to a directory only you can write)",
        d.requested.string(), problem, priv.string());
    d.root = priv;
    d.privateTemp = priv;
    d.privateFallback = true;
    if (std::string p2 = d.prepareRoot(d.root); !p2.empty())
      return ioError(fmt::format("cannot set up the private cache {}: {}", priv.string(), p2));
    d.count(d.pending.untrusted);
  }
  d.cleanStaleTemps(config.staleTempAge);
  return c;
}

Expected<ArtifactPtr> Cache::getOrBuild(const CacheRequest& req) {
  Impl& d = *impl_;
  {
    std::shared_lock<std::shared_mutex> lk(d.mapMutex);
    auto it = d.ready.find(req.key);
    if (it != d.ready.end() && (!req.load || it->second->library)) {
      d.count(d.pending.hits);
      d.count(d.pending.memoryHits);
      return it->second;
    }
  }
  if (!isValidCacheKey(req.key)) return internalError(fmt::format("invalid cache key '{}'", req.key));
  if (!validKind(req.kind)) return internalError(fmt::format("invalid cache entry kind '{}'", req.kind));

  std::shared_ptr<Impl::Flight> flight;
  bool leader = false;
  ArtifactPtr readyNoLib;
  {
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    auto it = d.ready.find(req.key);
    if (it != d.ready.end()) {
      if (!req.load || it->second->library) {
        d.count(d.pending.hits);
        d.count(d.pending.memoryHits);
        return it->second;
      }
      readyNoLib = it->second;
    } else {
      auto f = d.flights.find(req.key);
      if (f != d.flights.end()) {
        flight = f->second;
      } else {
        flight = std::make_shared<Impl::Flight>();
        d.flights.emplace(req.key, flight);
        leader = true;
      }
    }
  }
  if (readyNoLib) {
    d.count(d.pending.hits);
    d.count(d.pending.memoryHits);
    return d.withLibrary(readyNoLib);
  }
  if (!leader) {
    std::unique_lock<std::mutex> fl(flight->m);
    flight->cv.wait(fl, [&] { return flight->done; });
    if (flight->error) return *flight->error;
    ArtifactPtr v = flight->value;
    fl.unlock();
    d.count(d.pending.hits);
    d.count(d.pending.memoryHits);
    if (req.load && !v->library) return d.withLibrary(v);
    return v;
  }

  Expected<ArtifactPtr> r = internalError("unreachable");
  try {
    r = d.resolve(req);
  } catch (const std::exception& e) {
    r = internalError(fmt::format("cache: {}", e.what()));
  }
  {
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    d.flights.erase(req.key);
    if (r) d.ready[req.key] = *r;
  }
  {
    std::lock_guard<std::mutex> fl(flight->m);
    flight->done = true;
    if (r) flight->value = *r;
    else flight->error = r.error();
  }
  flight->cv.notify_all();
  return r;
}

Expected<ArtifactPtr> Cache::lookup(std::string_view key, std::string_view kind, bool load) {
  Impl& d = *impl_;
  if (ArtifactPtr a = findInMemory(key)) {
    d.count(d.pending.hits);
    d.count(d.pending.memoryHits);
    if (load && !a->library) return d.withLibrary(a);
    return a;
  }
  if (!d.disk || !isValidCacheKey(key)) return ArtifactPtr();
  SK_ASSIGN_OR_RETURN(ArtifactPtr a, d.loadFromDisk(key, kind, load));
  if (a) {
    d.count(d.pending.hits);
    d.count(d.pending.diskHits);
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    auto [it, inserted] = d.ready.emplace(std::string(key), a);
    if (!inserted && (!load || it->second->library)) a = it->second;
    else it->second = a;
  }
  d.flush(false);
  return a;
}

ArtifactPtr Cache::findInMemory(std::string_view key) const {
  std::shared_lock<std::shared_mutex> lk(impl_->mapMutex);
  auto it = impl_->ready.find(key);
  return it == impl_->ready.end() ? ArtifactPtr() : it->second;
}

const fs::path& Cache::root() const { return impl_->root; }
const fs::path& Cache::requestedRoot() const { return impl_->requested; }
bool Cache::usingPrivateFallback() const { return impl_->privateFallback; }
bool Cache::diskEnabled() const { return impl_->disk; }
uint64_t Cache::maxBytes() const { return impl_->maxBytes; }
void Cache::flushStats() { impl_->flush(true); }

nlohmann::json CacheStats::toJson() const {
  return nlohmann::json{{"hits", hits},
                        {"misses", misses},
                        {"compiles", compiles},
                        {"compile_failures", compileFailures},
                        {"corrupt", corrupt},
                        {"untrusted", untrusted},
                        {"evicted", evicted},
                        {"entries", entries},
                        {"bytes", bytes},
                        {"memory_hits", memoryHits},
                        {"disk_hits", diskHits},
                        {"root", root.string()}};
}

Expected<CacheStats> Cache::stats() {
  Impl& d = *impl_;
  d.flush(true);
  nlohmann::json j = d.disk ? d.readStatsFile() : nlohmann::json::object();
  uint64_t v[kNumCounters];
  for (int i = 0; i < kNumCounters; ++i) {
    uint64_t persisted = j.contains(kCounterNames[i]) && j[kCounterNames[i]].is_number_unsigned()
                             ? j[kCounterNames[i]].get<uint64_t>()
                             : 0;
    v[i] = persisted + counterArray(d.pending, i)->load();
  }
  CacheStats s;
  s.hits = v[0];
  s.misses = v[1];
  s.compiles = v[2];
  s.compileFailures = v[3];
  s.corrupt = v[4];
  s.untrusted = v[5];
  s.evicted = v[6];
  s.memoryHits = v[7];
  s.diskHits = v[8];
  s.root = d.root;
  if (d.disk) {
    for (auto& e : d.scan()) {
      if (!e.complete) continue;
      ++s.entries;
      s.bytes += e.info.bytes;
    }
  }
  return s;
}

Expected<std::vector<CacheEntryInfo>> Cache::list() const {
  std::vector<CacheEntryInfo> out;
  if (!impl_->disk) return out;
  for (auto& e : impl_->scan())
    if (e.complete) out.push_back(std::move(e.info));
  std::sort(out.begin(), out.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    if (a.lastUse != b.lastUse) return a.lastUse > b.lastUse;
    return a.key < b.key;
  });
  return out;
}

Expected<nlohmann::json> Cache::inspect(std::string_view key) const {
  if (key.size() < 4 || key.size() > 64 ||
      !std::all_of(key.begin(), key.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return badInput(fmt::format("'{}' is not a cache key (64 hex digits, or a unique prefix of at least 4)", key));
  std::string lower(key);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<fs::path> matches;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(impl_->entriesDir() / lower.substr(0, 2), ec)) {
    if (e.path().filename().string().rfind(lower, 0) == 0) matches.push_back(e.path());
  }
  if (matches.empty()) return badInput(fmt::format("no cache entry {} in {}", key, impl_->root.string()));
  if (matches.size() > 1) return badInput(fmt::format("cache key prefix {} is ambiguous ({} entries)", key, matches.size()));
  UniqueFd fd(::open((matches[0] / kManifest).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return ioError(fmt::format("cache entry {} has no readable manifest", matches[0].filename().string()));
  SK_ASSIGN_OR_RETURN(std::string text, detail::readAllFd(fd.get(), "manifest"));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return ioError(fmt::format("cache entry {}: manifest is not JSON", matches[0].filename().string()));
  return j;
}

Expected<IntegrityReport> Cache::verifyIntegrity(bool quarantineBad) {
  Impl& d = *impl_;
  IntegrityReport rep;
  if (!d.disk) return rep;
  for (auto& s : d.scan()) {
    IntegrityItem item;
    item.info = s.info;
    if (!isValidCacheKey(s.info.key) || s.info.dir.parent_path().filename() != s.info.key.substr(0, 2)) {
      item.problem = "not a cache key directory";
    } else {
      EntryCheck c = d.checkEntry(s.info.key, "", false);
      item.manifest = c.manifest.is_discarded() ? nlohmann::json() : c.manifest;
      if (c.state == EntryState::Ok) {
        item.ok = true;
      } else if (c.state == EntryState::Absent) {
        continue;  // removed meanwhile
      } else {
        item.problem = c.problem;
        if (quarantineBad) {
          c.dirFd.reset();
          d.quarantine(s.info.key, c.problem, c.state);
        }
      }
    }
    if (!item.ok) ++rep.problems;
    rep.entries.push_back(std::move(item));
  }
  std::sort(rep.entries.begin(), rep.entries.end(),
            [](const IntegrityItem& a, const IntegrityItem& b) { return a.info.key < b.info.key; });
  d.flush(true);
  return rep;
}

Expected<GcResult> Cache::gc(uint64_t maxBytes) {
  Impl& d = *impl_;
  if (!d.disk) return GcResult{};
  d.cleanStaleTemps(d.cfg.staleTempAge);
  d.cleanQuarantine();
  GcResult r = d.evict(maxBytes, "");
  d.flush(true);
  return r;
}

Expected<GcResult> Cache::clear() {
  Impl& d = *impl_;
  {
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    d.ready.clear();
  }
  if (!d.disk) return GcResult{};
  GcResult r;
  for (auto& s : d.scan()) {
    if (d.removeEntry(s.info.dir, s.info.key)) {
      ++r.removedEntries;
      r.removedBytes += s.info.bytes;
    } else {
      ++r.skippedHeld;
      ++r.remainingEntries;
      r.remainingBytes += s.info.bytes;
    }
  }
  d.cleanStaleTemps(std::chrono::seconds(0));
  d.cleanQuarantine();
  std::error_code ec;
  for (auto& shard : fs::directory_iterator(d.entriesDir(), ec)) {
    std::error_code ec2;
    fs::remove(shard.path(), ec2);  // only if empty
  }
  return r;
}

}  // namespace sk
