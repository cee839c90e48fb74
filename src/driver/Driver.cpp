#include "superkernel/driver/Driver.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "driver/LocalizeSymbols.h"
#include "support/Fd.h"
#include "target/cpu/LoadedLibrary.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Paths.h"
#include "support/InputGrammar.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

constexpr const char* kVersionScript = "{\n  global: run;\n  local: *;\n};\n";

using detail::readFileBytes;

Status writeFileBytes(const fs::path& p, std::string_view bytes) {
  std::error_code ec;
  fs::remove(p, ec);
  return detail::writeNewFile(p, bytes, 0644, false);
}

bool isCSource(const fs::path& p) { return p.extension() == ".c"; }

bool isHeaderExt(const fs::path& p) {
  static const char* exts[] = {".h", ".hpp", ".hh", ".hxx", ".inc", ".inl", ".cuh"};
  std::string e = p.extension().string();
  return std::any_of(std::begin(exts), std::end(exts), [&](const char* x) { return e == x; });
}

std::string joinFlags(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& f : v) {
    s += f;
    s.push_back('\0');
  }
  return s;
}

// Model and feature flags of this CPU: what -march=native depends on.
std::string hostCpuFingerprint() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, out;
  bool seenModel = false, seenFlags = false, seenVendor = false;
  while (std::getline(in, line)) {
    auto take = [&](const char* key, bool& seen) {
      if (!seen && line.rfind(key, 0) == 0) {
        out += line + "\n";
        seen = true;
      }
    };
    take("vendor_id", seenVendor);
    take("model name", seenModel);
    take("flags", seenFlags);
    take("Features", seenFlags);
    take("CPU part", seenModel);
    if (seenModel && seenFlags && seenVendor) break;
  }
  return out;
}

std::string symbolOf(const KernelVariant& v) { return v.symbol.empty() ? v.decl.entry : v.symbol; }

}  // namespace

struct Driver::Impl {
  Toolchain tc;
  std::shared_ptr<Cache> cache;
  DriverConfig cfg;
  unsigned jobs = 1;
  std::string archKey;

  std::once_flag runtimeOnce;
  std::optional<Expected<std::string>> runtimeDigest;

  // kernel_abi.c compiled once per driver: every SuperKernel links the same
  // object, so a cold plan of N steps runs the compiler N times, not 2N.
  std::mutex abiMutex;
  std::shared_ptr<const std::string> abiObject;

  // One load per key while anyone uses it (a memory hit shares the library).
  std::mutex loadedMutex;
  std::map<std::string, std::weak_ptr<LoadedLibrary>> loaded;
  Expected<std::shared_ptr<LoadedLibrary>> load(const Artifact& a) {
    std::lock_guard<std::mutex> g(loadedMutex);
    if (auto l = loaded[a.key].lock()) return l;
    SK_ASSIGN_OR_RETURN(auto l, LoadedLibrary::fromBytes(*a.bytes, a.key));
    loaded[a.key] = l;
    return l;
  }

  const Expected<std::string>& runtime() {
    std::call_once(runtimeOnce, [&] {
      KeyBuilder kb;
      kb.add("what", "runtime");
      Status st = kb.addTree("include", runtimeIncludeDir());
      if (st) st = kb.addFile("kernel_abi.c", runtimeCpuSourceDir() / "kernel_abi.c");
      if (!st) runtimeDigest.emplace(Error(st.error()).context("hashing the superkernel runtime"));
      else runtimeDigest.emplace(kb.finish());
    });
    return *runtimeDigest;
  }

  std::vector<std::string> archFlags() const {
    if (cfg.arch.empty() || cfg.arch == "generic") return {};
    if (tc.target != "cpu") return {};
    return {"-march=" + cfg.arch};
  }

  std::vector<std::string> alignFlags(const Options& o) const {
    if (o.funcAlign > 0) return {fmt::format("-falign-functions={}", o.funcAlign)};
    return {};
  }

  ProcessOptions processOptions() const {
    ProcessOptions po;
    po.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(cfg.timeout);
    return po;
  }

  std::vector<std::string> command(const std::vector<std::string>& tail) const {
    std::vector<std::string> argv = tc.launcher;
    argv.push_back(tc.invocation.string());
    argv.insert(argv.end(), tail.begin(), tail.end());
    return argv;
  }

