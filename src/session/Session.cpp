#include "superkernel/session/Session.h"

#include "superkernel/session/DeviceBuffers.h"
#include "session/PlanCompile.h"
#include "session/SyncCalibration.h"
#include "superkernel/support/Paths.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <functional>
#include <mutex>
#include <set>

#include "superkernel/driver/Deadline.h"
#include "superkernel/support/Log.h"
#include "superkernel/support/ThreadPool.h"
#include "superkernel/target/Backend.h"
#include "superkernel/target/Targets.h"

namespace sk {

Expected<Options> mergeOptions(const std::vector<std::string_view>& optionStrings) {
  Options merged;
  for (std::string_view s : optionStrings) {
    // Each string gets the op list's checks (compile-options grammar included) before it is merged: an
    // option string from the API or a tool is held to what the file's is.
    SK_RETURN_IF_ERROR(checkOptionString(s));
    auto next = parseOptions(s, merged);
    if (!next) return std::move(next).error();
    merged = std::move(*next);
  }
  return merged;
}

// Everything the session holds for one target in use: the back end's
// emitter and recipe, the toolchain, the device, and one driver per arch.
struct TargetState {
  std::string name;
  std::shared_ptr<const Emitter> emitter;
  std::shared_ptr<const BuildRecipe> recipe;
  Toolchain toolchain;
  std::unique_ptr<Device> device;
  std::mutex driversMu;
  std::map<std::string, std::unique_ptr<Driver>> drivers;  // by arch
};

struct Session::Impl {
  SessionOptions options;
  std::shared_ptr<Cache> cache;
  TargetState* cpu = nullptr;  // set up by create(), never removed

  std::mutex mu;  // guards `targets`
  std::map<std::string, std::unique_ptr<TargetState>, std::less<>> targets;
  // Graph launches run immediately: one compiled single-op plan per distinct op.
  std::map<std::string, std::unique_ptr<CompiledPlan>> immediate;
  std::mutex immediateMu;  // guards `immediate`

  Expected<TargetState*> target(std::string_view name) {
    std::lock_guard lock(mu);
    auto it = targets.find(name);
    if (it != targets.end()) return it->second.get();
    SK_ASSIGN_OR_RETURN(const Backend* b, findBackend(name));
    auto st = std::make_unique<TargetState>();
    st->name = b->name;
    SK_ASSIGN_OR_RETURN(st->emitter, b->makeEmitter());
    st->recipe = b->makeRecipe();
    ToolchainRequest tr;
    tr.target = b->name;
    tr.defaultCompiler = std::string(st->recipe->defaultCompiler());
    tr.compilerEnvVar = std::string(st->recipe->compilerEnvVar());
    tr.hint = st->recipe->compilerHint();
    if (b->host) tr.compiler = options.compiler;  // the `compiler` option names the host target's
    auto tc = findToolchain(tr);
    if (!tc) return std::move(tc).error().context("target " + b->name);
    st->toolchain = std::move(*tc);
    DeviceOptions dopt;
    dopt.cores = options.workers;
    dopt.waitTimeoutMs = options.waitTimeoutMs;
    dopt.runTimeoutMs = options.runTimeoutMs;
    dopt.onRunTimeout = options.onRunTimeout;
    dopt.communicator = options.communicator;
    SK_ASSIGN_OR_RETURN(st->device, b->makeDevice(dopt));
    TargetState* raw = st.get();
    targets.emplace(b->name, std::move(st));
    return raw;
  }

