#include "superkernel/driver/Driver.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "superkernel/driver/Deadline.h"
#include "support/EscapedSplit.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/Paths.h"
#include "superkernel/support/ThreadPool.h"
#include "superkernel/target/Backend.h"
#include "support/BuildFiles.h"
#include "support/Fd.h"
#include "support/InputGrammar.h"
#include "support/JsonText.h"

namespace sk {
namespace fs = std::filesystem;

namespace {

using detail::readFileBytes;

bool isHeaderExt(const fs::path& p) {
  static const char* exts[] = {".h", ".hpp", ".hh", ".hxx", ".inc", ".inl", ".cuh"};
  std::string e = p.extension().string();
  return std::any_of(std::begin(exts), std::end(exts), [&](const char* x) { return e == x; });
}

std::string symbolOf(const KernelVariant& v) { return v.symbol.empty() ? v.decl.entry : v.symbol; }

// The canonical items of the options that reach compiler and linker commands
// (DriverConfig::sourceEncodesPlanOptions), e.g. "func-align=512": the
// recipes read only these (the cpu/ascend object and link flags); every other
// option changes the generated source, which the key hashes anyway.
std::string buildOptionsText(const Options& o) {
  static constexpr std::string_view kBuildKeys[] = {"compile-options=", "func-align=", "split-mode="};
  std::string out;
  for (const std::string& item : splitEscaped(o.canonical(), ':', false))
    for (std::string_view k : kBuildKeys)
      if (item.starts_with(k)) out += (out.empty() ? "" : ":") + item;
  return out;
}

}  // namespace

struct Driver::Impl final : RecipeTools {
  std::shared_ptr<const BuildRecipe> recipe;
  std::optional<Error> recipeError;                // no recipe for the toolchain's target
  Toolchain tc;
  std::shared_ptr<Cache> cache;
  DriverConfig cfg;
  unsigned jobs = 1;
  std::string archKey;

  std::once_flag runtimeOnce;
  std::optional<Expected<std::string>> runtimeDigest;

  // RecipeTools::once: per-driver products every link shares.
  mutable std::mutex onceMutex;
  mutable std::map<std::string, std::shared_ptr<const std::string>> onceValues;

  const Toolchain& toolchain() const override { return tc; }
  const std::string& arch() const override { return cfg.arch; }

  Expected<std::shared_ptr<const std::string>> once(const std::string& id,
                                                    const std::function<Expected<std::string>()>& make) const override {
    std::lock_guard<std::mutex> lock(onceMutex);
    auto it = onceValues.find(id);
    if (it != onceValues.end()) return it->second;
    SK_ASSIGN_OR_RETURN(std::string v, make());
    auto p = std::make_shared<const std::string>(std::move(v));
    onceValues.emplace(id, p);
    return p;
  }

  const Expected<std::string>& runtime() {
    std::call_once(runtimeOnce, [&] { runtimeDigest.emplace(recipe->runtimeDigest()); });
    return *runtimeDigest;
  }

  ProcessOptions processOptions() const {
    ProcessOptions po;
    po.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(cfg.timeout);
    return po;
  }

