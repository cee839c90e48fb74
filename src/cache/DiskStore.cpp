#include "cache/DiskStore.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "superkernel/cache/Trust.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Sha256.h"

namespace sk {
namespace fs = std::filesystem;
using detail::errnoText;
using detail::UniqueFd;

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

namespace cache {

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

namespace {
// Closes the directory fd (releasing its shared flock) when the last
// reference goes away.
struct EntryHold {
  UniqueFd fd;
};
}  // namespace

fs::path DiskStore::entryDir(std::string_view key) const {
  return entriesDir() / std::string(key.substr(0, 2)) / std::string(key);
}

std::string DiskStore::prepareRoot(const fs::path& r) {
  std::error_code ec;
  struct stat st;
  if (::lstat(r.c_str(), &st) != 0) {
    if (errno != ENOENT) return fmt::format("cannot stat: {}", errnoText(errno));
    fs::create_directories(r.parent_path(), ec);
    if (::mkdir(r.c_str(), 0700) != 0 && errno != EEXIST) return fmt::format("cannot create it: {}", errnoText(errno));
  }
  if (std::string p = directoryTrustProblem(r); !p.empty()) return p;
  for (const char* sub : {"entries", "tmp", "locks", "quarantine"}) {
    fs::path d = r / sub;
    if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) return fmt::format("cannot create {}: {}", sub, errnoText(errno));
    if (std::string p = directoryTrustProblem(d); !p.empty()) return fmt::format("{}/: {}", sub, p);
  }
  return {};
}

EntryCheck DiskStore::check(std::string_view key, std::string_view kind, bool touch) const {
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
  if (::fstat(r.dirFd.get(), &r.dirStat) != 0 || ::lstat(dir.c_str(), &now) != 0 || now.st_ino != r.dirStat.st_ino ||
      now.st_dev != r.dirStat.st_dev) {
    r.dirFd.reset();  // evicted or replaced while we waited
    return r;
  }
  if (std::string p = entryDirTrustProblem(r.dirStat); !p.empty()) {
    r.state = EntryState::Untrusted;
    r.problem = std::move(p);
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
    return fail(EntryState::Corrupt,
                fmt::format("{} has {} bytes, the manifest says {}", artifact, bytes->size(), sizeIt->get<uint64_t>()));
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

void DiskStore::quarantine(std::string_view key, const std::string& why, EntryState state) {
  Counters::count(state == EntryState::Untrusted ? counters_.untrusted : counters_.corrupt);
  fs::path dir = entryDir(key);
  fs::path dest = quarantineDir() / fmt::format("{}.{}.{}.{}", key, ::getpid(), nowSeconds(), uniq_.fetch_add(1));
  spdlog::warn("cache entry {} is {} ({}); moved to {} and rebuilt", key,
               state == EntryState::Untrusted ? "untrusted" : "corrupt", why, dest.string());
  if (::rename(dir.c_str(), dest.c_str()) != 0 && errno != ENOENT) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

UniqueFd DiskStore::lockKey(std::string_view key, std::chrono::milliseconds wait) const {
  fs::path p = locksDir() / (std::string(key) + ".lock");
  UniqueFd fd(::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    spdlog::warn("cannot open lock file {}: {}; building without it", p.string(), errnoText(errno));
    return fd;
  }
  auto deadline = std::chrono::steady_clock::now() + wait;
  auto sleep = std::chrono::milliseconds(2);
  while (true) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return fd;
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      spdlog::warn("waited {} ms for another process building cache key {}; building anyway", wait.count(), key);
      return UniqueFd();
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::milliseconds(50));
  }
  return UniqueFd();
}

bool DiskStore::makeStaging(std::string_view key, fs::path& dir, UniqueFd& lock) const {
  std::string tmpl = (tmpDir() / fmt::format("{}.{}.XXXXXX", key.substr(0, 16), ::getpid())).string();
  if (!::mkdtemp(tmpl.data())) {
    spdlog::warn("cannot create a build dir in {}: {}; building outside the cache", tmpDir().string(), errnoText(errno));
    return false;
  }
  dir = tmpl;
  lock = UniqueFd(::open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (lock.valid()) ::flock(lock.get(), LOCK_EX);
  return true;
}

Status DiskStore::publish(std::string_view key, const fs::path& staging, const std::string& artifactName,
                          const nlohmann::json& manifest, std::string_view fault) const {
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

std::shared_ptr<void> DiskStore::hold(std::string_view key) const {
  UniqueFd fd(::open(entryDir(key).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return nullptr;
  ::flock(fd.get(), LOCK_SH);
  return hold(std::move(fd));
}

std::shared_ptr<void> DiskStore::hold(UniqueFd lockedDirFd) {
  auto h = std::make_shared<EntryHold>();
  h->fd = std::move(lockedDirFd);
  return h;
}

std::vector<Scanned> DiskStore::scan() const {
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

bool DiskStore::removeEntry(const fs::path& dir, const std::string& key) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return false;
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return false;
  fs::path trash = quarantineDir() / fmt::format(".evict.{}.{}.{}", key, ::getpid(), uniq_.fetch_add(1));
  if (::rename(dir.c_str(), trash.c_str()) != 0) return false;
  std::error_code ec;
  fs::remove_all(trash, ec);
  return true;
}

GcResult DiskStore::evict(uint64_t limit, std::string_view keep) {
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
      Counters::count(counters_.evicted);
    } else {
      ++r.skippedHeld;
    }
  }
  r.remainingBytes = total;
  r.remainingEntries = all.size() - r.removedEntries;
  return r;
}

void DiskStore::cleanStaleTemps(std::chrono::seconds maxAge) const {
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

void DiskStore::cleanQuarantine() const {
  std::error_code ec;
  for (auto& e : fs::directory_iterator(quarantineDir(), ec)) {
    std::error_code ec2;
    fs::remove_all(e.path(), ec2);
  }
}

Expected<fs::path> DiskStore::findByPrefix(std::string_view key) const {
  if (key.size() < 4 || key.size() > 64 ||
      !std::all_of(key.begin(), key.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return badInput(fmt::format("'{}' is not a cache key (64 hex digits, or a unique prefix of at least 4)", key));
  std::string lower(key);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<fs::path> matches;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(entriesDir() / lower.substr(0, 2), ec)) {
    if (e.path().filename().string().rfind(lower, 0) == 0) matches.push_back(e.path());
  }
  if (matches.empty()) return badInput(fmt::format("no cache entry {} in {}", key, root_.string()));
  if (matches.size() > 1) return badInput(fmt::format("cache key prefix {} is ambiguous ({} entries)", key, matches.size()));
  return matches[0];
}

}  // namespace cache
}  // namespace sk
