// The cache's front: open, the memory map (single flight) and getOrBuild.
// The disk side is cache/DiskStore, the counters cache/Stats, the sk-cache
// operations Admin.cpp.
#include "superkernel/cache/Cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cache/CacheImpl.h"
#include "cache/DiskFull.h"
#include "support/JsonText.h"
#include "superkernel/cache/Trust.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace fs = std::filesystem;
using cache::Counters;
using cache::EntryState;
using detail::errnoText;
using detail::UniqueFd;

// ---------------------------------------------------------------------------
// Impl

Status Cache::Impl::makePrivateTemp(fs::path& out) {
  std::string tmpl = (detail::privateTempBase() / "superkernel-cache-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return ioError(fmt::format("cannot create a private temp dir: {}", errnoText(errno)));
  ::chmod(tmpl.c_str(), 0700);
  out = tmpl;
  return Status::success();
}

// A fresh build dir in the store (then publishable), or a private one when
// the store cannot take it (then nothing is published).
Status Cache::Impl::makeStaging(std::string_view key, fs::path& dir, UniqueFd& lock, bool& publishable) {
  publishable = false;
  if (store && !cfg.readOnly && !diskFull.load(std::memory_order_acquire)) {
    if (store->makeStaging(key, dir, lock)) {
      publishable = true;
      return Status::success();
    }
    if (const int err = errno; detail::isNoSpace(err)) enterDiskFull(errnoText(err));
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

// The cache's file system is full: say so once, count it, and build
// privately from now on (a full disk does not fail a build while the
// temporary directory has room).
void Cache::Impl::enterDiskFull(const std::string& why) {
  if (diskFull.exchange(true, std::memory_order_acq_rel)) return;
  Counters::count(pending.diskFull);
  spdlog::warn("cache {}: no space left ({}); this process builds into a private temporary cache in {} from now on "
               "and stores nothing (free space, or run sk-cache gc)",
               root.string(), why, detail::privateTempBase().string());
}

// A verified entry as an Artifact; nullptr when absent or bad (quarantined).
Expected<ArtifactPtr> Cache::Impl::loadFromDisk(std::string_view key, std::string_view kind, bool hold) {
  cache::EntryCheck c = store->check(key, kind, !cfg.readOnly);
  if (c.state == EntryState::Absent) return ArtifactPtr();
  if (c.state != EntryState::Ok) {
    c.dirFd.reset();
    if (cfg.readOnly) return ArtifactPtr();  // reported by verifyIntegrity; rebuilt in memory
    store->quarantine(key, c.problem, c.state);
    return ArtifactPtr();
  }
  auto a = std::make_shared<Artifact>();
  a->key = std::string(key);
  a->kind = c.manifest.value("kind", std::string());
  a->origin = Artifact::Origin::Disk;
  a->sha256 = c.sha;
  a->bytes = c.bytes;
  a->manifest = c.manifest.dump();
  a->entryDir = store->entryDir(key);
  if (hold) a->hold = cache::DiskStore::hold(std::move(c.dirFd));
  return ArtifactPtr(std::move(a));
}

Expected<ArtifactPtr> Cache::Impl::build(const CacheRequest& req) {
  Counters::count(pending.misses);
  spdlog::info("cache miss: building {} {}{}", req.kind, req.key.substr(0, 16), recompile ? " (forced recompile)" : "");
  fs::path staging;
  UniqueFd stagingLock;
  bool publishable = false;
  SK_RETURN_IF_ERROR(makeStaging(req.key, staging, stagingLock, publishable));
  std::error_code ec;
  auto cleanup = [&] {
    if (!staging.empty()) fs::remove_all(staging, ec);
  };
  Expected<BuildOutput> out = internalError("no build function");
  auto runBuild = [&] {
    if (!req.build) return;
    try {
      out = req.build(staging);
    } catch (const std::exception& e) {
      out = internalError(fmt::format("build of {} threw: {}", req.key, e.what()));
    }
  };
  runBuild();
  // Out of space: in the store, retry once in the private temporary
  // directory; there too (or already there), one I/O error that says so,
  // wherever in the build the space ran out (DiskFull.h).
  if (!out && detail::buildRanOutOfSpace(staging, out.error().message())) {
    if (publishable) {
      enterDiskFull(detail::firstLine(out.error().message()));
      cleanup();
      staging.clear();
      stagingLock.reset();
      SK_RETURN_IF_ERROR(makeStaging(req.key, staging, stagingLock, publishable));
      runBuild();
    }
    if (!out && detail::buildRanOutOfSpace(staging, out.error().message())) {
      Counters::count(pending.compileFailures);
      const std::string where = staging.parent_path().string();
      cleanup();
      return ioError(fmt::format("no space left on device to build {} (in {}{}): {}; free space, or set TMPDIR to "
                                 "a directory with room",
                                 req.key.substr(0, 16), where, store ? " and the cache " + root.string() : "",
                                 detail::firstLine(out.error().message())));
    }
  }
  if (!out) {
    Counters::count(pending.compileFailures);
    cleanup();
    return std::move(out).error();
  }
  // The build's metadata is JSON text (Cache.h): text that is not JSON
  // fails this build like a build error would.
  auto metadata = detail::parseJsonText(out->metadata, fmt::format("the metadata of the build of {}", req.key));
  if (!metadata) {
    Counters::count(pending.compileFailures);
    cleanup();
    return std::move(metadata).error();
  }
  Counters::count(pending.compiles);
  if (!cache::validArtifactName(out->artifactName)) {
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
  m["created"] = cache::nowSeconds();
  m["library_version"] = libraryVersion();
  m["metadata"] = std::move(*metadata);
  if (!out->keyInputs.empty()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& [tag, value] : out->keyInputs) inputs.push_back({tag, value});
    m["key_inputs"] = std::move(inputs);
  }
  a->manifest = m.dump();

  // A forced recompile replaces the published entry (unless a live process
  // holds it: then the old entry stays and this build is used from memory).
  if (publishable && recompile && store->removeEntry(store->entryDir(req.key), req.key))
    spdlog::info("cache entry {} {} removed for the forced recompile", req.kind, req.key.substr(0, 16));
  if (publishable) {
    Status st = store->publish(req.key, staging, out->artifactName, m, fault);
    if (st) {
      staging.clear();
      a->entryDir = store->entryDir(req.key);
    } else if (detail::buildRanOutOfSpace(staging, st.error().message())) {
      enterDiskFull(detail::firstLine(st.error().message()));
    } else {
      spdlog::warn("could not store cache entry {}: {}; nothing published, using the build from memory", req.key,
                   st.error().message());
    }
  }
  cleanup();
  stagingLock.reset();
  if (req.hold && !a->entryDir.empty()) a->hold = store->hold(req.key);
  if (!a->entryDir.empty() && maxBytes > 0) (void)store->evict(maxBytes, req.key);
  return ArtifactPtr(std::move(a));
}

// Memory miss: disk, then (under the per-key lock) disk again, then build.
Expected<ArtifactPtr> Cache::Impl::resolve(const CacheRequest& req) {
  if (!store) return build(req);
  auto finish = [&](Expected<ArtifactPtr> r, bool force) {
    flush(force);
    return r;
  };
  if (recompile) {
    // Neither disk lookup: build (once across processes, under the key lock).
    UniqueFd keyLock = store->lockKey(req.key, cfg.lockWait);
    auto r = build(req);
    keyLock.reset();
    return finish(std::move(r), true);
  }
  auto fromDisk = [&]() -> Expected<ArtifactPtr> {
    auto hit = loadFromDisk(req.key, req.kind, req.hold);
    if (hit && *hit) {
      countDiskHit();
      spdlog::debug("cache hit (disk): {} {}", req.kind, req.key.substr(0, 16));
    }
    return hit;
  };
  {
    auto hit = fromDisk();
    if (!hit) return finish(std::move(hit).error(), true);
    if (*hit) return finish(std::move(*hit), false);
  }
  if (cfg.readOnly) return finish(build(req), false);  // no lock file, no entry: memory only
  UniqueFd keyLock = store->lockKey(req.key, cfg.lockWait);
  {
    auto hit = fromDisk();
    if (!hit) return finish(std::move(hit).error(), true);
    if (*hit) return finish(std::move(*hit), false);
  }
  // Remote tier: a verified entry is published here and loaded; else build
  // (holding the fleet's build lock when we got it) and upload.
  remote::RemoteTier::Claim claim;
  if (remote) {
    if (auto entry = remote->fetchOrClaim(req.key, req.kind, claim)) {
      auto hit = adoptRemote(req, std::move(*entry));
      if (hit && *hit) {
        Counters::count(pending.hits);
        return finish(std::move(*hit), true);
      }
    }
  }
  auto r = build(req);
  if (remote && r && !(*r)->entryDir.empty()) remote->uploadBuilt(claim, req.key, (*r)->manifest, *(*r)->bytes);
  claim.release();
  keyLock.reset();
  return finish(std::move(r), true);
}

// A verified remote entry goes through the normal publish path (staging
// dir, manifest last, one rename) and is then read back like any disk entry,
// with the same checks. When the store cannot take it, it is used from
// memory (as a build would be). nullptr: build locally instead.
Expected<ArtifactPtr> Cache::Impl::adoptRemote(const CacheRequest& req, remote::RemoteEntry entry) {
  const std::string artifactName = entry.manifest.value("artifact", std::string());
  if (!cache::validArtifactName(artifactName)) return ArtifactPtr();  // (RemoteStorage checked it too)
  fs::path staging;
  UniqueFd stagingLock;
  bool publishable = false;
  SK_RETURN_IF_ERROR(makeStaging(req.key, staging, stagingLock, publishable));
  Status st = detail::writeNewFile(staging / artifactName, entry.artifact, 0755, true);
  if (st) {
    st = publishable ? store->publish(req.key, staging, artifactName, entry.manifest, fault)
                     : Status(ioError("the cache directory cannot take it"));
  }
  if (st) {
    stagingLock.reset();
    auto hit = loadFromDisk(req.key, req.kind, req.hold);
    if (!hit || !*hit) return hit;
    auto a = std::make_shared<Artifact>(**hit);
    a->origin = Artifact::Origin::Remote;
    if (maxBytes > 0) (void)store->evict(maxBytes, req.key);
    return ArtifactPtr(std::move(a));
  }
  spdlog::warn("could not store remote cache entry {}: {}; using it from memory", req.key, st.error().message());
  std::error_code ec;
  fs::remove_all(staging, ec);
  auto a = std::make_shared<Artifact>();
  a->key = req.key;
  a->kind = req.kind;
  a->origin = Artifact::Origin::Remote;
  a->sha256 = sha256Hex(entry.artifact);
  a->bytes = std::make_shared<const std::string>(std::move(entry.artifact));
  a->manifest = entry.manifest.dump();
  return ArtifactPtr(std::move(a));
}

ArtifactPtr Cache::Impl::withHold(const ArtifactPtr& a) {
  auto h = store ? store->hold(a->key) : nullptr;
  if (!h) return a;  // evicted meanwhile: the bytes stay valid in memory
  auto copy = std::make_shared<Artifact>(*a);
  copy->hold = std::move(h);
  ArtifactPtr p = copy;
  std::unique_lock<std::shared_mutex> lk(mapMutex);
  auto it = ready.find(a->key);
  if (it != ready.end() && it->second->hold) return it->second;
  ready[a->key] = p;
  return p;
}

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

Expected<uint64_t> defaultCacheMaxBytes() {
  if (const char* m = std::getenv("SK_CACHE_MAX_SIZE"); m && *m) {
    auto v = parseSize(m);
    if (!v) return Error(v.error()).context("SK_CACHE_MAX_SIZE");
    return *v;
  }
  return uint64_t{4} << 30;
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
  } else {
    SK_ASSIGN_OR_RETURN(d.maxBytes, defaultCacheMaxBytes());
  }
  if (config.recompile) {
    d.recompile = *config.recompile;
  } else if (const char* r = std::getenv("SK_FORCE_RECOMPILE"); r && *r) {
    const std::string v = r;
    if (v != "0" && v != "1") return badInput(fmt::format("SK_FORCE_RECOMPILE='{}': use 1 (recompile) or 0", v));
    d.recompile = v == "1";
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
      if (std::string p = cacheRootTrustProblem(d.root); !p.empty())
        return badInput(fmt::format("cache directory {} is not trusted: {}", d.root.string(), p));
    }
    d.store = std::make_unique<cache::DiskStore>(d.root, d.pending);
    return c;
  }
  std::string problem = cache::DiskStore::prepareRoot(d.root);
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
    if (std::string p2 = cache::DiskStore::prepareRoot(d.root); !p2.empty())
      return ioError(fmt::format("cannot set up the private cache {}: {}", priv.string(), p2));
    Counters::count(d.pending.untrusted);
  }
  d.store = std::make_unique<cache::DiskStore>(d.root, d.pending);
  d.statsFile.setRoot(d.root);
  d.store->cleanStaleTemps(config.staleTempAge);
  d.remote = remote::RemoteTier::open(config.remote, &d.pending.remote);
  return c;
}