  // Run a compiler command; a failure is an Error carrying the command and
  // the diagnostics.
  Expected<ProcessResult> runCompiler(const std::vector<std::string>& argv, const std::string& what) const {
    auto res = runProcess(argv, processOptions());
    if (!res) return Error(res.error()).context(what);
    if (!res->succeeded()) {
      std::string diag = res->err;
      if (!res->out.empty()) diag = res->out + (diag.empty() ? "" : "\n") + diag;
      while (!diag.empty() && diag.back() == '\n') diag.pop_back();
      return compileError(fmt::format("{} failed ({})\n  command: {}\n{}", what, res->describe(), formatCommand(argv),
                                      diag.empty() ? "(no diagnostics)" : diag));
    }
    return res;
  }
};

Driver::Driver(Toolchain toolchain, std::shared_ptr<Cache> cache, DriverConfig config)
    : impl_(std::make_unique<Impl>()) {
  initLogging();
  impl_->tc = std::move(toolchain);
  impl_->cfg = std::move(config);
  if (!cache) {
    CacheConfig cc;
    cc.disk = false;
    auto c = Cache::open(cc);
    if (c) cache = *c;
  }
  impl_->cache = std::move(cache);
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  impl_->jobs = impl_->cfg.jobs ? impl_->cfg.jobs : hw;
  impl_->archKey = impl_->cfg.arch;
  if (impl_->cfg.arch == "native") impl_->archKey += "\n" + hostCpuFingerprint();
}

Driver::~Driver() = default;
Driver::Driver(Driver&&) noexcept = default;
Driver& Driver::operator=(Driver&&) noexcept = default;

const Toolchain& Driver::toolchain() const { return impl_->tc; }
const std::shared_ptr<Cache>& Driver::cache() const { return impl_->cache; }
const DriverConfig& Driver::config() const { return impl_->cfg; }
unsigned Driver::jobs() const { return impl_->jobs; }

std::vector<std::string> Driver::objectFlags(const KernelVariant& v, const Options& o) const {
  std::vector<std::string> f = {"-c", "-O2", "-fPIC"};
  f.push_back(isCSource(v.decl.sourcePath) ? "-std=c11" : "-std=c++17");
  for (auto& a : impl_->archFlags()) f.push_back(a);
  f.push_back("-I" + runtimeIncludeDir().string());
  std::string sym = symbolOf(v);
  if (!v.decl.entry.empty() && sym != v.decl.entry) f.push_back(fmt::format("-D{}={}", v.decl.entry, sym));
  for (const auto& [k, val] : v.macros) f.push_back(fmt::format("-D{}={}", k, val));
  for (const auto& c : o.compileOptions) f.push_back(c);
  for (auto& a : impl_->alignFlags(o)) f.push_back(a);
  return f;
}

Expected<std::string> Driver::objectKey(const KernelVariant& v, const Options& o) const {
  // The last gate before argv: whatever path the inputs took (op list, Graph, Options built in C++).
  if (std::string p = grammar::compileOptionsProblem(o.compileOptions); !p.empty()) return badInput(p);
  if (std::string p = grammar::macrosProblem(v.macros, v.decl.entry); !p.empty())
    return badInput(fmt::format("kernel '{}': {}", v.decl.name, p));
  const fs::path& src = v.decl.sourcePath;
  auto bytes = readFileBytes(src);
  if (!bytes) return badInput(fmt::format("kernel '{}': {}", v.decl.name, bytes.error().message()));
  SK_ASSIGN_OR_RETURN(std::string rt, impl_->runtime());
  KeyBuilder kb;
  kb.add("kind", kKindObject);
  kb.add("target", impl_->tc.target);
  kb.add("arch", impl_->archKey);
  kb.add("toolchain", impl_->tc.identity());
  kb.add("language", isCSource(src) ? "c" : "c++");
  kb.add("flags", joinFlags(objectFlags(v, o)));
  kb.add("symbol", symbolOf(v));
  SK_ASSIGN_OR_RETURN(ObjcopyTool objcopy, findObjcopy(impl_->tc));
  kb.add("postprocess", objcopy.identity);
  kb.add("source", *bytes);
  // Headers beside the source (a kernel's own includes); sorted by name.
  std::vector<fs::path> headers;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(src.parent_path(), ec)) {
    std::error_code ec2;
    if (e.is_regular_file(ec2) && isHeaderExt(e.path())) headers.push_back(e.path());
  }
  std::sort(headers.begin(), headers.end());
  for (const auto& h : headers) {
    auto hb = readFileBytes(h);
    if (hb) kb.add("header:" + h.filename().string(), *hb);
  }
  kb.add("runtime", rt);
  return kb.finish();
}

