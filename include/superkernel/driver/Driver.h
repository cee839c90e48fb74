// The compiler driver: sub-kernel objects (deduplicated, cached, compiled in
// parallel), their symbol sizes, and the SuperKernel build, for any target.
// What to run comes from the target's BuildRecipe (target/Backend.h: flags,
// argv, post-processing, link, artifact name, runtime files); the driver
// owns what every target shares: spawning the compiler with argv (never a
// shell) under the toolchain's launcher, keys, the cache, dedup and the
// parallel compiles.
//
// Objects are keyed (kind "object") by: schema + library version, target,
// the recipe's arch key, toolchain identity, the recipe's canonical object
// flags (without output/input paths), the symbol, the source bytes and the
// header files beside it, and the recipe's runtime digest. Two variants with
// equal keys compile once (in this process, across processes, and across
// runs through the disk cache).
//
// SuperKernels are keyed (kind "superkernel") by the source text, the
// objects' keys, the runtime digest, the toolchain identity, the recipe's
// link key and Options::canonical() (only the build options with
// DriverConfig::sourceEncodesPlanOptions). buildSuperKernel returns the cache's
// verified bytes and entry hold; loading them is the Device's job.
//
// Thread-safety: every const member may be called from many threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/cache/Cache.h"
#include "superkernel/driver/Process.h"
#include "superkernel/driver/Toolchain.h"
#include "superkernel/frontend/Options.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/support/Error.h"

namespace sk {

class BuildRecipe;

struct DriverConfig {
  /// Parallel compiler processes in compileObjects; 0 = hardware threads.
  unsigned jobs = 0;
  /// Per compiler process; the process group is killed after it.
  std::chrono::seconds timeout{600};
  /// Passed to the recipe. cpu: "native": -march=native and the host CPU's
  /// model/flags in the keys; "" or "generic": no -march; anything else:
  /// -march=<arch>.
  std::string arch = "native";
  /// The SuperKernel sources already encode every planning option (a
  /// Session's generated code does: early-start, preload-code, profiling,
  /// ...): key only the options that reach the compiler and linker commands
  /// (compile-options, func-align, split-mode), recorded as "build-options".
  /// Identical sources built under different option sets then share one
  /// entry, and the recorded key inputs claim nothing about the planning
  /// options (sk-cache explain shows those from the entries' metadata).
  /// false: the whole Options::canonical(), recorded as "options".
  bool sourceEncodesPlanOptions = false;
};

/// One compiled sub-kernel variant.
struct ObjectArtifact {
  std::string key;                                  // its cache key (kind "object")
  std::string symbol;                               // KernelVariant::symbol
  uint64_t symbolSize = 0;                          // code bytes of `symbol` (-> KernelVariant::codeBytes)
  std::shared_ptr<const std::string> bytes;         // the object file's content
  bool cached = false;                              // served without compiling (memory or disk)
};

/// Progress of compileObjects: `done` of `total` distinct objects finished
/// (total = number of distinct keys). Called serially (never concurrently).
using ProgressFn = std::function<void(size_t done, size_t total)>;

/// A built SuperKernel: verified bytes and a hold on its cache entry (load
/// it with the target's Device).
struct SuperKernelArtifact {
  std::string key;
  ArtifactPtr artifact;                             // bytes, manifest, held entry
  bool cached = false;                              // not compiled by this call
};

/// What a SuperKernel is built from: the generated source text and the
/// emitter's launch metadata beside it (GeneratedSource::launch; empty for
/// targets that need none). Both are hashed into the key; the recipe's link
/// reads the metadata (LinkRequest::launch), never the source text. Made
/// implicitly from text alone.
struct SuperKernelSource {
  std::string_view text;
  std::string_view launch;
  SuperKernelSource(std::string_view t, std::string_view l = {}) : text(t), launch(l) {}
  SuperKernelSource(const std::string& t) : text(t) {}
  SuperKernelSource(const char* t) : text(t) {}
};

/// Result of an uncached link (linkSuperKernel).
struct LinkResult {
  std::filesystem::path output;                     // the artifact written
  std::vector<std::string> command;                 // the link command's argv
  std::string diagnostics;                          // compiler stderr (warnings)
};

class Driver {
 public:
  /// `cache` may be null: everything is compiled, nothing is kept.
  Driver(std::shared_ptr<const BuildRecipe> recipe, Toolchain toolchain, std::shared_ptr<Cache> cache,
         DriverConfig config = {});
  /// The recipe registered for toolchain.target (an unknown target makes
  /// every call fail with the registry's error).
  Driver(Toolchain toolchain, std::shared_ptr<Cache> cache, DriverConfig config = {});
  ~Driver();
  Driver(Driver&&) noexcept;
  Driver& operator=(Driver&&) noexcept;