  Driver& driver(TargetState& t, const std::string& arch) {
    std::lock_guard lock(t.driversMu);
    auto it = t.drivers.find(arch);
    if (it != t.drivers.end()) return *it->second;
    DriverConfig cfg;
    cfg.jobs = options.jobs;
    cfg.timeout = compileLimits().perCompile;
    cfg.arch = arch;
    cfg.sourceEncodesPlanOptions = true;  // see buildOptions below
    auto d = std::make_unique<Driver>(t.recipe, t.toolchain, cache, cfg);
    Driver& raw = *d;
    t.drivers.emplace(arch, std::move(d));
    return raw;
  }
};

Session::Session() : impl_(std::make_unique<Impl>()) {}
Session::~Session() = default;

Expected<std::unique_ptr<Session>> Session::create(SessionOptions options) {
  initLogging();
  std::unique_ptr<Session> s(new Session());
  Impl& im = *s->impl_;
  im.options = std::move(options);
  // Options given to the session are checked now, not at the first compile.
  if (auto o = parseOptions(im.options.options); !o) {
    return std::move(o).error().context("session options");
  }
  if (Status st = checkDataDir(); !st) return st.error().context("while creating a session");
  CacheConfig cc;
  cc.root = im.options.cacheDir;
  cc.disk = im.options.diskCache;
  if (im.options.forceRecompile) cc.recompile = true;
  cc.remote = im.options.remoteCache;
  cc.readOnly = im.options.readOnlyCache;
  auto cache = Cache::open(cc);
  if (!cache) return std::move(cache).error().context("while opening the cache");
  im.cache = std::move(*cache);
  // The host target (cpu) is set up now: a missing compiler is an error
  // here, not at the first compile.
  auto cpu = im.target(hostTargetName());
  if (!cpu) return std::move(cpu).error().context("while creating a session");
  im.cpu = *cpu;
  spdlog::debug("session: {} cpu core(s), compiler {}, cache {}", (*cpu)->device->machine().totalCores(),
                (*cpu)->toolchain.versionLine(), im.cache->root().string());
  return s;
}

Expected<SyncCosts> Session::calibrateSync(std::string_view target) {
  SK_ASSIGN_OR_RETURN(const Backend* backend, findBackend(target));
  if (!backend->calibrateSync)
    return badInput(fmt::format("target {} has no sync calibration: its syncs are not chosen by measured costs",
                                target));
  SK_ASSIGN_OR_RETURN(TargetState * state, impl_->target(target));
  Device* dev = state->device.get();
  const Impl& im = *impl_;
  const bool keep = im.options.diskCache && !im.options.readOnlyCache && !im.cache->usingPrivateFallback();
  if (keep) SK_RETURN_IF_ERROR(prepareSyncCalibrationDir(im.cache->root()));
  SK_ASSIGN_OR_RETURN(SyncCosts costs, backend->calibrateSync(*dev, CalibrationContext{im.cache, &state->toolchain}));
  if (keep) {
    const uint32_t measured = dev->machine().deviceCores();
    SK_ASSIGN_OR_RETURN(std::filesystem::path file, saveSyncCalibration(im.cache->root(), target, measured, costs));
    costs.source = "calibrated, " + file.string();
    // Plans look the costs up by the core count of their machine model, which for a GPU comes from the arch,
    // not from the device (cuda's "native" plans for 132 SMs): on a GPU with another count (an H100 PCIe's
    // 114) the file above would never be read. So the costs are also saved under the count the target's
    // default plan uses: they describe this machine, which is the one those plans run on.
    auto planned = backend->machineModel(MachineQuery{"native", measured});
    if (planned && planned->deviceCores() != measured) {
      SK_ASSIGN_OR_RETURN(std::filesystem::path also,
                          saveSyncCalibration(im.cache->root(), target, planned->deviceCores(), costs));
      spdlog::info("sync calibration: measured on {} {}, also saved as {} for the plans of arch native ({} {})",
                   measured, planned->coreNoun, also.string(), planned->deviceCores(), planned->coreNoun);
      costs.source += " (also " + also.string() + ")";
    }
  }
  return costs;
}

Expected<Device*> Session::device(std::string_view target) {
  SK_ASSIGN_OR_RETURN(TargetState * t, impl_->target(target));
  return t->device.get();
}
const Toolchain& Session::toolchain() const { return impl_->cpu->toolchain; }
Expected<const Toolchain*> Session::toolchain(std::string_view target) {
  SK_ASSIGN_OR_RETURN(TargetState * t, impl_->target(target));
  return &t->toolchain;
}
const std::shared_ptr<Cache>& Session::cache() const { return impl_->cache; }
const SessionOptions& Session::options() const { return impl_->options; }

namespace {

// The options a SuperKernel build is keyed and compiled with. Everything
// that changes the generated code (early-start, preload-code, profiling,
// stream-fusion, ...) is already in the source text the key hashes; only
// what reaches the compiler command stays. So identical sources built under
// different option sets (e.g. the unfused steps of every early-start mode)
// share one cache entry instead of compiling again.
Options buildOptions(const Options& o) {
  Options b;
  b.compileOptions = o.compileOptions;
  b.funcAlign = o.funcAlign;
  b.splitMode = o.splitMode;
  return b;
}

std::string stepLabel(const SuperKernelPlan& sk) {
  return fmt::format("{} {}", sk.fused ? "SuperKernel" : "unfused op", sk.name);
}

}  // namespace

Expected<CompiledPlan> Session::compile(const OpList& list, const CompileRequest& request) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& im = *impl_;
  const std::string what = list.origin.empty() ? "op list" : list.origin;
  // One deadline for the whole compile (SK_COMPILE_TIMEOUT_S), all or
  // nothing: a plan needs every object and link, so the first failure stops
  // the rest. A compile nested in another keeps the outer budget.
  std::optional<BudgetScope> budgetScope;
  if (!currentBudget())
    budgetScope.emplace(std::make_shared<CompileBudget>(compileLimits().total, /*allOrNothing=*/true));

