// superkernel benchmark suite (issue 6; DESIGN section 8 targets). Run by
// scripts/bench.sh, which generates the op lists with bench/gen_sweep.py.
//
//   sk_bench_suite --ops DIR --out DIR [--only boundary,decode,loop,compile,sweep,static,kernels,blockdim,a2a,fanin]
//                  [--smoke]
//
// Method (why the ratios are fair on a noisy 2-core VM):
//  - every comparison runs its variants side by side in ONE process, with
//    interleaved repetitions (A B C, B C A, C A B, ...: the starting variant
//    rotates so none always runs first after the pause); each sample is a
//    batch of back-to-back runs (~sampleMs), each run timed alone, and the
//    sample is the batch's median run (robust to preemption, see sample());
//    tables show the median and min-max of the samples over the repetitions;
//  - ratios (speedups, percentages, overhead minus ideal) are computed per
//    repetition from samples taken seconds apart, then summarized, so slow
//    phases of the machine hit both sides of a ratio;
//  - between samples the process sleeps a few ms so that the previous
//    variant's spinning threads (the executor's idle spin ~50 us, libgomp's
//    GOMP_SPINCOUNT spin) are asleep before the next variant starts;
//  - every variant runs the same compiled sub-kernel objects (see
//    Baselines.h) with the same block -> worker mapping; buffers are created
//    once per op list and reused, so the data is in the same cache state.
#include <fmt/format.h>
#include <omp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "Baselines.h"
#include "superkernel/superkernel.h"

extern char** environ;

namespace fs = std::filesystem;
using skbench::BenchCall;
using skbench::Baselines;

namespace {

// ---- options and small helpers ---------------------------------------------

struct Config {
  fs::path ops, out;
  fs::path self;               // this executable (children)
  std::vector<std::string> only;
  bool smoke = false;
  int reps = 7;                // interleaved repetitions (>= 5)
  double sampleMs = 40;        // length of one sample batch
  int settleMs = 5;            // pause before each sample
  int compileReps = 3;         // cold compiles (each takes seconds)
  bool sessionUnfused = true;  // decode (a) through Session fuse=false (one .so per op)
  std::string options;         // SessionOptions::options (merged over every op list's)
  // Decode stacks of section 2 (the op lists' file names without .json).
  std::vector<std::string> stacks = {"decode_stack_shared_weights", "decode_stack", "decode_small"};
  int loopTokens = 32;         // tokens per sample of the decode loop (section 2b)
};
Config cfg;

// The fused step without its data preload, for the side-by-side columns of sections 2, 11 and 12.
constexpr const char* kNoDataPreload = "preload-data=none";

[[noreturn]] void die(const std::string& msg) {
  fmt::print(stderr, "sk_bench_suite: {}\n", msg);
  std::exit(1);
}
template <class T>
T must(sk::Expected<T> e, const std::string& what) {
  if (!e) die(what + ": " + e.error().message());
  return std::move(*e);
}
void must(const sk::Status& s, const std::string& what) {
  if (!s) die(what + ": " + s.error().message());
}

using Clock = std::chrono::steady_clock;
double nowNs() { return double(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count()); }

struct Summary {
  double median = 0, min = 0, max = 0;
};
Summary summarize(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {med, v.front(), v.back()};
}
std::string fmtS(const Summary& s, int prec = 2) {
  return fmt::format("{:.{}f} ({:.{}f}–{:.{}f})", s.median, prec, s.min, prec, s.max, prec);
}

bool wanted(const std::string& name) {
  return cfg.only.empty() || std::find(cfg.only.begin(), cfg.only.end(), name) != cfg.only.end();
}

// A CSV file under --out, plus the markdown lines echoed to stdout.
struct Csv {
  std::ofstream f;
  explicit Csv(const std::string& name, const std::string& header) : f(cfg.out / name) {
    if (!f) die("cannot write " + (cfg.out / name).string());
    f << header << "\n";
  }
  template <class... A>
  void row(fmt::format_string<A...> s, A&&... a) {
    f << fmt::format(s, std::forward<A>(a)...) << "\n";
  }
};

// ---- the interleaved sampler -----------------------------------------------

struct Variant {
  std::string name;
  std::function<void()> once;  // one run (one decode step, one chain)
  std::vector<double> usPerRun;
  long iters = 1;
};

void sample(std::vector<Variant>& vs) {
  // Calibrate: warm up, then size each batch to ~sampleMs.
  for (Variant& v : vs) {
    v.once();
    double t0 = nowNs();
    int probe = 0;
    do {
      v.once();
      ++probe;
    } while (nowNs() - t0 < 2e6 && probe < 1000);
    double per = (nowNs() - t0) / probe;
    v.iters = std::clamp(long(cfg.sampleMs * 1e6 / per), 1L, 1000000L);
  }
  const size_t n = vs.size();
  for (int r = 0; r < cfg.reps; ++r) {
    for (size_t j = 0; j < n; ++j) {
      Variant& v = vs[(j + size_t(r)) % n];
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg.settleMs));
      v.once();  // the first run after the pause wakes the pool; not timed
      // Each run is timed alone and the sample is the MEDIAN run of the
      // batch: on a shared machine (load average above the core count) a
      // run that lost a worker to the scheduler costs whole time slices,
      // and a batch mean would measure the scheduler, not the variant. The
      // clock read (~25 ns) is negligible against runs of tens of µs or more.
      std::vector<double> runs(size_t(v.iters));
      for (long i = 0; i < v.iters; ++i) {
        double t0 = nowNs();
        v.once();
        runs[size_t(i)] = (nowNs() - t0) / 1e3;
      }
      v.usPerRun.push_back(summarize(std::move(runs)).median);
    }
  }
}
Variant& find(std::vector<Variant>& vs, const std::string& name) {
  for (Variant& v : vs)
    if (v.name == name) return v;
  die("no variant " + name);
}
// Per-repetition combination of two variants' samples (same repetition = same moment).
std::vector<double> perRep(const Variant& a, const Variant& b, const std::function<double(double, double)>& f) {
  std::vector<double> out;
  for (size_t i = 0; i < a.usPerRun.size() && i < b.usPerRun.size(); ++i) out.push_back(f(a.usPerRun[i], b.usPerRun[i]));
  return out;
}

// ---- the library pieces every benchmark uses -------------------------------

std::unique_ptr<sk::Session> gSession;

sk::Session& session() {
  if (!gSession) {
    sk::SessionOptions so;
    so.cacheDir = cfg.out / "cache";
    so.options = cfg.options;
    gSession = must(sk::Session::create(so), "session");
  }
  return *gSession;
}

// The session's cpu executor (the baselines drive it directly).
sk::Executor& cpuExec() { return *sk::cpuExecutor(*must(session().device("cpu"), "cpu device")); }

sk::OpList load(const std::string& file) { return must(sk::loadOpList(cfg.ops / file), "loading " + file); }

sk::CompiledPlan compile(const sk::OpList& list, const std::string& options, bool fuse = true) {
  sk::CompileRequest req;
  req.options = options;
  req.fuse = fuse;
  return must(session().compile(list, req), "compiling " + list.origin + " [" + options + "]");
}

// The same op list built with the previous builtin kernels (kernels/cpu/sk_simd.h):
// the baseline of the kernel benchmark and of the decode stack's "today's
// kernels" row. A kernel macro, because compile-options never carry -D.
sk::OpList withOldKernels(sk::OpList list) {
  for (sk::KernelDecl& k : list.kernels) k.macros["SK_KERNELS_BASELINE"] = "1";
  return list;
}

uint32_t syncCount(const sk::CompiledPlan& cp, sk::SyncKind k) {
  auto it = cp.plan.report.syncs.edges.find(k);
  return it == cp.plan.report.syncs.edges.end() ? 0 : it->second;
}
std::string syncSummary(const sk::CompiledPlan& cp) {
  std::string s;
  for (auto [k, n] : cp.plan.report.syncs.edges) s += fmt::format("{}{}={}", s.empty() ? "" : " ", sk::syncKindName(k), n);
  return fmt::format("{} step(s); edges: {}; barriers: {}", cp.plan.steps.size(), s, cp.plan.report.syncs.barriers);
}

// Runners. Each returns a closure for the sampler; failures abort the run.
std::function<void()> runSession(sk::CompiledPlan& cp, sk::BufferSet& bufs) {
  return [&cp, &bufs] { must(session().run(cp, bufs), "run " + cp.list.origin); };
}