  std::vector<std::string> command(const std::vector<std::string>& args) const override {
    std::vector<std::string> argv = tc.launcher;
    argv.push_back(tc.invocation.string());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  // Run a compiler command; a failure is an Error carrying the command and
  // the diagnostics.
  Expected<ProcessResult> runCompiler(const std::vector<std::string>& args, const std::string& what) const override {
    return runTool(command(args), what);
  }

  Expected<ProcessResult> runTool(const std::vector<std::string>& argv, const std::string& what) const override {
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

  Status ready() const {
    if (recipeError) return *recipeError;
    if (!cache) return internalError("driver has no cache");
    return Status::success();
  }
};

Driver::Driver(std::shared_ptr<const BuildRecipe> recipe, Toolchain toolchain, std::shared_ptr<Cache> cache,
               DriverConfig config)
    : impl_(std::make_unique<Impl>()) {
  initLogging();
  impl_->recipe = std::move(recipe);
  if (!impl_->recipe) impl_->recipeError = internalError("driver without a build recipe");
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
  if (impl_->recipe) impl_->archKey = impl_->recipe->archKey(impl_->cfg.arch);
}

namespace {
std::shared_ptr<const BuildRecipe> registeredRecipe(const std::string& target, std::optional<Error>& error) {
  auto b = findBackend(target);
  if (!b) {
    error = b.error();
    return nullptr;
  }
  return (*b)->makeRecipe();
}

// Flags and link settings as keys see them: where the data directory is installed replaced by a placeholder.
// Its files are keyed by content (the recipe's runtimeDigest, a kernel's source and the headers beside it), so
// two installs or build trees of the same release (CI's release and ASan builds, a relocated prefix) share
// their objects and SuperKernels; a compile still gets the real paths.
std::string keyText(std::string text) {
  static const std::string data = dataRuntimeDir().parent_path().string() + "/";
  if (data.size() <= 1) return text;
  for (size_t at = text.find(data); at != std::string::npos; at = text.find(data, at + 1))
    text.replace(at, data.size(), "<superkernel-data>/");
  return text;
}
}  // namespace

Driver::Driver(Toolchain toolchain, std::shared_ptr<Cache> cache, DriverConfig config)
    : Driver(nullptr, std::move(toolchain), std::move(cache), std::move(config)) {
  std::optional<Error> error;
  impl_->recipe = registeredRecipe(impl_->tc.target, error);
  impl_->recipeError = error;
  if (impl_->recipe) impl_->archKey = impl_->recipe->archKey(impl_->cfg.arch);
}

Driver::~Driver() = default;
Driver::Driver(Driver&&) noexcept = default;
Driver& Driver::operator=(Driver&&) noexcept = default;

const Toolchain& Driver::toolchain() const { return impl_->tc; }
const BuildRecipe& Driver::recipe() const { return *impl_->recipe; }
const std::shared_ptr<Cache>& Driver::cache() const { return impl_->cache; }
const DriverConfig& Driver::config() const { return impl_->cfg; }
unsigned Driver::jobs() const { return impl_->jobs; }

std::vector<std::string> Driver::objectFlags(const KernelVariant& v, const Options& o) const {
  if (!impl_->recipe) return {};
  return impl_->recipe->objectFlags(v, o, impl_->cfg.arch);
}

Expected<std::string> Driver::objectKey(const KernelVariant& v, const Options& o, KeyInputs* inputs) const {
  if (impl_->recipeError) return *impl_->recipeError;
  // The last gate before argv: whatever path the inputs took (op list, Graph, Options built in C++).
  if (std::string p = grammar::compileOptionsProblem(o.compileOptions); !p.empty()) return badInput(p);
  if (std::string p = grammar::macrosProblem(v.macros, v.decl.entry); !p.empty())
    return badInput(fmt::format("kernel '{}': {}", v.decl.name, p));
  const fs::path& src = v.decl.sourcePath;
  auto bytes = readFileBytes(src);
  if (!bytes) return badInput(fmt::format("kernel '{}': {}", v.decl.name, bytes.error().message()));
  SK_ASSIGN_OR_RETURN(std::string rt, impl_->runtime());
  KeyBuilder kb;
  kb.recordInputs(inputs);
  kb.add("kind", kKindObject);
  kb.add("target", impl_->tc.target);
  kb.add("arch", impl_->archKey);
  kb.add("toolchain", impl_->tc.identity());
  kb.add("flags", keyText(joinFlags(objectFlags(v, o))));
  kb.add("symbol", symbolOf(v));
  // A recipe that rewrites its objects after compiling (cpu: objcopy) keys the tool it rewrites with.
  SK_ASSIGN_OR_RETURN(const std::string postProcess, impl_->recipe->postProcessKey(impl_->tc));
  if (!postProcess.empty()) kb.add("postprocess", postProcess);
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
  const BuildRecipe& recipe = *impl.recipe;
  std::atomic<bool> ran{false};
  std::vector<std::string> flags = objectFlags(v, o);
  BuildFn build = [&](const fs::path& staging) -> Expected<BuildOutput> {
    ran = true;
    const std::string name = recipe.objectName();
    std::vector<std::string> args = recipe.objectArgs(flags, v, staging / name);
    auto res = impl.runCompiler(args, fmt::format("compiling kernel '{}' ({})", v.decl.name, symbolOf(v)));
    if (!res) return std::move(res).error();
    if (!res->err.empty()) spdlog::debug("compiler output for {}:\n{}", v.decl.name, res->err);
    SK_RETURN_IF_ERROR(recipe.postProcessObject(staging / name, v, impl));
    BuildOutput out;
    out.artifactName = name;
    out.command = impl.command(args);
    out.toolchain = impl.tc.path.string() + " (" + impl.tc.versionLine() + ")";
    out.metadata = nlohmann::json{{"kernel", v.decl.name},
                                  {"entry", v.decl.entry},
                                  {"symbol", symbolOf(v)},
                                  {"source", v.decl.sourcePath.string()},
                                  {"macros", v.macros}}
                       .dump();
    // Only on a build: the inputs are hashed a second time, so a key that
    // does not reproduce (a source edited meanwhile) is not explained wrongly.
    auto again = objectKey(v, o, &out.keyInputs);
    if (!again || *again != key) out.keyInputs.clear();
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
  auto size = recipe.symbolSize(*oa.bytes, oa.symbol);
  if (!size) return Error(size.error()).context(fmt::format("kernel '{}' ({})", v.decl.name, v.decl.sourcePath.string()));
  oa.symbolSize = *size;
  return oa;
}

Expected<ObjectArtifact> Driver::compileObject(const KernelVariant& v, const Options& o) const {
  SK_RETURN_IF_ERROR(impl_->ready());
  SK_ASSIGN_OR_RETURN(std::string key, objectKey(v, o));
  return compileWithKey(v, o, key);
}

Expected<std::vector<ObjectArtifact>> Driver::compileObjects(const std::vector<KernelVariant>& variants,
                                                             const Options& o, const ProgressFn& progress) const {
  SK_RETURN_IF_ERROR(impl_->ready());
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
  std::mutex progressMutex;
  size_t done = 0;
  if (progress && total > 0) progress(0, total);
  // The caller's compile budget follows the jobs; with all-or-nothing, the
  // first failure cancels the compiles still queued or running.
  const std::shared_ptr<CompileBudget> budget = currentBudget();
  parallelForEach(total, impl_->jobs, [&](size_t s) {
    BudgetScope scope(budget);
    size_t i = unique[s];
    results[s].emplace(compileWithKey(variants[i], o, keys[i]));
    if (!results[s]->ok() && budget && budget->allOrNothing())
      budget->cancel(fmt::format("kernel '{}' failed to compile", variants[i].decl.name));
    std::lock_guard<std::mutex> g(progressMutex);
    ++done;
    if (progress) progress(done, total);
  });
  size_t failures = 0, cancelled = 0;
  std::optional<Error> first;
  for (size_t s = 0; s < total; ++s) {
    if (!results[s]->ok()) {
      ++failures;
      // The cause, not the compiles it cancelled.
      if (budget && budget->cancelled() && results[s]->error().message().find("cancelled") != std::string::npos) {
        ++cancelled;
        continue;
      }
      if (!first) first = results[s]->error();
    }
  }
  if (!first && failures > 0) {
    for (size_t s = 0; s < total && !first; ++s)
      if (!results[s]->ok()) first = results[s]->error();
  }
  if (first) {
    if (cancelled > 0)
      return Error(*first).context(fmt::format("{} of {} kernels failed to compile, {} more cancelled; first",
                                               failures - cancelled, total, cancelled));
    if (failures > 1) return Error(*first).context(fmt::format("{} of {} kernels failed to compile; first", failures, total));
    return *first;
  }
  std::vector<ObjectArtifact> out;
  out.reserve(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) out.push_back(**results[slotOf[i]]);
  return out;
}

Expected<std::string> Driver::superKernelKey(const SuperKernelSource& source, const std::vector<ObjectArtifact>& objects,
                                             const Options& o, KeyInputs* inputs) const {
  if (impl_->recipeError) return *impl_->recipeError;
  if (std::string p = grammar::compileOptionsProblem(o.compileOptions); !p.empty()) return badInput(p);
  SK_ASSIGN_OR_RETURN(std::string rt, impl_->runtime());
  KeyBuilder kb;
  kb.recordInputs(inputs);
  kb.add("kind", kKindSuperKernel);
  kb.add("target", impl_->tc.target);
  kb.add("arch", impl_->archKey);
  kb.add("toolchain", impl_->tc.identity());
  kb.add("link", keyText(impl_->recipe->linkKey(o, impl_->cfg.arch)));
  kb.add("artifact", impl_->recipe->artifactName());
  if (impl_->cfg.sourceEncodesPlanOptions) kb.add("build-options", buildOptionsText(o));
  else kb.add("options", o.canonical());
  kb.add("source", source.text);
  if (!source.launch.empty()) kb.add("launch", source.launch);  // absent for targets with none: their keys stay
  kb.add("objects", uint64_t{objects.size()});
  for (const auto& ob : objects) kb.add("object", ob.key);
  kb.add("runtime", rt);
  return kb.finish();
}

Expected<LinkResult> Driver::linkSuperKernel(const SuperKernelSource& source, const std::vector<ObjectArtifact>& objects,
                                             const Options& o, const fs::path& outputFile) const {
  if (impl_->recipeError) return *impl_->recipeError;
  LinkRequest req;
  req.source = source.text;
  req.launch = source.launch;
  req.options = &o;
  req.outputFile = outputFile;
  // Distinct objects (the same variant may appear more than once).
  std::map<std::string, bool> written;
  for (const auto& ob : objects) {
    if (!ob.bytes) return internalError("linkSuperKernel: an object without bytes");
    if (written[ob.key]) continue;
    written[ob.key] = true;
    req.objects.push_back(LinkObject{ob.key, ob.bytes});
  }
  SK_ASSIGN_OR_RETURN(LinkOutput out, impl_->recipe->link(req, *impl_));
  LinkResult lr;
  lr.output = outputFile;
  lr.command = std::move(out.command);
  lr.diagnostics = std::move(out.diagnostics);
  return lr;
}

Expected<SuperKernelArtifact> Driver::buildSuperKernel(const SuperKernelSource& source,
                                                       const std::vector<ObjectArtifact>& objects, const Options& o,
                                                       std::string_view metadataJson) const {
  return buildSuperKernel(source, objects, o, [&] { return std::string(metadataJson); });
}

Expected<SuperKernelArtifact> Driver::buildSuperKernel(const SuperKernelSource& source,
                                                       const std::vector<ObjectArtifact>& objects, const Options& o,
                                                       const std::function<std::string()>& metadataJson) const {
  SK_RETURN_IF_ERROR(impl_->ready());
  SK_ASSIGN_OR_RETURN(std::string key, superKernelKey(source, objects, o));
  std::atomic<bool> ran{false};
  CacheRequest req;
  req.key = key;
  req.kind = kKindSuperKernel;
  req.hold = true;
  req.build = [&](const fs::path& staging) -> Expected<BuildOutput> {
    ran = true;
    const std::string name = impl_->recipe->artifactName();
    SK_ASSIGN_OR_RETURN(LinkResult lr, linkSuperKernel(source, objects, o, staging / name));
    BuildOutput out;
    out.artifactName = name;
    out.command = lr.command;
    out.toolchain = impl_->tc.path.string() + " (" + impl_->tc.versionLine() + ")";
    // Parsed only when the entry is built: a cache hit never reads it (the
    // hit path stays free of JSON work).
    const std::string metaText = metadataJson ? metadataJson() : std::string("{}");
    SK_ASSIGN_OR_RETURN(nlohmann::json meta, detail::parseJsonText(metaText, "the SuperKernel's metadata"));
    if (!meta.is_object()) meta = nlohmann::json{{"metadata", std::move(meta)}};
    if (!meta.contains("object_keys")) {
      std::vector<std::string> ks;
      for (const auto& ob : objects) ks.push_back(ob.key);
      meta["object_keys"] = ks;
    }
    if (!meta.contains("options")) meta["options"] = o.canonical();
    // The compiler as it was asked for and spawned (its name decides clang
    // vs clang++): sk-cache verify replays the entry with it, not with
    // whatever SK_CXX says today, so a g++ build is not called stale.
    if (!meta.contains("compiler")) meta["compiler"] = impl_->tc.invocation.string();
    out.metadata = meta.dump();
    auto again = superKernelKey(source, objects, o, &out.keyInputs);
    if (!again || *again != key) out.keyInputs.clear();
    return out;
  };
  SK_ASSIGN_OR_RETURN(ArtifactPtr art, impl_->cache->getOrBuild(req));
  SuperKernelArtifact sk;
  sk.key = key;
  sk.artifact = std::move(art);
  sk.cached = !ran;
  return sk;
}

void applyCodeBytes(std::vector<KernelVariant>& variants, const std::vector<ObjectArtifact>& objects) {
  for (size_t i = 0; i < variants.size() && i < objects.size(); ++i) variants[i].codeBytes = objects[i].symbolSize;
}

}  // namespace sk