  // The plan, as planOnly makes it (session/PlanCompile.h), on this session's set-up target.
  TargetState* tsp = nullptr;
  auto resolve = [&](const std::string& name) -> Expected<ResolvedTarget> {
    SK_ASSIGN_OR_RETURN(tsp, im.target(name));
    return ResolvedTarget{tsp->emitter, tsp->device.get()};
  };
  // The sync calibration lives beside the disk cache's entries (a memory-only session reads none).
  const std::filesystem::path calibration =
      im.options.diskCache && !im.cache->usingPrivateFallback() ? im.cache->root() : std::filesystem::path();
  auto planned = planCompile(list, request, im.options.options, im.options.workers, resolve, calibration);
  if (!planned) return std::move(planned).error();
  CompiledPlan cp = std::move(*planned);
  TargetState& ts = *tsp;

  Driver& driver = im.driver(ts, cp.list.arch);

  // Sub-kernel objects, once per distinct variant per option set (scopes
  // may carry their own compile-options / func-align). Their symbol sizes
  // feed the preload byte counts, so this precedes code generation.
  std::map<std::string, std::pair<Options, std::set<uint32_t>>> groups;
  for (const SuperKernelPlan& sk : cp.plan.steps) {
    auto& g = groups[sk.options.canonical()];
    g.first = sk.options;
    for (const PlannedOp& op : sk.ops) {
      g.second.insert(op.variant);
      if (op.preloadVariant >= 0) g.second.insert(static_cast<uint32_t>(op.preloadVariant));
    }
  }
  // objects[group key][variant] -> artifact
  std::map<std::string, std::map<uint32_t, ObjectArtifact>> objects;
  for (auto& [key, g] : groups) {
    std::vector<KernelVariant> vars;
    std::vector<uint32_t> idx(g.second.begin(), g.second.end());
    for (uint32_t v : idx) vars.push_back(cp.plan.variants[v]);
    ProgressFn progress;
    if (im.options.progress) {
      progress = [&](size_t done, size_t total) { im.options.progress("objects", done, total); };
    }
    auto objs = driver.compileObjects(vars, g.first, progress);
    if (!objs) return std::move(objs).error().context(what + ": while compiling sub-kernels");
    for (size_t i = 0; i < idx.size(); ++i) {
      cp.plan.variants[idx[i]].codeBytes = (*objs)[i].symbolSize;
      if ((*objs)[i].cached) {
        ++cp.stats.objectHits;
      } else {
        ++cp.stats.objectMisses;
      }
      objects[key].emplace(idx[i], std::move((*objs)[i]));
    }
  }
  cp.stats.objects = cp.plan.variants.size();