struct BaselineRunner {
  Baselines b;
  std::vector<void*> ptrs;
  sk_run_args args{};
  BaselineRunner(Baselines base, sk::BufferSet& bufs) : b(std::move(base)) {
    for (uint32_t li : b.listBuffers) ptrs.push_back(bufs.data(li));
    args.abi_version = SK_ABI_VERSION;
    args.num_buffers = uint32_t(ptrs.size());
    args.buffers = ptrs.data();
  }
  void whole(uint32_t mode) {
    BenchCall c;
    c.mode = mode;
    c.services = cpuExec().services();
    if (int rc = b.run(b.workers, &c, &args); rc != 0) die("baseline run failed: " + cpuExec().lastError());
  }
  // (a') one Executor::launch per op: block b on worker b % W, like every
  // unfused launch; the launch includes the fork/join the SuperKernel removes.
  struct OpArg {
    BaselineRunner* r;
    uint32_t op;
  };
  void launchPerOp() {
    sk::Executor& ex = cpuExec();
    for (uint32_t i = 0; i < b.blockDims.size(); ++i) {
      OpArg a{this, i};
      sk::Status st = ex.launch(
          [](void* p, const sk_ctx* ctx) {
            auto* oa = static_cast<OpArg*>(p);
            BenchCall c;
            c.mode = skbench::kModeBlock;
            c.op = oa->op;
            c.block = ctx->block_idx;
            (void)oa->r->b.run(0, &c, &oa->r->args);
          },
          &a, b.blockDims[i]);
      must(st, "launch");
    }
  }
  // One libgomp parallel region per op (W threads; thread t runs blocks t, t+W, ...).
  void gompPerOp() {
    const int w = int(b.workers);
    for (uint32_t i = 0; i < b.blockDims.size(); ++i) {
#pragma omp parallel num_threads(w)
      {
        BenchCall c;
        c.mode = skbench::kModeCore;
        c.op = i;
        c.block = uint32_t(omp_get_thread_num());
        c.cores = uint32_t(w);
        (void)b.run(0, &c, &args);
      }
    }
  }
};

std::unique_ptr<BaselineRunner> baselines(const sk::CompiledPlan& fused, sk::BufferSet& bufs) {
  return std::make_unique<BaselineRunner>(must(skbench::buildBaselines(session(), fused), "baselines"), bufs);
}

// ---- 1. boundary overhead --------------------------------------------------

void benchBoundary() {
  fmt::print("\n## 1. Per-boundary overhead (chain of tiny ops)\n\n");
  struct Kind {
    std::string name, file;
    sk::SyncKind expect;
  };
  std::vector<Kind> kinds = {{"local", "chain_local.json", sk::SyncKind::Local},
                             {"flag", "chain_flag.json", sk::SyncKind::Flag},
                             {"counter", "chain_counter.json", sk::SyncKind::Counter},
                             {"barrier", "chain_barrier.json", sk::SyncKind::Barrier}};
  std::vector<sk::OpList> lists;
  std::vector<sk::CompiledPlan> plans;
  std::vector<sk::BufferSet> bufs;
  std::vector<std::unique_ptr<BaselineRunner>> base;
  lists.reserve(4), plans.reserve(4), bufs.reserve(4), base.reserve(4);
  for (const Kind& k : kinds) {
    lists.push_back(load(k.file));
    // Each chain measures one sync primitive: the kind the correctness rules choose, not the cost model's
    // (which would make the flag and counter chains barriers; section 13 measures that choice).
    plans.push_back(compile(lists.back(), "sync-model=off"));
    const sk::CompiledPlan& cp = plans.back();
    fmt::print("- {}: {}\n", k.name, syncSummary(cp));
    // The chain must really be synchronized the way its name says.
    for (auto [kind, n] : cp.plan.report.syncs.edges)
      if (kind != k.expect && kind != sk::SyncKind::None && n)
        die(fmt::format("chain_{}: the plan has {} {} edge(s); expected only {}", k.name, n, sk::syncKindName(kind),
                        sk::syncKindName(k.expect)));
    if (syncCount(cp, k.expect) == 0) die("chain_" + k.name + ": no " + sk::syncKindName(k.expect) + " edge");
    bufs.push_back(must(sk::BufferSet::create(lists.back()), "buffers"));
    base.push_back(baselines(cp, bufs.back()));
  }
  const size_t K = lists[0].ops.size();
  std::vector<Variant> vs;
  for (size_t i = 0; i < kinds.size(); ++i) {
    vs.push_back({"sk_" + kinds[i].name, runSession(plans[i], bufs[i]), {}, 1});
    BaselineRunner* r = base[i].get();
    vs.push_back({"ideal_" + kinds[i].name, [r] { r->whole(skbench::kModeIdeal); }, {}, 1});
  }
  BaselineRunner* loc = base[0].get();
  vs.push_back({"pool_barrier", [loc] { loc->whole(skbench::kModePool); }, {}, 1});
  vs.push_back({"launch_per_op", [loc] { loc->launchPerOp(); }, {}, 1});
  vs.push_back({"gomp_per_op", [loc] { loc->gompPerOp(); }, {}, 1});
  sample(vs);

  Csv csv("boundary.csv", "variant,ops,chain_median_us,chain_min_us,chain_max_us,boundary_median_us,boundary_min_us,"
                          "boundary_max_us,ideal_op_us");
  fmt::print("\nK = {} ops, W = {} workers, {} interleaved repetitions. Per boundary = (chain - ideal) / K.\n\n", K,
             loc->b.workers, cfg.reps);
  fmt::print("| variant | sync | chain µs median (min–max) | per boundary µs median (min–max) |\n|---|---|---|---|\n");
  auto report = [&](const std::string& name, const std::string& sync, const std::string& idealName) {
    Variant& v = find(vs, name);
    Variant& id = find(vs, idealName);
    Summary chain = summarize(v.usPerRun);
    Summary per = summarize(perRep(v, id, [K](double a, double b) { return (a - b) / double(K); }));
    Summary idl = summarize(id.usPerRun);
    csv.row("{},{},{:.3f},{:.3f},{:.3f},{:.4f},{:.4f},{:.4f},{:.4f}", name, K, chain.median, chain.min, chain.max,
            per.median, per.min, per.max, idl.median / double(K));
    fmt::print("| {} | {} | {} | {} |\n", name, sync, fmtS(chain, 1), fmtS(per, 3));
  };
  for (const Kind& k : kinds) report("sk_" + k.name, k.name + " (SuperKernel)", "ideal_" + k.name);
  report("pool_barrier", "spin barrier after every op (ggml way)", "ideal_local");
  report("launch_per_op", "one Executor::launch per op", "ideal_local");
  report("gomp_per_op", "one `#pragma omp parallel` per op", "ideal_local");
  for (const Kind& k : kinds) {
    Summary idl = summarize(find(vs, "ideal_" + k.name).usPerRun);
    fmt::print("\nideal {} chain: {} µs ({:.3f} µs per op)", k.name, fmtS(idl, 1), idl.median / double(K));
  }
  fmt::print("\n");
}

// ---- 2. decode stack -------------------------------------------------------