Expected<ArtifactPtr> Cache::getOrBuild(const CacheRequest& req) {
  Impl& d = *impl_;
  {
    std::shared_lock<std::shared_mutex> lk(d.mapMutex);
    auto it = d.ready.find(req.key);
    if (it != d.ready.end() && !Impl::needsHold(it->second, req.hold)) {
      d.countMemoryHit();
      spdlog::debug("cache hit (memory): {} {}", req.kind, req.key.substr(0, 16));
      return it->second;
    }
  }
  if (!isValidCacheKey(req.key)) return internalError(fmt::format("invalid cache key '{}'", req.key));
  if (!cache::validKind(req.kind)) return internalError(fmt::format("invalid cache entry kind '{}'", req.kind));

  std::shared_ptr<Impl::Flight> flight;
  bool leader = false;
  ArtifactPtr readyNoHold;
  {
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    auto it = d.ready.find(req.key);
    if (it != d.ready.end()) {
      if (!Impl::needsHold(it->second, req.hold)) {
        d.countMemoryHit();
        return it->second;
      }
      readyNoHold = it->second;
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
  if (readyNoHold) {
    d.countMemoryHit();
    return d.withHold(readyNoHold);
  }
  if (!leader) {
    std::unique_lock<std::mutex> fl(flight->m);
    flight->cv.wait(fl, [&] { return flight->done; });
    if (flight->error) return *flight->error;
    ArtifactPtr v = flight->value;
    fl.unlock();
    d.countMemoryHit();
    if (Impl::needsHold(v, req.hold)) return d.withHold(v);
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

Expected<ArtifactPtr> Cache::lookup(std::string_view key, std::string_view kind, bool hold) {
  Impl& d = *impl_;
  if (ArtifactPtr a = findInMemory(key)) {
    d.countMemoryHit();
    if (Impl::needsHold(a, hold)) return d.withHold(a);
    return a;
  }
  if (!d.store || !isValidCacheKey(key)) return ArtifactPtr();
  SK_ASSIGN_OR_RETURN(ArtifactPtr a, d.loadFromDisk(key, kind, hold));
  if (a) {
    d.countDiskHit();
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    auto [it, inserted] = d.ready.emplace(std::string(key), a);
    if (!inserted && !Impl::needsHold(it->second, hold)) a = it->second;
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

void Cache::discard(std::string_view key, const std::string& why) {
  Impl& d = *impl_;
  {
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    auto it = d.ready.find(key);
    if (it != d.ready.end()) d.ready.erase(it);
  }
  if (d.store && isValidCacheKey(key)) d.store->quarantine(key, why, EntryState::Corrupt);
  else Counters::count(d.pending.corrupt);
  d.flush(true);
}

const fs::path& Cache::root() const { return impl_->root; }
const fs::path& Cache::requestedRoot() const { return impl_->requested; }
bool Cache::usingPrivateFallback() const { return impl_->privateFallback; }
std::string Cache::remoteUrl() const {
  return impl_->remote ? impl_->remote->storage().settings().url.redacted() : std::string();
}
bool Cache::usingDiskFullFallback() const { return impl_->diskFull.load(std::memory_order_acquire); }
bool Cache::diskEnabled() const { return impl_->disk; }
uint64_t Cache::maxBytes() const { return impl_->maxBytes; }
void Cache::flushStats() { impl_->flush(true); }

}  // namespace sk