  // Generate and build every step; steps are independent, so they compile
  // in parallel (an unfused reference of N ops is N small builds).
  const size_t n = cp.plan.steps.size();
  cp.steps.resize(n);
  std::mutex progressMu;
  size_t built = 0;
  // What `sk-cache verify` replays and what `sk-cache inspect` shows: the
  // op list (relative paths resolve against base_dir) and the plan report.
  // Made once, and only when a step is built: it holds the whole op list
  // (about 0.7 MB of JSON for the 1525-op decode stack), and a compile whose
  // steps are all cache hits (the unfused reference: 1525 steps) must not
  // write it out for every step.
  nlohmann::json baseMeta;
  std::once_flag baseMetaOnce;
  auto stepMeta = [&](size_t i, const std::string& name) {
    std::call_once(baseMetaOnce, [&] {
      baseMeta["op_list"] = writeOpList(cp.list);
      baseMeta["options"] = cp.options.canonical();
      baseMeta["fuse"] = request.fuse;
      baseMeta["workers"] = cp.plan.machine.deviceCores();  // what sk-cache verify re-creates the machine with
      baseMeta["target"] = cp.list.target;
      baseMeta["base_dir"] = cp.list.baseDir.string();
      baseMeta["plan_report"] = formatPlanReport(cp.plan);
    });
    nlohmann::json meta = baseMeta;
    meta["step"] = i;
    meta["name"] = name;
    return meta.dump();
  };
  const std::shared_ptr<CompileBudget> budget = currentBudget();  // the compile deadline follows the steps
  Status st = parallelFor(n, driver.jobs(), [&](size_t i) -> Status {
    BudgetScope budgetScope(budget);
    const SuperKernelPlan& sk = cp.plan.steps[i];
    auto fail = [&](Error e) { return Status(std::move(e).context("while compiling " + stepLabel(sk))); };
    auto src = cp.target->emit(cp.plan, i);
    if (!src) return fail(std::move(src).error());
    std::vector<ObjectArtifact> objs;
    const auto& groupObjects = objects[sk.options.canonical()];
    for (uint32_t v : src->variants) objs.push_back(groupObjects.at(v));
    const std::function<std::string()> metaText = [&] { return stepMeta(i, sk.name); };
    const SuperKernelSource source{src->text, src->launch};
    auto art = driver.buildSuperKernel(source, objs, buildOptions(sk.options), metaText);
    if (!art) return fail(std::move(art).error());
    auto kernel = ts.device->load(*art->artifact);
    if (!kernel && art->artifact->origin == Artifact::Origin::Disk) {
      // Verified bytes that do not load: quarantine the entry, build again.
      im.cache->discard(art->key, kernel.error().message());
      art = driver.buildSuperKernel(source, objs, buildOptions(sk.options), metaText);
      if (!art) return fail(std::move(art).error());
      kernel = ts.device->load(*art->artifact);
    }
    if (!kernel) return fail(std::move(kernel).error());
    CompiledStep& cs = cp.steps[i];
    cs.stepIndex = i;
    cs.name = sk.name;
    cs.source = std::move(*src);
    cs.artifact = std::move(*art);
    cs.kernel = std::move(*kernel);
    cs.cached = cs.artifact.cached;
    cs.numCores = sk.numCores;
    for (const PlanBuffer& b : sk.buffers) cs.listBuffers.push_back(b.listIndex);
    for (const PlannedOp& op : sk.ops) cs.opNames.push_back(op.name);
    cs.label = fmt::format("step {} ({})", i, stepLabel(sk));
    if (im.options.progress) {
      std::lock_guard lock(progressMu);
      im.options.progress("superkernels", ++built, n);
    }
    return Status::success();
  });
  if (!st) return st.error().context(what);
  for (const CompiledStep& cs : cp.steps) {
    if (cs.cached) {
      ++cp.stats.superKernelHits;
    } else {
      ++cp.stats.superKernelMisses;
    }
  }
  cp.stats.compileTime = std::chrono::steady_clock::now() - t0;
  spdlog::debug("{}: {} step(s) compiled in {:.3f} s (superkernels {} hit / {} miss, objects {} hit / {} miss)", what,
                n, std::chrono::duration<double>(cp.stats.compileTime).count(), cp.stats.superKernelHits,
                cp.stats.superKernelMisses, cp.stats.objectHits, cp.stats.objectMisses);
  return cp;
}

Expected<CompiledPlan> Session::compile(const Graph& graph, const CompileRequest& request) {
  OpList list = graph.opList();
  std::vector<Op> ops;
  for (size_t i = 0; i < list.ops.size(); ++i)
    if (!graph.ranImmediately(i)) ops.push_back(list.ops[i]);
  list.ops = std::move(ops);
  if (list.origin.empty()) list.origin = "graph";
  return compile(list, request);
}