void benchDecode() {
  fmt::print("\n## 2. Decode stack\n");
  Csv csv("decode.csv", "stack,variant,median_us,min_us,max_us");
  Csv sum("decode_summary.csv", "stack,metric,median,min,max");
  for (const std::string& stack : cfg.stacks) {
    if (!fs::exists(cfg.ops / (stack + ".json"))) die("no op list " + stack + ".json in " + cfg.ops.string());
    sk::OpList list = load(stack + ".json");
    sk::CompiledPlan es1 = compile(list, "early-start=1");
    // The same SuperKernel with the previous (scalar) builtin kernels.
    sk::CompiledPlan es1Old = compile(withOldKernels(list), "early-start=1");
    sk::CompiledPlan es0 = compile(list, "early-start=0");
    // The correctness rules' syncs alone: what the sync cost model changed is the difference to d.
    sk::CompiledPlan off = compile(list, "early-start=1:sync-model=off");
    // The same SuperKernel without its data preload, so what prefetching the weights before a wait buys is
    // measured side by side.
    sk::CompiledPlan noData = compile(list, std::string("early-start=1:") + kNoDataPreload);
    // And with the per-func code preload (cpu's default is none since issue 25; the baselines never prefetch
    // code), so what prefetching the next kernel's code costs or buys is measured side by side.
    sk::CompiledPlan perFunc = compile(list, "early-start=1:preload-code=per-func");
    fmt::print("\n### {} ({} ops)\n\n- early-start=1: {}\n- early-start=1, sync-model=off: {}\n- early-start=0: {}\n",
               stack, list.ops.size(), syncSummary(es1), syncSummary(off), syncSummary(es0));
    std::optional<sk::CompiledPlan> unfused;
    if (cfg.sessionUnfused) {
      double t0 = nowNs();
      unfused = compile(list, "", false);
      fmt::print("- unfused reference: {} steps (compiled/loaded in {:.1f} s)\n", unfused->steps.size(),
                 (nowNs() - t0) / 1e9);
    }
    sk::BufferSet bufs = must(sk::BufferSet::create(list), "buffers");
    auto base = baselines(es1, bufs);
    BaselineRunner* r = base.get();
    std::vector<Variant> vs;
    if (unfused) vs.push_back({"a_unfused_session", runSession(*unfused, bufs), {}, 1});
    vs.push_back({"a_launch_per_op", [r] { r->launchPerOp(); }, {}, 1});
    vs.push_back({"b_pool_barrier", [r] { r->whole(skbench::kModePool); }, {}, 1});
    vs.push_back({"c_sk_es0", runSession(es0, bufs), {}, 1});
    vs.push_back({"d_sk_es1", runSession(es1, bufs), {}, 1});
    vs.push_back({"d_sync_model_off", runSession(off, bufs), {}, 1});
    vs.push_back({"d_no_data_preload", runSession(noData, bufs), {}, 1});
    vs.push_back({"d_code_preload", runSession(perFunc, bufs), {}, 1});
    vs.push_back({"d_old_kernels", runSession(es1Old, bufs), {}, 1});
    vs.push_back({"e_ideal", [r] { r->whole(skbench::kModeIdeal); }, {}, 1});
    sample(vs);
    fmt::print("\n| variant | µs per decode step, median (min–max) |\n|---|---|\n");
    Csv one("decode_" + stack + ".csv", "variant,median_us,min_us,max_us");  // one file per stack: plots
    for (Variant& v : vs) {
      Summary s = summarize(v.usPerRun);
      csv.row("{},{},{:.2f},{:.2f},{:.2f}", stack, v.name, s.median, s.min, s.max);
      one.row("{},{:.2f},{:.2f},{:.2f}", v.name, s.median, s.min, s.max);
      fmt::print("| {} | {} |\n", v.name, fmtS(s, 1));
    }
    Variant& d = find(vs, "d_sk_es1");
    auto ratio = [&](const std::string& metric, const std::string& other, bool pct, Variant* over = nullptr) {
      Summary s = summarize(perRep(find(vs, other), over ? *over : d,
                                   [pct](double o, double dd) { return pct ? 100.0 * o / dd : o / dd; }));
      sum.row("{},{},{:.3f},{:.3f},{:.3f}", stack, metric, s.median, s.min, s.max);
      fmt::print("| {} | {} |\n", metric, fmtS(s, 2));
    };
    fmt::print("\n| ratio (per repetition) | median (min–max) |\n|---|---|\n");
    if (unfused) ratio("speedup d over a (Session unfused)", "a_unfused_session", false);
    ratio("speedup d over a' (launch per op)", "a_launch_per_op", false);
    ratio("speedup d over b (pool + barrier)", "b_pool_barrier", false);
    ratio("speedup d over c (early-start=0)", "c_sk_es0", false);
    ratio("speedup d over d_sync_model_off (the rules' syncs alone)", "d_sync_model_off", false);
    ratio("(e) ideal as % of d_sync_model_off", "e_ideal", true, &find(vs, "d_sync_model_off"));
    ratio("speedup d over d_no_data_preload (what prefetching the weights before a wait buys)", "d_no_data_preload",
          false);
    ratio("speedup d over d_code_preload (what not prefetching the next kernel's code buys)", "d_code_preload",
          false);
    ratio("speedup d over d_old_kernels (fused, previous kernels)", "d_old_kernels", false);
    ratio("(e) ideal as % of (d) (= d within x% of ideal)", "e_ideal", true);
    // Op-size statistics of the ideal (what "latency-bound" means here).
    Summary e = summarize(find(vs, "e_ideal").usPerRun);
    fmt::print("\nideal per op (mean over {} ops): {:.3f} µs\n", list.ops.size(), e.median / double(list.ops.size()));
    sum.row("{},ideal_us_per_op,{:.4f},{:.4f},{:.4f}", stack, e.median / double(list.ops.size()),
            e.min / double(list.ops.size()), e.max / double(list.ops.size()));
  }
}

// ---- 2b. decode loop ------------------------------------------------------
//
// The decode stacks as a step of generation (gen_examples.decode_loop): the
// position is read at run time from "step", each step appends to KV caches of
// 256 rows and feeds its output back to its input. One sample runs T tokens
// from the start: every variant's run first restores the position ("step",
// one integer) and the input ("embed", one hidden vector) to their initial
// values, then runs T steps of the same compiled plan; tokens/s = T / time of
// the run. Nothing else needs restoring (a KV-cache row is written at a
// position before any attention reads it) and restoring nothing else keeps
// the copy negligible: copying the weights would add a constant to every
// variant and flatten the ratios.

void benchDecodeLoop() {
  fmt::print("\n## 2b. Decode loop (runtime position, KV cache of 256 rows)\n");
  Csv csv("decode_loop.csv", "stack,variant,tokens,median_tok_s,min_tok_s,max_tok_s");
  const int tokens = cfg.smoke ? 2 : cfg.loopTokens;
  for (const std::string& stack : {std::string("decode_loop"), std::string("decode_loop_small")}) {
    if (!fs::exists(cfg.ops / (stack + ".json"))) die("no op list " + stack + ".json in " + cfg.ops.string());
    sk::OpList list = load(stack + ".json");
    sk::CompiledPlan es1 = compile(list, "early-start=1");
    sk::CompiledPlan unfused = compile(list, "", false);
    fmt::print("\n### {} ({} ops, {} tokens per sample)\n\n- early-start=1: {}\n- unfused: {} steps\n", stack,
               list.ops.size(), tokens, syncSummary(es1), unfused.steps.size());
    sk::BufferSet bufs = must(sk::BufferSet::create(list), "buffers");
    struct Saved {
      void* data;
      std::vector<unsigned char> bytes;
    };
    std::vector<Saved> saved;
    for (const char* name : {"step", "embed"}) {
      const int i = bufs.find(name);
      if (i < 0) die(stack + ".json has no buffer \"" + name + "\" (gen_examples.decode_loop writes it)");
      const auto* p = static_cast<const unsigned char*>(bufs.data(size_t(i)));
      saved.push_back({bufs.data(size_t(i)), std::vector<unsigned char>(p, p + bufs.bytes(size_t(i)))});
    }
    auto base = baselines(es1, bufs);
    BaselineRunner* r = base.get();
    auto restart = [&saved] {
      for (const Saved& s : saved) std::memcpy(s.data, s.bytes.data(), s.bytes.size());
    };
    auto loop = [tokens, restart](std::function<void()> step) {
      return [tokens, restart, step] {
        restart();
        for (int t = 0; t < tokens; ++t) step();
      };
    };
    std::vector<Variant> vs;
    vs.push_back({"a_unfused_session", loop(runSession(unfused, bufs)), {}, 1});
    vs.push_back({"b_pool_barrier", loop([r] { r->whole(skbench::kModePool); }), {}, 1});
    vs.push_back({"d_sk_es1", loop(runSession(es1, bufs)), {}, 1});
    sample(vs);
    fmt::print("\n| variant | tokens/s, median (min–max) |\n|---|---|\n");
    auto perSecond = [tokens](const Variant& v) {
      std::vector<double> t;
      for (double us : v.usPerRun) t.push_back(us > 0 ? tokens * 1e6 / us : 0);
      return summarize(std::move(t));
    };
    for (Variant& v : vs) {
      Summary s = perSecond(v);
      csv.row("{},{},{},{:.2f},{:.2f},{:.2f}", stack, v.name, tokens, s.median, s.min, s.max);
      fmt::print("| {} | {} |\n", v.name, fmtS(s, 1));
    }
    Variant& d = find(vs, "d_sk_es1");
    fmt::print("\n| ratio (per repetition) | median (min–max) |\n|---|---|\n");
    for (const char* other : {"a_unfused_session", "b_pool_barrier"}) {
      Summary s = summarize(perRep(find(vs, other), d, [](double o, double dd) { return o / dd; }));
      fmt::print("| tokens/s of d over {} | {} |\n", other, fmtS(s, 2));
    }
  }
}