  const Toolchain& toolchain() const;
  const BuildRecipe& recipe() const;
  const std::shared_ptr<Cache>& cache() const;
  const DriverConfig& config() const;
  unsigned jobs() const;                            // effective (0 resolved)

  /// The canonical object flags of a variant (the recipe's; no launcher, no
  /// paths that vary per build).
  std::vector<std::string> objectFlags(const KernelVariant& variant, const Options& options) const;
  /// The object's cache key (reads the source and its neighbour headers).
  Expected<std::string> objectKey(const KernelVariant& variant, const Options& options,
                                  KeyInputs* inputs = nullptr) const;

  /// Compile one variant (or get it from the cache), with its symbol size.
  Expected<ObjectArtifact> compileObject(const KernelVariant& variant, const Options& options) const;
  /// One ObjectArtifact per input variant, same order; equal keys compile
  /// once; up to jobs() compiles at a time. The first error (in input order
  /// of the failing variants) is returned after every job has finished.
  Expected<std::vector<ObjectArtifact>> compileObjects(const std::vector<KernelVariant>& variants,
                                                       const Options& options,
                                                       const ProgressFn& progress = {}) const;

  /// The SuperKernel's cache key.
  /// `inputs`, if given, receives what the key was hashed from (manifests
  /// keep it for sk-cache explain).
  Expected<std::string> superKernelKey(const SuperKernelSource& source, const std::vector<ObjectArtifact>& objects,
                                       const Options& options, KeyInputs* inputs = nullptr) const;
  /// Compile + link without the cache, into `outputFile` (its directory must
  /// exist; scratch files go next to it).
  Expected<LinkResult> linkSuperKernel(const SuperKernelSource& source, const std::vector<ObjectArtifact>& objects,
                                       const Options& options, const std::filesystem::path& outputFile) const;
  /// Key, get-or-build through the cache (link on a miss), held.
  /// `metadataJson` (JSON text, as in Cache.h; empty: {}) is stored in the
  /// manifest when this call builds (op list, plan report: what `sk-cache
  /// verify` replays); a value that is not an object is stored as
  /// {"metadata": value}; text that is not JSON is BadInput when this call
  /// builds (a cache hit never reads it). Without a
  /// cache: a private memory-only build.
  Expected<SuperKernelArtifact> buildSuperKernel(const SuperKernelSource& source,
                                                 const std::vector<ObjectArtifact>& objects,
                                                 const Options& options,
                                                 std::string_view metadataJson = "{}") const;
  /// The same, with the metadata made only when this call builds: a hit
  /// never pays for it (a Session's metadata holds the whole op list).
  Expected<SuperKernelArtifact> buildSuperKernel(const SuperKernelSource& source,
                                                 const std::vector<ObjectArtifact>& objects,
                                                 const Options& options,
                                                 const std::function<std::string()>& metadataJson) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Expected<ObjectArtifact> compileWithKey(const KernelVariant& v, const Options& o, const std::string& key) const;
};

/// Copy ObjectArtifact::symbolSize into KernelVariant::codeBytes (same order).
void applyCodeBytes(std::vector<KernelVariant>& variants, const std::vector<ObjectArtifact>& objects);

/// Sizes of the defined symbols of a relocatable/shared ELF object (its
/// .symtab, else .dynsym): name -> st_size. ErrorKind::Compile if the bytes
/// are not a well-formed ELF object of the host's byte order.
Expected<std::map<std::string, uint64_t>> readSymbolSizes(std::string_view objectBytes);
/// One symbol's size; an error naming the symbol if it is not defined.
Expected<uint64_t> readSymbolSize(std::string_view objectBytes, std::string_view symbol);

}  // namespace sk