void Session::attach(Graph& graph) {
  Graph* g = &graph;
  graph.setLaunchHook([this, g](const OpList& list, size_t opIndex) -> Status {
    Impl& im = *impl_;
    if (opIndex >= list.ops.size()) return internalError("launch hook: op index out of range");
    const Op& op = list.ops[opIndex];
    // A one-op list with every buffer (so indices match hostPointers()).
    OpList one;
    one.target = list.target;
    one.arch = list.arch;
    one.options = list.options;
    one.baseDir = list.baseDir;
    one.origin = "graph launch " + op.name;
    one.buffers = list.buffers;
    one.groups = list.groups;  // a collective's group
    if (const KernelDecl* k = list.findKernel(op.kernel)) one.kernels.push_back(*k);
    Op o = op;
    o.scope.reset();
    o.scopeNull = false;
    one.ops.push_back(std::move(o));
    const std::vector<void*>& host = g->hostPointers();
    for (const auto& [param, a] : op.args) {
      if (a.isScalar()) continue;
      const std::string& buffer = a.isBuffer() ? a.buffer().buffer : a.runtime().buffer;
      int bi = list.bufferIndex(buffer);
      if (bi < 0 || static_cast<size_t>(bi) >= host.size() || !host[static_cast<size_t>(bi)]) {
        return badInput(fmt::format("{}: buffer \"{}\" has no host memory (pass it to Graph::addBuffer) to run "
                                    "an unscoped launch immediately",
                                    op.name, buffer));
      }
    }
    std::string key = writeOpList(one);
    CompiledPlan* cp = nullptr;
    {
      std::lock_guard lock(im.immediateMu);
      auto it = im.immediate.find(key);
      if (it != im.immediate.end()) cp = it->second.get();
    }
    if (!cp) {
      CompileRequest req;
      req.fuse = false;
      auto compiled = compile(one, req);
      if (!compiled) return std::move(compiled).error();
      std::lock_guard lock(im.immediateMu);
      auto& slot = im.immediate[key];
      if (!slot) slot = std::make_unique<CompiledPlan>(std::move(*compiled));
      cp = slot.get();
    }
    return run(*cp, host.data(), host.size());
  });
}

Status Session::run(const CompiledPlan& plan, BufferSet& buffers) {
  if (buffers.size() != plan.list.buffers.size()) {
    return badInput(fmt::format("run: the buffer set has {} buffers, the op list {}", buffers.size(),
                                plan.list.buffers.size()));
  }
  if (!plan.device) return badInput("run: the plan was not compiled by a session");
  // Device memory: upload, run, download (host memory: the set's own, nothing copied).
  DeviceBuffers memory(*plan.device, buffers);
  SK_RETURN_IF_ERROR(memory.upload());
  SK_RETURN_IF_ERROR(run(plan, memory.pointers(), memory.size()));
  return memory.download();
}

namespace {
// One run()'s argument arrays. Each thread keeps one between its runs, so
// the hot path allocates nothing once warm, and runs on several threads
// (of one plan too) never share them. A run takes its thread's scratch for
// its duration: a nested run on the same thread would find none and make
// its own.
struct RunScratch {
  std::vector<void*> pointers;
  std::vector<SideRun> sides;
};
RunScratch& threadScratch() {
  thread_local RunScratch scratch;
  return scratch;
}
class ScratchLease {
 public:
  ScratchLease() : s(std::move(threadScratch())) {}
  ~ScratchLease() { threadScratch() = std::move(s); }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  RunScratch s;
};
}  // namespace