// ---- 3. compile ------------------------------------------------------------

struct ChildResult {
  int status = -1;
  double wallMs = 0;
  std::string output;
};

// Spawn this executable (argv), capturing stdout; wall time around fork..wait.
ChildResult spawnSelf(const std::vector<std::string>& args) {
  std::vector<std::string> argvS = {cfg.self.string()};
  argvS.insert(argvS.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argvS) argv.push_back(s.data());
  argv.push_back(nullptr);
  int pipefd[2];
  if (pipe(pipefd) != 0) die("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  pid_t pid;
  double t0 = nowNs();
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) die("posix_spawn");
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  ChildResult r;
  char buf[4096];
  ssize_t k;
  while ((k = read(pipefd[0], buf, sizeof buf)) > 0) r.output.append(buf, size_t(k));
  close(pipefd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  r.wallMs = (nowNs() - t0) / 1e6;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

fs::path freshDir(const std::string& name) {
  fs::path d = cfg.out / "tmp" / fmt::format("{}-{}-{}", name, getpid(), uint64_t(nowNs()));
  fs::create_directories(d);
  fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
  return d;
}

struct ColdResult {
  double totalS = 0, objectsS = 0;
  uint64_t objectsCompiled = 0, variants = 0;
};
ColdResult coldCompile(const sk::OpList& list, const fs::path& dir) {
  sk::SessionOptions so;
  so.cacheDir = dir;
  so.options = cfg.options;
  double t0 = nowNs(), tObj = 0;
  so.progress = [&](std::string_view stage, size_t done, size_t total) {
    if (stage == "objects" && done == total) tObj = nowNs();
  };
  auto s = must(sk::Session::create(so), "session");
  sk::CompiledPlan cp = must(s->compile(list, {}), "cold compile");
  ColdResult r;
  r.totalS = (nowNs() - t0) / 1e9;
  r.objectsS = tObj > 0 ? (tObj - t0) / 1e9 : 0;
  r.objectsCompiled = cp.stats.objectMisses;
  r.variants = cp.stats.objects;
  return r;
}

void benchCompile() {
  fmt::print("\n## 3. Compile\n\n");
  Csv csv("compile.csv", "metric,median,min,max,unit,note");
  sk::OpList stack = load("decode_stack_shared_weights.json");
  sk::OpList nodedup = load("nodedup.json");
  // The same layers as nodedup.json but with deduplicable sub-kernels.
  sk::OpList dedupSame = stack;
  dedupSame.ops.resize(nodedup.ops.size());
  dedupSame.origin = "first layers of " + stack.origin;

  std::vector<double> cold, coldObj, nd, ndDedup;
  ColdResult last{}, lastNd{}, lastNdDedup{};
  for (int r = 0; r < cfg.compileReps; ++r) {
    last = coldCompile(stack, freshDir("cold"));
    cold.push_back(last.totalS);
    coldObj.push_back(last.objectsS);
    lastNd = coldCompile(nodedup, freshDir("nodedup"));
    nd.push_back(lastNd.totalS);
    lastNdDedup = coldCompile(dedupSame, freshDir("dedup"));
    ndDedup.push_back(lastNdDedup.totalS);
  }
  Summary c = summarize(cold), co = summarize(coldObj), n = summarize(nd), nd2 = summarize(ndDedup);
  fmt::print("| measurement | median (min–max) |\n|---|---|\n");
  fmt::print("| cold compile, {} ops, dedup on: {} objects for {} ops + 1 SuperKernel (s) | {} |\n", stack.ops.size(),
             last.objectsCompiled, stack.ops.size(), fmtS(c, 2));
  fmt::print("| of which sub-kernel objects (s) | {} |\n", fmtS(co, 2));
  fmt::print("| {} ops, every sub-kernel unique ({} objects) (s) | {} |\n", nodedup.ops.size(), lastNd.objectsCompiled,
             fmtS(n, 2));
  fmt::print("| the same {} ops, dedup on ({} objects) (s) | {} |\n", dedupSame.ops.size(),
             lastNdDedup.objectsCompiled, fmtS(nd2, 2));
  // Without dedup the 1,525-op plan compiles one object per op: the
  // measured cost per unique object, scaled (stated as an estimate).
  double perObj = (n.median - nd2.median) / double(std::max<uint64_t>(1, lastNd.objectsCompiled - lastNdDedup.objectsCompiled));
  double est = c.median + perObj * double(stack.ops.size() - last.objectsCompiled);
  fmt::print("| estimated cold compile of the {} ops without dedup (s) | {:.1f} (= {:.2f} + {:.3f} s x {} extra objects) |\n",
             stack.ops.size(), est, c.median, perObj, stack.ops.size() - last.objectsCompiled);
  csv.row("cold_compile_s,{:.3f},{:.3f},{:.3f},s,{} objects {} ops", c.median, c.min, c.max, last.objectsCompiled, stack.ops.size());
  csv.row("cold_objects_phase_s,{:.3f},{:.3f},{:.3f},s,", co.median, co.min, co.max);
  csv.row("nodedup_sample_s,{:.3f},{:.3f},{:.3f},s,{} objects {} ops", n.median, n.min, n.max, lastNd.objectsCompiled, nodedup.ops.size());
  csv.row("dedup_sample_s,{:.3f},{:.3f},{:.3f},s,{} objects {} ops", nd2.median, nd2.min, nd2.max, lastNdDedup.objectsCompiled, dedupSame.ops.size());
  csv.row("nodedup_estimate_s,{:.3f},{:.3f},{:.3f},s,estimate", est, est, est);

  // Memory hits: in this process, against the warm session cache.
  sk::CompiledPlan warm = compile(stack, "");
  const std::string key = warm.steps.at(0).artifact.key;
  auto& cache = session().cache();
  std::vector<double> findNs, getNs, recompileMs;
  for (int r = 0; r < std::max(cfg.reps, 5); ++r) {
    const int N = 100000;
    double t0 = nowNs();
    for (int i = 0; i < N; ++i)
      if (!cache->findInMemory(key)) die("memory hit expected");
    findNs.push_back((nowNs() - t0) / N);
    sk::CacheRequest req;
    req.key = key;
    req.kind = sk::kKindSuperKernel;
    req.hold = true;
    req.build = [](const fs::path&) -> sk::Expected<sk::BuildOutput> { return sk::internalError("bench: unexpected build"); };
    t0 = nowNs();
    for (int i = 0; i < N / 10; ++i) (void)must(cache->getOrBuild(req), "getOrBuild");
    getNs.push_back((nowNs() - t0) / (N / 10));
    t0 = nowNs();
    sk::CompiledPlan again = compile(stack, "");
    recompileMs.push_back((nowNs() - t0) / 1e6);
    if (again.stats.superKernelMisses || again.stats.objectMisses) die("recompile was not a hit");
  }
  Summary f = summarize(findNs), g = summarize(getNs), rc = summarize(recompileMs);
  fmt::print("| memory hit: Cache::findInMemory (ns) | {} |\n", fmtS(f, 0));
  fmt::print("| memory hit: Cache::getOrBuild (ns) | {} |\n", fmtS(g, 0));
  fmt::print("| Session::compile of the same {} ops again, in process (ms) | {} |\n", stack.ops.size(), fmtS(rc, 2));
  csv.row("memory_hit_find_ns,{:.1f},{:.1f},{:.1f},ns,", f.median, f.min, f.max);
  csv.row("memory_hit_getorbuild_ns,{:.1f},{:.1f},{:.1f},ns,", g.median, g.min, g.max);
  csv.row("recompile_in_process_ms,{:.3f},{:.3f},{:.3f},ms,", rc.median, rc.min, rc.max);

  // Disk hits in fresh processes: the child times its own work; the parent
  // also times the whole spawn against a child that does nothing.
  session().cache()->flushStats();
  std::vector<double> lookupMs, childCompileMs, wallMs, noopMs;
  for (int r = 0; r < std::max(cfg.reps, 5); ++r) {
    ChildResult noop = spawnSelf({"child-noop"});
    ChildResult hit = spawnSelf({"child-disk-hit", (cfg.ops / "decode_stack_shared_weights.json").string(),
                                 (cfg.out / "cache").string(), key, cfg.options});
    if (hit.status != 0) die("child-disk-hit failed: " + hit.output);
    auto j = nlohmann::json::parse(hit.output);
    lookupMs.push_back(j["lookup_ms"].get<double>());
    childCompileMs.push_back(j["compile_ms"].get<double>());
    wallMs.push_back(hit.wallMs);
    noopMs.push_back(noop.wallMs);
  }
  Summary lk = summarize(lookupMs), cc = summarize(childCompileMs), wl = summarize(wallMs), no = summarize(noopMs);
  fmt::print("| disk hit, fresh process: Cache::lookup + verify + dlopen of the SuperKernel (ms) | {} |\n", fmtS(lk, 2));
  fmt::print("| disk hit, fresh process: Session::create + compile of all {} ops (ms) | {} |\n", stack.ops.size(),
             fmtS(cc, 1));
  fmt::print("| fresh process wall (spawn..exit) with the disk-hit lookup, minus an empty child (ms) | {:.1f} ({:.1f} - {:.1f}) |\n",
             wl.median - no.median, wl.median, no.median);
  csv.row("disk_hit_lookup_ms,{:.3f},{:.3f},{:.3f},ms,fresh process", lk.median, lk.min, lk.max);
  csv.row("disk_hit_session_compile_ms,{:.3f},{:.3f},{:.3f},ms,fresh process", cc.median, cc.min, cc.max);
  csv.row("disk_hit_process_minus_noop_ms,{:.3f},{:.3f},{:.3f},ms,", wl.median - no.median, wl.min - no.median, wl.max - no.median);

  // Six processes racing for one cold key set.
  fs::path raceDir = freshDir("race");
  std::vector<std::thread> th;
  std::vector<ChildResult> res(6);
  for (int i = 0; i < 6; ++i)
    th.emplace_back([&, i] { res[size_t(i)] = spawnSelf({"child-compile", (cfg.ops / "decode_layer.json").string(), raceDir.string(), cfg.options}); });
  for (auto& t : th) t.join();
  for (auto& r : res)
    if (r.status != 0) die("child-compile failed: " + r.output);
  sk::CacheConfig ccfg;
  ccfg.root = raceDir;
  auto rcache = must(sk::Cache::open(ccfg), "race cache");
  sk::CacheStats st = must(rcache->stats(), "race stats");
  fmt::print("| 6 processes racing for one cold plan (decode_layer): compiles / distinct entries / misses / hits | {} / {} / {} / {} |\n",
             st.compiles, st.entries, st.misses, st.hits);
  csv.row("race_compiles,{},{},{},count,entries={} misses={} hits={}", st.compiles, st.compiles, st.compiles, st.entries,
          st.misses, st.hits);
  if (st.compiles != st.entries) fmt::print("WARNING: {} compiles for {} keys: some key was compiled twice\n", st.compiles, st.entries);
}

// ---- 4. op-size sweep ------------------------------------------------------

void benchSweep() {
  fmt::print("\n## 4. Op-size sweep (counter chain)\n\n");
  std::vector<std::pair<uint64_t, fs::path>> files;
  for (auto& e : fs::directory_iterator(cfg.ops)) {
    std::string n = e.path().filename().string();
    if (n.rfind("sweep_n", 0) == 0) files.emplace_back(std::stoull(n.substr(7)), e.path());
  }
  std::sort(files.begin(), files.end());
  Csv csv("sweep.csv", "n,ops,ideal_op_us,sk_op_us,launch_op_us,pool_op_us,speedup_launch_median,speedup_launch_min,"
                       "speedup_launch_max,speedup_pool_median,speedup_pool_min,speedup_pool_max,pct_of_ideal");
  fmt::print("| elements | ideal µs/op | SK µs/op | launch/op µs/op | pool+barrier µs/op | SK speedup vs launch/op | vs pool+barrier | ideal/SK |\n|---|---|---|---|---|---|---|---|\n");
  for (auto& [n, path] : files) {
    sk::OpList list = load(path.filename().string());
    sk::CompiledPlan cp = compile(list, "");
    sk::BufferSet bufs = must(sk::BufferSet::create(list), "buffers");
    auto base = baselines(cp, bufs);
    BaselineRunner* r = base.get();
    std::vector<Variant> vs;
    vs.push_back({"sk", runSession(cp, bufs), {}, 1});
    vs.push_back({"launch", [r] { r->launchPerOp(); }, {}, 1});
    vs.push_back({"pool", [r] { r->whole(skbench::kModePool); }, {}, 1});
    vs.push_back({"ideal", [r] { r->whole(skbench::kModeIdeal); }, {}, 1});
    sample(vs);
    const double K = double(list.ops.size());
    Variant &skv = find(vs, "sk"), &la = find(vs, "launch"), &po = find(vs, "pool"), &id = find(vs, "ideal");
    auto sp = [](double o, double s) { return o / s; };
    Summary s1 = summarize(perRep(la, skv, sp)), s2 = summarize(perRep(po, skv, sp)),
            pc = summarize(perRep(id, skv, [](double i, double s) { return 100 * i / s; }));
    double i = summarize(id.usPerRun).median / K, s = summarize(skv.usPerRun).median / K,
           l = summarize(la.usPerRun).median / K, p = summarize(po.usPerRun).median / K;
    csv.row("{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.1f}", n, list.ops.size(), i, s, l,
            p, s1.median, s1.min, s1.max, s2.median, s2.min, s2.max, pc.median);
    fmt::print("| {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {} | {} | {:.0f}% |\n", n, i, s, l, p, fmtS(s1), fmtS(s2),
               pc.median);
  }
}

// ---- 5. static shapes ------------------------------------------------------

void benchStatic() {
  fmt::print("\n## 5. Static shapes (shared-weight decode stack, SuperKernel early-start=1)\n\n");
  sk::OpList withM = load("static_macros.json"), without = load("static_runtime.json");
  sk::CompiledPlan a = compile(withM, ""), b = compile(without, "");
  sk::BufferSet ba = must(sk::BufferSet::create(withM), "buffers"), bb = must(sk::BufferSet::create(without), "buffers");
  std::vector<Variant> vs;
  vs.push_back({"static_macros", runSession(a, ba), {}, 1});
  vs.push_back({"runtime_shapes", runSession(b, bb), {}, 1});
  sample(vs);
  Summary sa = summarize(vs[0].usPerRun), sb = summarize(vs[1].usPerRun);
  Summary sp = summarize(perRep(vs[1], vs[0], [](double rt, double st) { return rt / st; }));
  Csv csv("static.csv", "variant,median_us,min_us,max_us");
  csv.row("static_macros,{:.2f},{:.2f},{:.2f}", sa.median, sa.min, sa.max);
  csv.row("runtime_shapes,{:.2f},{:.2f},{:.2f}", sb.median, sb.min, sb.max);
  csv.row("speedup_static,{:.3f},{:.3f},{:.3f}", sp.median, sp.min, sp.max);
  fmt::print("| variant | µs per decode step |\n|---|---|\n| shape macros (-DSK_ROWS=...) | {} |\n| shapes at run time | {} |\n| speedup of static shapes | {} |\n",
             fmtS(sa, 1), fmtS(sb, 1), fmtS(sp, 3));
  // Same results either way (the macros only change constant folding).
  must(session().run(a, ba), "run");
  must(session().run(b, bb), "run");
}

// ---- 6. builtin kernels alone: GB/s against a streaming read --------------

// Each kernel is one op (gen_sweep.py kernel_lists: ~256 MiB moved per run,
// past the caches) compiled by the real driver (-O2 -march=native) into a
// one-op SuperKernel and run by the session's W workers, side by side with
// the same op built with the previous kernels (-DSK_KERNELS_BASELINE) and
// with a streaming read of the same size (bench/kernels/bench_stream.cpp):
// the machine's measured memory bandwidth. GB/s counts the bytes the kernel
// must move (weights + activations, or reads + writes).
void benchKernels() {
  fmt::print("\n## 6. Builtin kernels alone: GB/s against the measured memory bandwidth\n\n");
  nlohmann::json bytes;
  {
    std::ifstream in(cfg.ops / "kernel_bytes.json");
    if (!in) die("no kernel_bytes.json in " + cfg.ops.string() + " (bench/gen_sweep.py writes it)");
    bytes = nlohmann::json::parse(in);
  }
  struct K {
    std::string name;
    sk::OpList list;
    double bytes = 0;
  };
  std::vector<K> ks;
  for (auto& [name, b] : bytes.items()) ks.push_back({name, load("kernel_" + name + ".json"), b.get<double>()});
  std::vector<sk::CompiledPlan> plans;
  std::vector<sk::BufferSet> bufs;
  plans.reserve(2 * ks.size());
  bufs.reserve(ks.size());
  std::vector<Variant> vs;
  for (K& k : ks) {
    bufs.push_back(must(sk::BufferSet::create(k.list), "buffers"));
    plans.push_back(compile(k.list, ""));
    vs.push_back({k.name, runSession(plans.back(), bufs.back()), {}, 1});
    if (k.name != "stream") {
      plans.push_back(compile(withOldKernels(k.list), ""));
      vs.push_back({k.name + "@old", runSession(plans.back(), bufs.back()), {}, 1});
    }
  }
  // A run moves ~256 MiB (tens of ms): longer samples keep a few runs per batch.
  const double savedMs = cfg.sampleMs;
  if (!cfg.smoke) cfg.sampleMs = std::max(cfg.sampleMs, 150.0);
  sample(vs);
  cfg.sampleMs = savedMs;

  Csv csv("kernels.csv", "kernel,mib,us_median,us_min,us_max,gbs_median,pct_bw_median,pct_bw_min,pct_bw_max,"
                         "old_gbs_median,speedup_over_old_median,speedup_min,speedup_max");
  Variant& st = find(vs, "stream");
  const double streamBytes = bytes["stream"].get<double>();
  auto gbs = [](double b, double us) { return b / (us * 1e3); };
  Summary bw = summarize(perRep(st, st, [&](double us, double) { return gbs(streamBytes, us); }));
  fmt::print("Memory bandwidth (streaming read of {:.0f} MiB, W = {} workers): **{} GB/s** (median (min–max) over "
             "{} repetitions)\n\n",
             streamBytes / 1048576, cpuExec().numWorkers(), fmtS(bw, 2), cfg.reps);
  fmt::print("| kernel | MiB moved | µs per run | GB/s | % of bandwidth, median (min–max) | previous kernel GB/s | "
             "speedup over previous |\n|---|---|---|---|---|---|---|\n");
  for (K& k : ks) {
    if (k.name == "stream") continue;
    Variant& v = find(vs, k.name);
    Variant& o = find(vs, k.name + "@old");
    Summary t = summarize(v.usPerRun);
    Summary pct = summarize(perRep(v, st, [&](double us, double sus) { return 100.0 * gbs(k.bytes, us) / gbs(streamBytes, sus); }));
    Summary sp = summarize(perRep(o, v, [](double old, double now) { return old / now; }));
    const double g = gbs(k.bytes, t.median), og = gbs(k.bytes, summarize(o.usPerRun).median);
    csv.row("{},{:.1f},{:.1f},{:.1f},{:.1f},{:.2f},{:.1f},{:.1f},{:.1f},{:.2f},{:.3f},{:.3f},{:.3f}", k.name,
            k.bytes / 1048576, t.median, t.min, t.max, g, pct.median, pct.min, pct.max, og, sp.median, sp.min, sp.max);
    fmt::print("| {} | {:.0f} | {} | {:.2f} | {} | {:.2f} | {} |\n", k.name, k.bytes / 1048576, fmtS(t, 0), g,
               fmtS(pct, 1), og, fmtS(sp, 2));
  }
  csv.row("stream,{:.1f},{:.1f},{:.1f},{:.1f},{:.2f},100,100,100,,,,", streamBytes / 1048576,
          summarize(st.usPerRun).median, summarize(st.usPerRun).min, summarize(st.usPerRun).max, bw.median);
}

// ---- 7. blocks per worker: block_dim sweep on a tiny chain -----------------

// gen_sweep.py blockdim_<B>.json: --bd-ops adds of 64 floats chained at
// block_dim B (local edges). With W workers each op runs B / W blocks per
// worker; the ratio to block_dim = W shows what the extra blocks cost.
void benchBlockDim() {
  fmt::print("\n## 7. Blocks per worker: tiny chain at several block_dim\n\n");
  // blockdim_<B>.json: the builtin add (block_dim_invariant: the plan runs one
  // block per core); blockdim_<B>_percall.json: the same kernel declared
  // without it (one call per block, the cost before plan/Coarsen.cpp).
  struct Row {
    uint32_t bd;
    bool perCall;
    std::string file;
  };
  std::vector<Row> rows;
  for (auto& e : fs::directory_iterator(cfg.ops)) {
    std::string n = e.path().filename().string();
    if (n.rfind("blockdim_", 0) != 0) continue;
    rows.push_back({uint32_t(std::stoul(n.substr(9))), n.find("_percall") != std::string::npos, n});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return std::tie(a.perCall, a.bd) < std::tie(b.perCall, b.bd); });
  if (rows.empty()) die("no blockdim_*.json in " + cfg.ops.string());
  std::vector<sk::OpList> lists;
  std::vector<sk::CompiledPlan> plans;
  std::vector<sk::BufferSet> bufs;
  lists.reserve(rows.size()), plans.reserve(rows.size()), bufs.reserve(rows.size());
  std::vector<Variant> vs;
  for (const Row& r : rows) {
    lists.push_back(load(r.file));
    plans.push_back(compile(lists.back(), ""));
    bufs.push_back(must(sk::BufferSet::create(lists.back()), "buffers"));
    vs.push_back({fmt::format("bd{}{}", r.bd, r.perCall ? "_percall" : ""), runSession(plans.back(), bufs.back()), {}, 1});
  }
  sample(vs);
  const uint32_t W = cpuExec().numWorkers();
  const std::string ref = fmt::format("bd{}", W);
  const bool haveRef = std::any_of(vs.begin(), vs.end(), [&](const Variant& v) { return v.name == ref; });
  const double K = double(lists[0].ops.size());
  Csv csv("blockdim.csv", "block_dim,per_call,blocks_run_per_op,ops,us_per_op_median,us_per_op_min,us_per_op_max,"
                          "ratio_median,ratio_min,ratio_max");
  fmt::print("{} adds of 64 floats chained, W = {} workers; ratio = chain time / time of the builtin chain at "
             "block_dim = W, per repetition. \"one call per block\": the same kernel declared without "
             "block_dim_invariant.\n\n",
             lists[0].ops.size(), W);
  fmt::print("| block_dim | kernel | blocks run per op | µs per op, median (min–max) | ratio to block_dim {} |\n"
             "|---|---|---|---|---|\n", W);
  for (size_t i = 0; i < rows.size(); ++i) {
    Variant& v = vs[i];
    Summary per = summarize(perRep(v, v, [K](double a, double) { return a / K; }));
    Summary ra = haveRef ? summarize(perRep(v, find(vs, ref), [](double a, double b) { return a / b; })) : Summary{};
    const uint32_t ran = plans[i].plan.steps.at(0).ops.at(0).blockDim;
    csv.row("{},{},{},{},{:.4f},{:.4f},{:.4f},{:.3f},{:.3f},{:.3f}", rows[i].bd, rows[i].perCall ? 1 : 0, ran,
            lists[i].ops.size(), per.median, per.min, per.max, ra.median, ra.min, ra.max);
    fmt::print("| {} | {} | {} | {} | {} |\n", rows[i].bd, rows[i].perCall ? "one call per block" : "builtin (coarsened)",
               ran, fmtS(per, 3), haveRef ? fmtS(ra, 2) : std::string("-"));
  }
}

// ---- 11./12. all-to-all tiny-matmul chain and the fan-in sweep ----------

// Runs one op list's fused SuperKernel side by side with the baselines of
// the same sub-kernels (Baselines.h): a barrier after every op (the pool),
// one Executor::launch per op, and the ideal (no synchronization). Two more
// builds of the fused step show where its per-boundary cost goes:
// preload-code=per-func (cpu's default prefetches no code, like the baselines) and
// early-start=0 (a sync_all barrier before every op instead of the plan's
// edges: the pool's synchronization inside the SuperKernel). Per node =
// run / K; per boundary = (run - ideal) / K; ratios per repetition.
struct SyncRow {
  std::string sync;  // the plan's edges
  size_t ops = 0;
  std::string syncOff;  // the plan's edges with sync-model=off (the correctness rules' choice alone)
  Summary sk, skOff, skCodePreload, skNoData, skBarrier, pool, launch, ideal;  // µs per node
  Summary skBoundary, poolBoundary;                                // µs per boundary above the ideal
  Summary poolOverSk, poolOverSkOff, poolOverSkBarrier;            // barrier-per-op time / fused time
  Summary noDataOverSk;                                            // fused without data preload / fused
  // oneCore only: the fused step of the same list with every op at block_dim 1 (all on one core, every
  // edge local: the placement a planner could choose instead of any sync) and barrier per op / it.
  std::optional<Summary> skOneCore, poolOverSkOneCore;
};
// With oneCore, also the one-core placement (SyncRow::skOneCore).
SyncRow runSyncRow(const sk::OpList& list, bool oneCore = false) {
  sk::CompiledPlan cp = compile(list, "");
  sk::CompiledPlan off = compile(list, "sync-model=off");
  sk::CompiledPlan np = compile(list, "preload-code=per-func");
  sk::CompiledPlan nd = compile(list, kNoDataPreload);
  sk::CompiledPlan es0 = compile(list, "early-start=0");
  sk::BufferSet bufs = must(sk::BufferSet::create(list), "buffers");
  auto base = baselines(cp, bufs);
  BaselineRunner* r = base.get();
  std::vector<Variant> vs;
  vs.push_back({"sk", runSession(cp, bufs), {}, 1});
  vs.push_back({"sk_off", runSession(off, bufs), {}, 1});
  vs.push_back({"sk_code_preload", runSession(np, bufs), {}, 1});
  vs.push_back({"sk_nodata", runSession(nd, bufs), {}, 1});
  vs.push_back({"sk_es0", runSession(es0, bufs), {}, 1});
  vs.push_back({"pool", [r] { r->whole(skbench::kModePool); }, {}, 1});
  vs.push_back({"launch", [r] { r->launchPerOp(); }, {}, 1});
  vs.push_back({"ideal", [r] { r->whole(skbench::kModeIdeal); }, {}, 1});
  std::optional<sk::CompiledPlan> one;
  if (oneCore) {
    sk::OpList narrow = list;
    for (sk::Op& op : narrow.ops) op.blockDim = 1;
    one = compile(narrow, "");
    vs.push_back({"sk_one", runSession(*one, bufs), {}, 1});
  }
  sample(vs);
  SyncRow row;
  row.sync = syncSummary(cp);
  row.syncOff = syncSummary(off);
  row.ops = list.ops.size();
  const double K = double(row.ops);
  Variant &skv = find(vs, "sk"), &po = find(vs, "pool"), &id = find(vs, "ideal"), &sb = find(vs, "sk_es0");
  auto perNode = [K](const Variant& v) { return summarize(perRep(v, v, [K](double a, double) { return a / K; })); };
  auto above = [K](double a, double i) { return (a - i) / K; };
  auto ratio = [](double p, double f) { return p / f; };
  row.sk = perNode(skv), row.skOff = perNode(find(vs, "sk_off")), row.skCodePreload = perNode(find(vs, "sk_code_preload")), row.skBarrier = perNode(sb);
  row.pool = perNode(po), row.launch = perNode(find(vs, "launch")), row.ideal = perNode(id);
  row.skBoundary = summarize(perRep(skv, id, above));
  row.poolBoundary = summarize(perRep(po, id, above));
  row.poolOverSk = summarize(perRep(po, skv, ratio));
  row.poolOverSkOff = summarize(perRep(po, find(vs, "sk_off"), ratio));
  row.poolOverSkBarrier = summarize(perRep(po, sb, ratio));
  row.skNoData = perNode(find(vs, "sk_nodata"));
  row.noDataOverSk = summarize(perRep(find(vs, "sk_nodata"), skv, ratio));
  if (oneCore) {
    row.skOneCore = perNode(find(vs, "sk_one"));
    row.poolOverSkOneCore = summarize(perRep(po, find(vs, "sk_one"), ratio));
  }
  return row;
}

// The table and CSV of sections 11 and 12 (`key` names the first column).
struct SyncTable {
  Csv csv;
  explicit SyncTable(const std::string& file, const std::string& key)
      : csv(file, key + ",ops,sk_node_us,sk_min,sk_max,sk_off_node_us,sk_off_min,sk_off_max,sk_code_preload_node_us,sk_code_preload_min,sk_code_preload_max,"
                        "sk_es0_node_us,sk_es0_min,sk_es0_max,pool_node_us,pool_min,pool_max,launch_node_us,"
                        "launch_min,launch_max,ideal_node_us,ideal_min,ideal_max,sk_boundary_us,sk_boundary_min,"
                        "sk_boundary_max,pool_boundary_us,pool_boundary_min,pool_boundary_max,pool_over_sk,"
                        "pool_over_sk_min,pool_over_sk_max,pool_over_sk_off,pool_over_sk_off_min,pool_over_sk_off_max,"
                        "pool_over_sk_es0,pool_over_sk_es0_min,pool_over_sk_es0_max,sk_nodata_node_us,sk_nodata_min,"
                        "sk_nodata_max,nodata_over_sk,nodata_over_sk_min,nodata_over_sk_max") {}
  static void header(const std::string& key) {
    fmt::print("| {} | fused SuperKernel | fused, sync-model=off | fused, preload-code=per-func | fused, early-start=0 | "
               "barrier per op | launch per op | ideal (no sync) | fused per boundary | barrier per boundary | "
               "barrier / fused | barrier / fused sync-model=off | barrier / fused early-start=0 | "
               "fused, no data preload | no data preload / fused |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
               key);
  }
  void row(const std::string& key, const std::string& label, const SyncRow& r) {
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", label,
               fmtS(r.sk, 3), fmtS(r.skOff, 3), fmtS(r.skCodePreload, 3), fmtS(r.skBarrier, 3), fmtS(r.pool, 3),
               fmtS(r.launch, 3), fmtS(r.ideal, 3), fmtS(r.skBoundary, 3), fmtS(r.poolBoundary, 3),
               fmtS(r.poolOverSk, 3), fmtS(r.poolOverSkOff, 3), fmtS(r.poolOverSkBarrier, 3), fmtS(r.skNoData, 3),
               fmtS(r.noDataOverSk, 3));
    auto c = [](const Summary& v) { return fmt::format("{:.4f},{:.4f},{:.4f}", v.median, v.min, v.max); };
    csv.row("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", key, r.ops, c(r.sk), c(r.skOff), c(r.skCodePreload),
            c(r.skBarrier), c(r.pool), c(r.launch), c(r.ideal), c(r.skBoundary), c(r.poolBoundary), c(r.poolOverSk),
            c(r.poolOverSkOff), c(r.poolOverSkBarrier), c(r.skNoData), c(r.noDataOverSk));
  }
};