Expected<ObjectArtifact> Driver::compileWithKey(const KernelVariant& v, const Options& o,
                                                const std::string& key) const {
  const Impl& impl = *impl_;
  std::atomic<bool> ran{false};
  std::vector<std::string> flags = objectFlags(v, o);
  BuildFn build = [&](const fs::path& staging) -> Expected<BuildOutput> {
    ran = true;
    std::vector<std::string> tail = flags;
    tail.push_back("-o");
    tail.push_back((staging / "object.o").string());
    tail.push_back("-x");
    tail.push_back(isCSource(v.decl.sourcePath) ? "c" : "c++");
    tail.push_back(v.decl.sourcePath.string());
    std::vector<std::string> argv = impl.command(tail);
    auto res = impl.runCompiler(argv, fmt::format("compiling kernel '{}' ({})", v.decl.name, symbolOf(v)));
    if (!res) return std::move(res).error();
    if (!res->err.empty()) spdlog::debug("compiler output for {}:\n{}", v.decl.name, res->err);
    // Only the entry stays global: sub-kernels fused into one library never collide (LocalizeSymbols.h).
    SK_ASSIGN_OR_RETURN(ObjcopyTool objcopy, findObjcopy(impl.tc));
    if (Status st = localizeObjectSymbols(objcopy, staging / "object.o", symbolOf(v), impl.processOptions()); !st)
      return Error(st.error()).context(fmt::format("kernel '{}' ({})", v.decl.name, v.decl.sourcePath.string()));
    BuildOutput out;
    out.artifactName = "object.o";
    out.command = argv;
    out.toolchain = impl.tc.path.string() + " (" + impl.tc.versionLine() + ")";
    out.metadata = {{"kernel", v.decl.name},
                    {"entry", v.decl.entry},
                    {"symbol", symbolOf(v)},
                    {"source", v.decl.sourcePath.string()},
                    {"macros", v.macros}};
    return out;
  };
  CacheRequest req;
  req.key = key;
  req.kind = kKindObject;
  req.hold = false;
  req.build = build;
  auto art = impl.cache->getOrBuild(req);
  if (!art) return std::move(art).error();
  ObjectArtifact oa;
  oa.key = key;
  oa.symbol = symbolOf(v);
  oa.bytes = (*art)->bytes;
  oa.cached = !ran;
  auto size = readSymbolSize(*oa.bytes, oa.symbol);
  if (!size) return Error(size.error()).context(fmt::format("kernel '{}' ({})", v.decl.name, v.decl.sourcePath.string()));
  oa.symbolSize = *size;
  return oa;
}

Expected<ObjectArtifact> Driver::compileObject(const KernelVariant& v, const Options& o) const {
  if (!impl_->cache) return internalError("driver has no cache");
  SK_ASSIGN_OR_RETURN(std::string key, objectKey(v, o));
  return compileWithKey(v, o, key);
}