Status Session::run(const CompiledPlan& plan, void* const* buffers, size_t count) {
  if (count != plan.list.buffers.size()) {
    return badInput(fmt::format("run: {} buffer pointers given, the op list has {} buffers", count,
                                plan.list.buffers.size()));
  }
  if (!plan.device) return badInput("run: the plan was not compiled by a session");
  Device& dev = *plan.device;
  void* stream = dev.defaultStream();
  ScratchLease lease;
  std::vector<void*>& ptrs = lease.s.pointers;
  std::vector<SideRun>& sideRuns = lease.s.sides;
  for (const CompiledStep& step : plan.steps) {
    const SuperKernelPlan& sp = plan.plan.steps[step.stepIndex];
    if (sp.besideStep >= 0) continue;  // runs with its SuperKernel
    // The step's arguments, then each side launch's, one after the other (sized first: no reallocation
    // once pointers into it are taken).
    size_t total = step.listBuffers.size();
    for (const SideLaunch& side : sp.sides) total += plan.steps[side.step].listBuffers.size();
    ptrs.resize(total);
    size_t at = 0;
    auto fill = [&](const CompiledStep& s) {
      void** out = ptrs.data() + at;
      for (uint32_t b : s.listBuffers) ptrs[at++] = buffers[b];
      return out;
    };
    void** args = fill(step);
    sideRuns.clear();
    for (const SideLaunch& side : sp.sides) {
      const CompiledStep& ss = plan.steps[side.step];
      void** sideArgs = fill(ss);
      sideRuns.push_back(SideRun{ss.kernel.get(), sideArgs, static_cast<uint32_t>(ss.listBuffers.size()),
                                 side.stream, &ss.label});
    }
    dev.setLaunchContext(&step.label, &step.opNames);  // names for the launch watchdog's report
    const auto numArgs = static_cast<uint32_t>(step.listBuffers.size());
    Status st = sp.sides.empty() ? dev.run(*step.kernel, step.numCores, stream, args, numArgs)
                                 : dev.runBeside(*step.kernel, step.numCores, stream, args, numArgs, sideRuns);
    dev.setLaunchContext(nullptr, nullptr);
    if (!st) return st.error().context("while running " + stepLabel(plan.plan.steps[step.stepIndex]));
  }
  return Status::success();
}

Expected<std::unique_ptr<LaunchGraph>> Session::captureGraph(const CompiledPlan& plan, void* const* buffers,
                                                             size_t count, GraphLaunch kind) {
  if (count != plan.list.buffers.size()) {
    return badInput(fmt::format("captureGraph: {} buffer pointers given, the op list has {} buffers", count,
                                plan.list.buffers.size()));
  }
  if (!plan.device) return badInput("captureGraph: the plan was not compiled by a session");
  std::vector<std::vector<void*>> args;
  args.reserve(plan.steps.size());  // GraphStep points into these: no reallocation
  std::vector<GraphStep> steps;
  for (const CompiledStep& step : plan.steps) {
    const SuperKernelPlan& sp = plan.plan.steps[step.stepIndex];
    if (sp.fused || !sp.sides.empty() || sp.besideStep >= 0)
      return badInput(fmt::format("captureGraph: {} is not an unfused launch; a launch graph replays each launch "
                                  "unchanged, which only an unfused plan (CompileRequest::fuse = false) allows",
                                  stepLabel(sp)));
    std::vector<void*>& a = args.emplace_back();
    for (uint32_t b : step.listBuffers) a.push_back(buffers[b]);
    steps.push_back(GraphStep{step.artifact.artifact.get(), step.numCores, a.data(), static_cast<uint32_t>(a.size())});
  }
  auto graph = plan.device->captureGraph(steps, kind);
  if (!graph)
    return std::move(graph).error().context(kind == GraphLaunch::Pdl ? "Graph + PDL capture" : "Graph capture");
  return graph;
}

Expected<std::string> Session::runProfiled(const CompiledPlan& plan, BufferSet& buffers) {
  bool any = std::any_of(plan.plan.steps.begin(), plan.plan.steps.end(),
                         [](const SuperKernelPlan& s) { return s.options.profiling; });
  if (!any) return badInput("runProfiled: the plan was not compiled with profiling=1");
  if (!plan.device) return badInput("runProfiled: the plan was not compiled by a session");
  Device& dev = *plan.device;
  SK_RETURN_IF_ERROR(dev.setProfiling(true));  // launch numbering restarts here: launch i = step i
  Status st = run(plan, buffers);
  std::vector<std::vector<std::string>> names;
  for (const CompiledStep& s : plan.steps) names.push_back(s.opNames);
  auto trace = dev.takeTrace(names);
  (void)dev.setProfiling(false);
  if (!st) return st.error();
  return trace;
}

}  // namespace sk