// gen_sweep.py a2a_<fmt>.json: llama.cpp's test-barrier graph (2,000 gemvs
// on a 64-element vector, 64 -> 128 -> 64, each with its own weights) with
// q8_0 and q4_0 weights.
void benchA2A() {
  fmt::print("\n## 11. All-to-all chain of tiny matmuls (llama.cpp test-barrier's graph)\n\n");
  std::vector<std::pair<std::string, SyncRow>> rows;
  for (const std::string fmt : {"q8_0", "q4_0"}) {
    const std::string file = "a2a_" + fmt + ".json";
    if (!fs::exists(cfg.ops / file)) die("no op list " + file + " in " + cfg.ops.string());
    rows.emplace_back(fmt, runSyncRow(load(file), true));
    fmt::print("- {} ({} ops): {}; sync-model=off: {}\n", fmt, rows.back().second.ops, rows.back().second.sync,
               rows.back().second.syncOff);
  }
  fmt::print("\nW = {} workers, {} interleaved repetitions; µs per node (= run / ops), median (min–max); "
             "per boundary = (run - ideal) / ops; barrier / fused per repetition (> 1: fused faster).\n\n",
             cpuExec().numWorkers(), cfg.reps);
  SyncTable t("a2a.csv", "weights");
  SyncTable::header("weights");
  for (auto& [fmt, r] : rows) t.row(fmt, fmt, r);
  fmt::print("\nThe same chain with every op at block_dim 1 (one core, every edge local), in the same repetitions:\n\n"
             "| weights | fused, one core | barrier per op (block_dim {}) / fused one core |\n|---|---|---|\n",
             cpuExec().numWorkers());
  Csv csv("a2a_one_core.csv", "weights,sk_one_node_us,sk_one_min,sk_one_max,pool_over_sk_one,pool_over_sk_one_min,"
                              "pool_over_sk_one_max");
  for (auto& [fmt, r] : rows) {
    fmt::print("| {} | {} | {} |\n", fmt, fmtS(*r.skOneCore, 3), fmtS(*r.poolOverSkOneCore, 3));
    auto c = [](const Summary& v) { return fmt::format("{:.4f},{:.4f},{:.4f}", v.median, v.min, v.max); };
    csv.row("{},{},{}", fmt, c(*r.skOneCore), c(*r.poolOverSkOneCore));
  }
}

