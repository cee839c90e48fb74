#include "superkernel/session/Session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "superkernel/cpu/superkernel_rt.h"
#include "superkernel/support/Log.h"

namespace sk {

Expected<Options> mergeOptions(const std::vector<std::string_view>& optionStrings) {
  Options merged;
  for (std::string_view s : optionStrings) {
    auto next = parseOptions(s, merged);
    if (!next) return std::move(next).error();
    merged = std::move(*next);
  }
  return merged;
}

struct Session::Impl {
  SessionOptions options;
  std::unique_ptr<Executor> executor;
  Toolchain toolchain;
  std::shared_ptr<Cache> cache;

  std::mutex mu;                                           // guards the maps below
  std::map<std::string, std::unique_ptr<Driver>> drivers;  // by arch
  std::map<std::string, std::shared_ptr<const Target>> targets;
  // Graph launches run immediately: one compiled single-op plan per distinct op.
  std::map<std::string, std::unique_ptr<CompiledPlan>> immediate;
  std::mutex immediateMu;

  Expected<Driver*> driver(const std::string& arch) {
    std::lock_guard lock(mu);
    auto it = drivers.find(arch);
    if (it != drivers.end()) return it->second.get();
    DriverConfig cfg;
    cfg.jobs = options.jobs;
    cfg.arch = arch;
    auto d = std::make_unique<Driver>(toolchain, cache, cfg);
    Driver* raw = d.get();
    drivers.emplace(arch, std::move(d));
    return raw;
  }

  Expected<std::shared_ptr<const Target>> target(const std::string& name) {
    std::lock_guard lock(mu);
    auto it = targets.find(name);
    if (it != targets.end()) return it->second;
    auto t = makeTarget(name);
    if (!t) return std::move(t).error();
    targets.emplace(name, *t);
    return *t;
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
  ToolchainRequest tr;
  tr.target = "cpu";
  tr.compiler = im.options.compiler;
  auto tc = findToolchain(tr);
  if (!tc) return std::move(tc).error().context("while creating a session");
  im.toolchain = std::move(*tc);
  CacheConfig cc;
  cc.root = im.options.cacheDir;
  cc.disk = im.options.diskCache;
  cc.readOnly = im.options.readOnlyCache;
  auto cache = Cache::open(cc);
  if (!cache) return std::move(cache).error().context("while opening the cache");
  im.cache = std::move(*cache);
  ExecutorOptions eo;
  eo.numWorkers = im.options.workers;
  eo.waitTimeoutMs = im.options.waitTimeoutMs;
  im.executor = std::make_unique<Executor>(eo);
  spdlog::debug("session: {} worker(s), compiler {}, cache {}", im.executor->numWorkers(),
                im.toolchain.versionLine(), im.cache->root().string());
  return s;
}

Executor& Session::executor() { return *impl_->executor; }
const Toolchain& Session::toolchain() const { return impl_->toolchain; }
const std::shared_ptr<Cache>& Session::cache() const { return impl_->cache; }
const SessionOptions& Session::options() const { return impl_->options; }

namespace {

// Runs fn(i) for i in [0, n) on up to `jobs` threads; returns the error of
// the lowest failing index (deterministic messages), after all finished.
Status parallelFor(size_t n, unsigned jobs, const std::function<Status(size_t)>& fn) {
  std::vector<std::optional<Error>> errors(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      Status s = fn(i);
      if (!s) errors[i] = s.error();
    }
  };
  unsigned threads = static_cast<unsigned>(std::min<size_t>(n, std::max(1u, jobs)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) return *e;
  return Status::success();
}

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

  CompiledPlan cp;
  cp.list = list;
  if (!request.target.empty()) cp.list.target = request.target;
  auto opts = mergeOptions({list.options, im.options.options, request.options});
  if (!opts) return std::move(opts).error().context(what + ": options");
  cp.options = *opts;

  auto target = im.target(cp.list.target);
  if (!target) return std::move(target).error().context(what);
  cp.target = *target;

  PlanConfig pc;
  pc.numWorkers = im.executor->numWorkers();
  pc.fuse = request.fuse;
  auto plan = planOpList(cp.list, cp.options, pc);
  if (!plan) return std::move(plan).error();  // the planner's messages name the op list already
  cp.plan = std::move(*plan);