Expected<std::vector<ObjectArtifact>> Driver::compileObjects(const std::vector<KernelVariant>& variants,
                                                             const Options& o, const ProgressFn& progress) const {
  if (!impl_->cache) return internalError("driver has no cache");
  std::vector<std::string> keys(variants.size());
  std::vector<size_t> unique;          // index of the first variant of each distinct key
  std::vector<size_t> slotOf(variants.size());
  std::map<std::string, size_t> seen;  // key -> slot
  for (size_t i = 0; i < variants.size(); ++i) {
    SK_ASSIGN_OR_RETURN(keys[i], objectKey(variants[i], o));
    auto [it, inserted] = seen.emplace(keys[i], unique.size());
    if (inserted) unique.push_back(i);
    slotOf[i] = it->second;
  }
  const size_t total = unique.size();
  std::vector<std::optional<Expected<ObjectArtifact>>> results(total);
  std::atomic<size_t> next{0};
  std::mutex progressMutex;
  size_t done = 0;
  if (progress && total > 0) progress(0, total);
  auto worker = [&] {
    while (true) {
      size_t s = next.fetch_add(1);
      if (s >= total) return;
      size_t i = unique[s];
      results[s].emplace(compileWithKey(variants[i], o, keys[i]));
      std::lock_guard<std::mutex> g(progressMutex);
      ++done;
      if (progress) progress(done, total);
    }
  };
  size_t n = std::min<size_t>(impl_->jobs, total);
  if (n <= 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    threads.reserve(n - 1);
    for (size_t t = 0; t + 1 < n; ++t) threads.emplace_back(worker);
    worker();
    for (auto& t : threads) t.join();
  }
  size_t failures = 0;
  std::optional<Error> first;
  for (size_t s = 0; s < total; ++s) {
    if (!results[s]->ok()) {
      ++failures;
      if (!first) first = results[s]->error();
    }
  }
  if (first) {
    if (failures > 1) return Error(*first).context(fmt::format("{} of {} kernels failed to compile; first", failures, total));
    return *first;
  }
  std::vector<ObjectArtifact> out;
  out.reserve(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) out.push_back(**results[slotOf[i]]);
  return out;
}

std::vector<std::string> Driver::linkFlags(const Options& o) const {
  const Impl& impl = *impl_;
  std::vector<std::string> f = {"-shared", "-fPIC", "-O2", "-std=c++17", "-fvisibility=hidden"};
  for (auto& a : impl.archFlags()) f.push_back(a);
  f.push_back("-I" + runtimeIncludeDir().string());
  for (const auto& c : o.compileOptions) f.push_back(c);
  for (auto& a : impl.alignFlags(o)) f.push_back(a);
  f.push_back("-Wl,-z,defs");
  return f;
}

std::vector<std::string> Driver::abiFlags() const {
  const Impl& impl = *impl_;
  std::vector<std::string> f = {"-c", "-O2", "-fPIC", "-std=c11", "-DSK_BUILDING_SUPERKERNEL", "-fvisibility=hidden"};
  for (auto& a : impl.archFlags()) f.push_back(a);
  f.push_back("-I" + runtimeIncludeDir().string());
  return f;
}

Expected<std::string> Driver::superKernelKey(std::string_view source, const std::vector<ObjectArtifact>& objects,
                                             const Options& o) const {
  if (std::string p = grammar::compileOptionsProblem(o.compileOptions); !p.empty()) return badInput(p);
  SK_ASSIGN_OR_RETURN(std::string rt, impl_->runtime());
  KeyBuilder kb;
  kb.add("kind", kKindSuperKernel);
  kb.add("target", impl_->tc.target);
  kb.add("arch", impl_->archKey);
  kb.add("toolchain", impl_->tc.identity());
  kb.add("link-flags", joinFlags(linkFlags(o)));
  kb.add("abi-flags", joinFlags(abiFlags()));
  kb.add("version-script", kVersionScript);
  kb.add("options", o.canonical());
  kb.add("source", source);
  kb.add("objects", uint64_t{objects.size()});
  for (const auto& ob : objects) kb.add("object", ob.key);
  kb.add("runtime", rt);
  return kb.finish();
}

Expected<std::shared_ptr<const std::string>> Driver::abiObjectBytes(const fs::path& scratchDir) const {
  std::lock_guard<std::mutex> lock(impl_->abiMutex);
  if (impl_->abiObject) return impl_->abiObject;
  fs::path obj = scratchDir / "kernel_abi.o";
  std::vector<std::string> tail = abiFlags();
  tail.insert(tail.end(), {"-o", obj.string(), "-x", "c", (runtimeCpuSourceDir() / "kernel_abi.c").string()});
  SK_ASSIGN_OR_RETURN(auto res, impl_->runCompiler(impl_->command(tail), "compiling the runtime's kernel_abi.c"));
  (void)res;
  SK_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(obj));
  impl_->abiObject = std::make_shared<const std::string>(std::move(bytes));
  return impl_->abiObject;
}