// gen_sweep.py fanin_<f>.json: tiny ops alternating block_dim P and P / f,
// so every other boundary's consumer blocks each need f producer blocks.
void benchFanin() {
  fmt::print("\n## 12. Fan-in sweep (consumer blocks needing f producer blocks)\n\n");
  std::vector<std::pair<uint32_t, std::string>> files;
  for (auto& e : fs::directory_iterator(cfg.ops)) {
    std::string n = e.path().filename().string();
    if (n.rfind("fanin_", 0) == 0 && n.size() > 11 && n.substr(n.size() - 5) == ".json")
      files.emplace_back(uint32_t(std::stoul(n.substr(6))), n);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) die("no fanin_*.json in " + cfg.ops.string());
  std::vector<std::pair<uint32_t, SyncRow>> rows;
  uint32_t P = 0;
  for (auto& [f, file] : files) {
    sk::OpList list = load(file);
    P = std::max(P, list.ops.at(0).blockDim);
    rows.emplace_back(f, runSyncRow(list));
    fmt::print("- fan-in {} ({} ops): {}; sync-model=off: {}\n", f, rows.back().second.ops, rows.back().second.sync,
               rows.back().second.syncOff);
  }
  fmt::print("\nOps alternate block_dim P = {} and P / f (x and y \"partition\": \"block\", one block per call); "
             "W = {} workers, {} interleaved repetitions; columns as in section 11.\n\n",
             P, cpuExec().numWorkers(), cfg.reps);
  SyncTable t("fanin.csv", "fanin");
  SyncTable::header("fan-in f");
  for (auto& [f, r] : rows) t.row(std::to_string(f), fmt::format("{}{}", f, f == P ? " (all)" : ""), r);
}