  auto driverOr = im.driver(cp.list.arch);
  if (!driverOr) return std::move(driverOr).error();
  Driver& driver = **driverOr;

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
  nlohmann::json baseMeta;
  baseMeta["op_list"] = writeOpList(cp.list);
  baseMeta["options"] = cp.options.canonical();
  baseMeta["fuse"] = request.fuse;
  baseMeta["workers"] = pc.numWorkers;
  // What `sk-cache verify` replays and what `sk-cache inspect` shows: the
  // op list (relative paths resolve against base_dir) and the plan report.
  baseMeta["base_dir"] = cp.list.baseDir.string();
  baseMeta["plan_report"] = formatPlanReport(cp.plan);
  Status st = parallelFor(n, driver.jobs(), [&](size_t i) -> Status {
    const SuperKernelPlan& sk = cp.plan.steps[i];
    auto fail = [&](Error e) { return Status(std::move(e).context("while compiling " + stepLabel(sk))); };
    auto src = cp.target->emit(cp.plan, i);
    if (!src) return fail(std::move(src).error());
    std::vector<ObjectArtifact> objs;
    const auto& groupObjects = objects[sk.options.canonical()];
    for (uint32_t v : src->variants) objs.push_back(groupObjects.at(v));
    nlohmann::json meta = baseMeta;
    meta["step"] = i;
    meta["name"] = sk.name;
    auto art = driver.buildSuperKernel(src->text, objs, buildOptions(sk.options), meta);
    if (!art) return fail(std::move(art).error());
    if (!art->run) return fail(internalError("the shared object exports no run()"));
    CompiledStep& cs = cp.steps[i];
    cs.stepIndex = i;
    cs.name = sk.name;
    cs.source = std::move(*src);
    cs.artifact = std::move(*art);
    cs.run = cs.artifact.run;
    cs.cached = cs.artifact.cached;
    cs.numCores = sk.numCores;
    for (const PlanBuffer& b : sk.buffers) cs.listBuffers.push_back(b.listIndex);
    cs.pointers.assign(sk.buffers.size(), nullptr);
    for (const PlannedOp& op : sk.ops) cs.opNames.push_back(op.name);
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
    if (const KernelDecl* k = list.findKernel(op.kernel)) one.kernels.push_back(*k);
    Op o = op;
    o.scope.reset();
    o.scopeNull = false;
    one.ops.push_back(std::move(o));
    const std::vector<void*>& host = g->hostPointers();
    for (const auto& [param, a] : op.args) {
      if (!a.isBuffer()) continue;
      int bi = list.bufferIndex(a.buffer().buffer);
      if (bi < 0 || static_cast<size_t>(bi) >= host.size() || !host[static_cast<size_t>(bi)]) {
        return badInput(fmt::format("{}: buffer \"{}\" has no host memory (pass it to Graph::addBuffer) to run "
                                    "an unscoped launch immediately",
                                    op.name, a.buffer().buffer));
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
    std::lock_guard lock(im.immediateMu);  // run() of one CompiledPlan is not reentrant
    return run(*cp, host.data(), host.size());
  });
}

Status Session::run(CompiledPlan& plan, BufferSet& buffers) {
  if (buffers.size() != plan.list.buffers.size()) {
    return badInput(fmt::format("run: the buffer set has {} buffers, the op list {}", buffers.size(),
                                plan.list.buffers.size()));
  }
  return run(plan, buffers.pointers(), buffers.size());
}

Status Session::run(CompiledPlan& plan, void* const* buffers, size_t count) {
  if (count != plan.list.buffers.size()) {
    return badInput(fmt::format("run: {} buffer pointers given, the op list has {} buffers", count,
                                plan.list.buffers.size()));
  }
  Executor& ex = *impl_->executor;
  void* stream = const_cast<sk_services*>(ex.services());
  // Hot path: no allocation; the argument arrays were sized at compile time.
  for (CompiledStep& step : plan.steps) {
    for (size_t k = 0; k < step.listBuffers.size(); ++k) step.pointers[k] = buffers[step.listBuffers[k]];
    sk_run_args args;
    args.abi_version = SK_ABI_VERSION;
    args.num_buffers = static_cast<uint32_t>(step.pointers.size());
    args.buffers = step.pointers.data();
    const int rc = step.run(step.numCores, stream, &args);
    if (rc != 0) {
      std::string msg = ex.lastError();
      if (msg.empty()) msg = describeRunResult(rc);
      return runtimeError(std::move(msg)).context("while running " + stepLabel(plan.plan.steps[step.stepIndex]));
    }
  }
  return Status::success();
}

Expected<std::string> Session::runProfiled(CompiledPlan& plan, BufferSet& buffers) {
  bool any = std::any_of(plan.plan.steps.begin(), plan.plan.steps.end(),
                         [](const SuperKernelPlan& s) { return s.options.profiling; });
  if (!any) return badInput("runProfiled: the plan was not compiled with profiling=1");
  Executor& ex = *impl_->executor;
  ex.setProfiling(true);
  (void)ex.takeTrace();  // launch numbering restarts here: launch i = step i
  Status st = run(plan, buffers);
  std::vector<TraceEvent> events = ex.takeTrace();
  ex.setProfiling(false);
  if (!st) return st.error();
  std::vector<std::vector<std::string>> names;
  for (const CompiledStep& s : plan.steps) names.push_back(s.opNames);
  return Executor::traceToJson(events, names);
}

}  // namespace sk