Expected<LinkResult> Driver::linkSuperKernel(std::string_view source, const std::vector<ObjectArtifact>& objects,
                                             const Options& o, const fs::path& outputFile) const {
  fs::path dir = outputFile.parent_path();
  if (dir.empty()) dir = ".";
  fs::path src = dir / "superkernel.cpp";
  SK_RETURN_IF_ERROR(writeFileBytes(src, source));
  fs::path script = dir / "exports.map";
  SK_RETURN_IF_ERROR(writeFileBytes(script, kVersionScript));
  // Distinct objects (the same variant may appear more than once).
  std::vector<fs::path> objs;
  std::map<std::string, bool> written;
  for (const auto& ob : objects) {
    if (!ob.bytes) return internalError("linkSuperKernel: an object without bytes");
    if (written[ob.key]) continue;
    written[ob.key] = true;
    fs::path p = dir / fmt::format("obj_{}_{}.o", objs.size(), ob.key.substr(0, 12));
    SK_RETURN_IF_ERROR(writeFileBytes(p, *ob.bytes));
    objs.push_back(p);
  }
  // kernel_abi.c: hidden copies of sk_wait_inputs & co.
  fs::path abiObj = dir / "kernel_abi.o";
  SK_ASSIGN_OR_RETURN(auto abiBytes, abiObjectBytes(dir));
  SK_RETURN_IF_ERROR(writeFileBytes(abiObj, *abiBytes));
  std::vector<std::string> tail = linkFlags(o);
  tail.push_back("-Wl,--version-script=" + script.string());
  tail.insert(tail.end(), {"-o", outputFile.string(), "-x", "c++", src.string(), "-x", "none"});
  for (const auto& p : objs) tail.push_back(p.string());
  tail.push_back(abiObj.string());
  // Kernels call libm (expf, sqrtf, ...); -z defs would reject them otherwise.
  tail.push_back("-lm");
  std::vector<std::string> argv = impl_->command(tail);
  SK_ASSIGN_OR_RETURN(auto res, impl_->runCompiler(argv, "compiling and linking the SuperKernel"));
  LinkResult lr;
  lr.output = outputFile;
  lr.command = argv;
  lr.diagnostics = res.err;
  return lr;
}

Expected<SuperKernelArtifact> Driver::buildSuperKernel(std::string_view source,
                                                       const std::vector<ObjectArtifact>& objects, const Options& o,
                                                       const nlohmann::json& metadata) const {
  if (!impl_->cache) return internalError("driver has no cache");
  SK_ASSIGN_OR_RETURN(std::string key, superKernelKey(source, objects, o));
  std::atomic<bool> ran{false};
  CacheRequest req;
  req.key = key;
  req.kind = kKindSuperKernel;
  req.hold = true;
  req.build = [&](const fs::path& staging) -> Expected<BuildOutput> {
    ran = true;
    SK_ASSIGN_OR_RETURN(LinkResult lr, linkSuperKernel(source, objects, o, staging / "superkernel.so"));
    BuildOutput out;
    out.artifactName = "superkernel.so";
    out.command = lr.command;
    out.toolchain = impl_->tc.path.string() + " (" + impl_->tc.versionLine() + ")";
    out.metadata = metadata.is_object() ? metadata : nlohmann::json{{"metadata", metadata}};
    if (!out.metadata.contains("object_keys")) {
      std::vector<std::string> ks;
      for (const auto& ob : objects) ks.push_back(ob.key);
      out.metadata["object_keys"] = ks;
    }
    if (!out.metadata.contains("options")) out.metadata["options"] = o.canonical();
    return out;
  };
  SK_ASSIGN_OR_RETURN(ArtifactPtr art, impl_->cache->getOrBuild(req));
  auto lib = impl_->load(*art);
  if (!lib && art->origin == Artifact::Origin::Disk) {
    // Verified bytes that do not load: quarantine the entry and build again.
    impl_->cache->discard(key, lib.error().message());
    SK_ASSIGN_OR_RETURN(art, impl_->cache->getOrBuild(req));
    lib = impl_->load(*art);
  }
  if (!lib) return std::move(lib).error();
  SuperKernelArtifact sk;
  sk.key = key;
  sk.artifact = art;
  sk.library = *lib;
  sk.cached = !ran;
  sk.run = sk.library->run();
  if (!sk.run) return runtimeError(fmt::format("SuperKernel {} does not export 'run'", key));
  return sk;
}

void applyCodeBytes(std::vector<KernelVariant>& variants, const std::vector<ObjectArtifact>& objects) {
  for (size_t i = 0; i < variants.size() && i < objects.size(); ++i) variants[i].codeBytes = objects[i].symbolSize;
}

}  // namespace sk