// ---- children (compile benchmark) ------------------------------------------

int childDiskHit(const std::string& opsFile, const std::string& cacheDir, const std::string& key,
                 const std::string& options) {
  double t0 = nowNs();
  sk::CacheConfig cc;
  cc.root = cacheDir;
  auto cache = must(sk::Cache::open(cc), "cache");
  auto art = must(cache->lookup(key, sk::kKindSuperKernel, true), "lookup");
  if (!art || !art->bytes || art->bytes->empty()) die("disk hit expected for " + key);
  // What a process does on a disk hit: verify (above), then load (memfd + dlopen).
  auto loaded = must(sk::cpuLoad(*art), "load");
  if (!sk::cpuRunFunction(*loaded)) die("disk hit expected for " + key);
  double lookupMs = (nowNs() - t0) / 1e6;
  double t1 = nowNs();
  sk::SessionOptions so;
  so.cacheDir = cacheDir;
  so.options = options;
  auto s = must(sk::Session::create(so), "session");
  sk::OpList list = must(sk::loadOpList(opsFile), "load");
  sk::CompiledPlan cp = must(s->compile(list, {}), "compile");
  double compileMs = (nowNs() - t1) / 1e6;
  if (cp.stats.superKernelMisses || cp.stats.objectMisses) die("child: not a disk hit");
  fmt::print("{{\"lookup_ms\": {:.4f}, \"compile_ms\": {:.4f}}}\n", lookupMs, compileMs);
  return 0;
}

