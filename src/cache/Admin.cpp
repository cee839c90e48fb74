// The sk-cache operations on a Cache: stats, list, inspect, verify, gc,
// clear. Built on cache/DiskStore and cache/Stats; nothing here is on the
// compile path.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "cache/CacheImpl.h"

namespace sk {
namespace fs = std::filesystem;
using cache::EntryState;
using detail::UniqueFd;

std::string CacheStats::toJson() const {
  return nlohmann::json{{"hits", hits},
                        {"misses", misses},
                        {"compiles", compiles},
                        {"compile_failures", compileFailures},
                        {"corrupt", corrupt},
                        {"untrusted", untrusted},
                        {"evicted", evicted},
                        {"entries", entries},
                        {"bytes", bytes},
                        {"max_bytes", maxBytes},
                        {"memory_hits", memoryHits},
                        {"disk_hits", diskHits},
                        {"remote_hits", remoteHits},
                        {"remote_misses", remoteMisses},
                        {"remote_uploads", remoteUploads},
                        {"remote_errors", remoteErrors},
                        {"remote_rejected", remoteRejected},
                        {"disk_full", diskFull},
                        {"root", root.string()}}
      .dump();
}

Expected<CacheStats> Cache::stats() {
  Impl& d = *impl_;
  d.flush(true);
  uint64_t v[cache::kNumCounters];
  d.statsFile.totals(d.pending, v);
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
  s.remoteHits = v[9];
  s.remoteMisses = v[10];
  s.remoteUploads = v[11];
  s.remoteErrors = v[12];
  s.remoteRejected = v[13];
  s.diskFull = v[14];
  s.root = d.root;
  s.maxBytes = d.maxBytes;
  if (d.store) {
    for (auto& e : d.store->scan()) {
      if (!e.complete) continue;
      ++s.entries;
      s.bytes += e.info.bytes;
    }
  }
  return s;
}

Expected<std::vector<CacheEntryInfo>> Cache::list() const {
  std::vector<CacheEntryInfo> out;
  if (!impl_->store) return out;
  for (auto& e : impl_->store->scan())
    if (e.complete) out.push_back(std::move(e.info));
  std::sort(out.begin(), out.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    if (a.lastUse != b.lastUse) return a.lastUse > b.lastUse;
    return a.key < b.key;
  });
  return out;
}

Expected<std::string> Cache::inspect(std::string_view key) const {
  if (!impl_->store) return badInput(fmt::format("no cache entry {} (the cache is memory-only)", key));
  SK_ASSIGN_OR_RETURN(fs::path dir, impl_->store->findByPrefix(key));
  UniqueFd fd(::open((dir / cache::kManifest).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return ioError(fmt::format("cache entry {} has no readable manifest", dir.filename().string()));
  SK_ASSIGN_OR_RETURN(std::string text, detail::readAllFd(fd.get(), "manifest"));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return ioError(fmt::format("cache entry {}: manifest is not JSON", dir.filename().string()));
  return j.dump();
}

Expected<IntegrityReport> Cache::verifyIntegrity(bool quarantineBad) {
  Impl& d = *impl_;
  IntegrityReport rep;
  if (!d.store) return rep;
  for (auto& s : d.store->scan()) {
    IntegrityItem item;
    item.info = s.info;
    if (!isValidCacheKey(s.info.key) || s.info.dir.parent_path().filename() != s.info.key.substr(0, 2)) {
      item.problem = "not a cache key directory";
    } else {
      cache::EntryCheck c = d.store->check(s.info.key, "", false);
      if (!c.manifest.is_discarded() && !c.manifest.is_null()) item.manifest = c.manifest.dump();
      if (c.state == EntryState::Ok) {
        item.ok = true;
      } else if (c.state == EntryState::Absent) {
        continue;  // removed meanwhile
      } else {
        item.problem = c.problem;
        if (quarantineBad) {
          c.dirFd.reset();
          d.store->quarantine(s.info.key, c.problem, c.state);
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
  if (!d.store) return GcResult{};
  d.store->cleanStaleTemps(d.cfg.staleTempAge);
  d.store->cleanQuarantine();
  GcResult r = d.store->evict(maxBytes, "");
  d.flush(true);
  return r;
}

Expected<GcResult> Cache::clear() {
  Impl& d = *impl_;
  {
    std::unique_lock<std::shared_mutex> lk(d.mapMutex);
    d.ready.clear();
  }
  if (!d.store) return GcResult{};
  GcResult r;
  for (auto& s : d.store->scan()) {
    if (d.store->removeEntry(s.info.dir, s.info.key)) {
      ++r.removedEntries;
      r.removedBytes += s.info.bytes;
    } else {
      ++r.skippedHeld;
      ++r.remainingEntries;
      r.remainingBytes += s.info.bytes;
    }
  }
  d.store->cleanStaleTemps(std::chrono::seconds(0));
  d.store->cleanQuarantine();
  std::error_code ec;
  for (auto& shard : fs::directory_iterator(d.store->entriesDir(), ec)) {
    std::error_code ec2;
    fs::remove(shard.path(), ec2);  // only if empty
  }
  return r;
}

Status Cache::zeroStats() {
  Impl& d = *impl_;
  for (int i = 0; i < cache::kNumCounters; ++i) d.pending.at(i).store(0);
  return d.statsFile.zero();
}

}  // namespace sk