int childCompile(const std::string& opsFile, const std::string& cacheDir, const std::string& options) {
  sk::SessionOptions so;
  so.cacheDir = cacheDir;
  so.options = options;
  so.jobs = 1;
  auto s = must(sk::Session::create(so), "session");
  sk::OpList list = must(sk::loadOpList(opsFile), "load");
  (void)must(s->compile(list, {}), "compile");
  return 0;
}

void usage() {
  fmt::print(
      "usage: sk_bench_suite --ops DIR --out DIR [--only LIST] [--smoke] [--reps N] [--sample-ms MS]\n"
      "                      [--compile-reps N] [--no-session-unfused] [--options STR]\n"
      "                      [--stacks NAME,...] [--loop-tokens T]\n"
      "  LIST: comma-separated of boundary,decode,loop,compile,sweep,static,kernels,blockdim,a2a,fanin\n"
      "        (default: all)\n"
      "  --loop-tokens: tokens per sample of the decode loop (section 2b, default 32)\n"
      "  --stacks: the decode stacks of section 2 (op list names in --ops, default\n"
      "            decode_stack_shared_weights,decode_stack,decode_small)\n");
}

}  // namespace

int main(int argc, char** argv) {
  cfg.self = fs::canonical("/proc/self/exe");
  if (argc >= 2 && std::string(argv[1]) == "child-noop") return 0;
  if (argc == 6 && std::string(argv[1]) == "child-disk-hit") return childDiskHit(argv[2], argv[3], argv[4], argv[5]);
  if (argc == 5 && std::string(argv[1]) == "child-compile") return childCompile(argv[2], argv[3], argv[4]);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--ops") cfg.ops = fs::absolute(next());
    else if (a == "--out") cfg.out = fs::absolute(next());
    else if (a == "--smoke") cfg.smoke = true;
    else if (a == "--reps") cfg.reps = std::stoi(next());
    else if (a == "--sample-ms") cfg.sampleMs = std::stod(next());
    else if (a == "--compile-reps") cfg.compileReps = std::stoi(next());
    else if (a == "--loop-tokens") cfg.loopTokens = std::stoi(next());
    else if (a == "--no-session-unfused") cfg.sessionUnfused = false;
    else if (a == "--options") cfg.options = next();
    else if (a == "--stacks") {
      cfg.stacks.clear();
      std::string l = next();
      for (size_t p = 0; p <= l.size();) {
        size_t q = l.find(',', p);
        if (q == std::string::npos) q = l.size();
        if (q > p) cfg.stacks.push_back(l.substr(p, q - p));
        p = q + 1;
      }
    } else if (a == "--only") {
      std::string l = next();
      for (size_t p = 0; p <= l.size();) {
        size_t q = l.find(',', p);
        if (q == std::string::npos) q = l.size();
        if (q > p) cfg.only.push_back(l.substr(p, q - p));
        p = q + 1;
      }
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      usage();
      die("unknown argument " + a);
    }
  }
  if (cfg.ops.empty() || cfg.out.empty()) {
    usage();
    return 2;
  }
  if (cfg.smoke) {
    // Every code path, seconds in total: 5 repetitions of short samples.
    cfg.reps = 5;
    cfg.sampleMs = 2;
    cfg.settleMs = 1;
    cfg.compileReps = 1;
  }
  if (cfg.reps < 5) die("--reps must be >= 5");
  if (cfg.loopTokens < 1 || cfg.loopTokens > 256) die("--loop-tokens must be 1..256 (the KV caches hold 256 rows)");
  fs::create_directories(cfg.out);
  fmt::print("# superkernel benchmarks ({} mode): {} reps, {} ms samples, W = {} workers\n", cfg.smoke ? "smoke" : "full",
             cfg.reps, cfg.sampleMs, cpuExec().numWorkers());
  fmt::print("Worker placement: {}\n", cpuExec().placement().note);
  if (wanted("kernels")) benchKernels();
  if (wanted("boundary")) benchBoundary();
  if (wanted("blockdim")) benchBlockDim();
  if (wanted("a2a")) benchA2A();
  if (wanted("fanin")) benchFanin();
  if (wanted("decode")) benchDecode();
  if (wanted("loop")) benchDecodeLoop();
  if (wanted("sweep")) benchSweep();
  if (wanted("static")) benchStatic();
  if (wanted("compile")) benchCompile();
  fmt::print("\nWorker placement at the end: {}; launches that found the caller on a worker's CPU and moved it: {}\n",
             cpuExec().placement().note, cpuExec().placement().callerMoves);
  fs::remove_all(cfg.out / "tmp");
  return 0;
}
