// The cpu target: fills templates/cpu/superkernel.cpp.tmpl from one step of a
// FusionPlan. All decisions (sync kinds, queues, barriers, preloads) are the
// planner's; this file only maps them onto the runtime's primitives and
// checks the plan is self-consistent, so a planner bug surfaces as an
// Internal error naming the op instead of as generated code that hangs.
#include <fmt/format.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codegen/TargetRegistry.h"
#include "superkernel/codegen/Template.h"
#include "superkernel/support/Paths.h"
#include "support/Escape.h"

namespace sk {
namespace {

constexpr uint64_t kPreloadGranule = 2048;
constexpr uint64_t kPreloadMax = 16384;
// The template's sk_preload prefetches whole 2 KiB steps.
static_assert(kPreloadGranule % 2048 == 0 && kPreloadMax % 2048 == 0, "sk_preload works in 2 KiB steps");

// Names from the op list reach the source only through these two (support/Escape.h).
std::string cString(std::string_view s) { return escapeCString(s); }
std::string commentText(std::string_view s) { return escapeComment(s); }

std::string hexFloat(double v, const char* suffix) {
  if (std::isnan(v)) return std::string("__builtin_nan") + (suffix[0] ? "f" : "") + "(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + "__builtin_inf" + (suffix[0] ? "f" : "") + "()";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return std::string(buf) + suffix;
}

struct Wait {
  enum class Kind { Counter, FlagOne, FlagTable } kind = Kind::Counter;
  uint32_t producer = 0;
  uint32_t counter = 0;      // Counter
  uint32_t flagBase = 0;     // Flag*
  int table = -1;            // FlagTable
  uint64_t blocks = 0;       // Counter: producer blocks
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // Flag*
  std::string what;
  std::string summary;
};

class CpuTarget final : public Target {
 public:
  CpuTarget(Template tmpl, std::filesystem::path file) : tmpl_(std::move(tmpl)), file_(std::move(file)) {}

  std::string_view name() const override { return "cpu"; }
  std::string_view language() const override { return "c++"; }
  std::string_view sourceExtension() const override { return ".cpp"; }
  std::vector<std::filesystem::path> templateFiles() const override { return {file_}; }
  std::vector<std::string> sourceFlags(const Options&) const override { return {}; }

  Expected<GeneratedSource> emit(const FusionPlan& plan, size_t step) const override {
    if (step >= plan.steps.size()) {
      return internalError(fmt::format("step {} out of range (the plan has {})", step, plan.steps.size()));
    }
    const SuperKernelPlan& sk = plan.steps[step];
    auto out = emitStep(plan, sk);
    if (!out) return std::move(out).error().context("while generating cpu code for SuperKernel " + sk.name);
    return out;
  }

 private:
  Expected<GeneratedSource> emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const;

  Template tmpl_;
  std::filesystem::path file_;
};

// Structural checks the emitted code relies on. The planner's validatePlan
// proves hang-freedom; these catch indices and shapes that would make the
// generated code wrong rather than just slow.
Status checkStep(const FusionPlan& plan, const SuperKernelPlan& sk) {
  if (sk.numCores == 0) return internalError("numCores is 0");
  if (sk.ops.empty()) return internalError("no ops");
  if (sk.queues.empty()) return internalError("no queues");
  std::vector<int> queueOf(sk.ops.size(), -1);
  for (size_t q = 0; q < sk.queues.size(); ++q) {
    const Queue& qu = sk.queues[q];
    if (qu.numCores == 0 || qu.firstCore + uint64_t{qu.numCores} > sk.numCores) {
      return internalError(fmt::format("queue {} uses cores [{}, {}) outside [0, {})", q, qu.firstCore,
                                       uint64_t{qu.firstCore} + qu.numCores, sk.numCores));
    }
    for (size_t r = 0; r < q; ++r) {
      const Queue& o = sk.queues[r];
      if (qu.firstCore < o.firstCore + o.numCores && o.firstCore < qu.firstCore + qu.numCores) {
        return internalError(fmt::format("queues {} and {} share cores", r, q));
      }
    }
    for (uint32_t i : qu.ops) {
      if (i >= sk.ops.size()) return internalError(fmt::format("queue {} lists op {} of {}", q, i, sk.ops.size()));
      if (queueOf[i] != -1) return internalError(fmt::format("op {} is in two queues", sk.ops[i].name));
      queueOf[i] = static_cast<int>(q);
    }
  }
  for (size_t i = 0; i < sk.ops.size(); ++i) {
    const PlannedOp& op = sk.ops[i];
    if (queueOf[i] < 0 || static_cast<uint32_t>(queueOf[i]) != op.queue) {
      return internalError(fmt::format("op {} is not in its queue {}", op.name, op.queue));
    }
    if (op.blockDim == 0) return internalError(fmt::format("op {} has block_dim 0", op.name));
    if (op.variant >= plan.variants.size()) {
      return internalError(fmt::format("op {} uses variant {} of {}", op.name, op.variant, plan.variants.size()));
    }
    if (op.preloadVariant >= 0 && static_cast<size_t>(op.preloadVariant) >= plan.variants.size()) {
      return internalError(fmt::format("op {} preloads variant {} of {}", op.name, op.preloadVariant,
                                       plan.variants.size()));
    }
    const KernelDecl& decl = plan.variants[op.variant].decl;
    if (op.args.size() != decl.params.size()) {
      return internalError(fmt::format("op {} binds {} arguments, kernel {} declares {}", op.name, op.args.size(),
                                       decl.name, decl.params.size()));
    }
    for (size_t a = 0; a < op.args.size(); ++a) {
      const BoundArg& arg = op.args[a];
      if (arg.kind != decl.params[a].kind) {
        return internalError(fmt::format("op {} argument {}: kind differs from the declaration", op.name,
                                         decl.params[a].name));
      }
      if (arg.kind == ParamKind::Buffer && (arg.buffer < 0 || static_cast<size_t>(arg.buffer) >= sk.buffers.size())) {
        return internalError(fmt::format("op {} argument {}: buffer index {} of {}", op.name,
                                         decl.params[a].name, arg.buffer, sk.buffers.size()));
      }
    }
    // Blocks of a kernel_sync op must all run at once: at most one per core.
    if (op.kernelSync && op.blockDim > sk.queues[op.queue].numCores) {
      return badInput(fmt::format("op {} uses sk_kernel_sync with block_dim {} but its queue has {} core(s); "
                                  "all blocks must run at once",
                                  op.name, op.blockDim, sk.queues[op.queue].numCores));
    }
  }
  for (const Edge& e : sk.edges) {
    if (e.producer >= sk.ops.size() || e.consumer >= sk.ops.size()) {
      return internalError(fmt::format("edge {} -> {} out of range", e.producer, e.consumer));
    }
    const PlannedOp& p = sk.ops[e.producer];
    const PlannedOp& c = sk.ops[e.consumer];
    const bool sameQueue = p.queue == c.queue;
    switch (e.sync) {
      case SyncKind::None:
        break;
      case SyncKind::Local:
        // Program order orders only ops of one queue; which blocks share a
        // core (equal block counts, or a single core) is the planner's proof.
        if (!sameQueue) {
          return internalError(fmt::format("local edge {} -> {} crosses queues", p.name, c.name));
        }
        break;
      case SyncKind::Barrier:
        if (!sameQueue || !c.barrierBefore) {
          return internalError(fmt::format("barrier edge {} -> {} without a barrier before {} in its queue", p.name,
                                           c.name, c.name));
        }
        break;
      case SyncKind::Flag:
        if (e.flagRanges.size() != c.blockDim) {
          return internalError(fmt::format("flag edge {} -> {}: {} ranges for {} consumer blocks", p.name, c.name,
                                           e.flagRanges.size(), c.blockDim));
        }
        for (const auto& [lo, hi] : e.flagRanges) {
          if (lo <= hi && hi >= p.blockDim) {
            return internalError(fmt::format("flag edge {} -> {}: producer block {} of {}", p.name, c.name, hi,
                                             p.blockDim));
          }
        }
        break;
      case SyncKind::Counter:
      case SyncKind::Event:
        break;
    }
  }
  return Status::success();
}

bool isIdentity(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  for (size_t b = 0; b < ranges.size(); ++b)
    if (ranges[b].first != b || ranges[b].second != b) return false;
  return true;
}

std::string formatRanges(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::string s;
  for (size_t b = 0; b < ranges.size(); ++b) {
    if (b) s += (b % 8 == 0) ? ",\n    " : ", ";
    // An empty range is written {1, 0} so the wait loop does not run.
    if (ranges[b].first > ranges[b].second) {
      s += "{1, 0}";
    } else {
      s += fmt::format("{{{}, {}}}", ranges[b].first, ranges[b].second);
    }
  }
  return s;
}

Expected<GeneratedSource> CpuTarget::emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const {
  SK_RETURN_IF_ERROR(checkStep(plan, sk));
  const size_t n = sk.ops.size();
  const Options& opt = sk.options;

  // Static state: which ops own a completion counter, flags, kernel_sync.
  std::vector<int> doneOf(n, -1), flagBaseOf(n, -1), ksyncOf(n, -1);
  uint32_t numDone = 0, numFlags = 0, numKsync = 0;
  for (const Edge& e : sk.edges) {
    if ((e.sync == SyncKind::Counter || e.sync == SyncKind::Event) && doneOf[e.producer] < 0)
      doneOf[e.producer] = static_cast<int>(numDone++);
  }
  for (const Edge& e : sk.edges) {
    if (e.sync == SyncKind::Flag && flagBaseOf[e.producer] < 0) {
      flagBaseOf[e.producer] = static_cast<int>(numFlags);
      numFlags += sk.ops[e.producer].blockDim;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (sk.ops[i].kernelSync) ksyncOf[i] = static_cast<int>(numKsync++);

  // An unfused step's text names its kernel, not its op: the 61 layers of a
  // decode stack then share one shared object per distinct op instead of
  // compiling 1,525 (the text is the cache key; the step keeps its name in
  // the manifest and traces).
  auto opLabel = [&](const PlannedOp& op) {
    return sk.fused ? op.name : plan.variants[op.variant].decl.name;
  };
  const std::string skLabel = sk.fused || sk.ops.empty() ? sk.name : "unfused " + opLabel(sk.ops[0]);

  TemplateValues v;
  v.set("name", commentText(skLabel));
  v.set("num_ops", static_cast<uint64_t>(n));
  v.set("num_queues", static_cast<uint64_t>(sk.queues.size()));
  v.set("num_cores", sk.numCores);
  v.set("num_buffers", static_cast<uint64_t>(sk.buffers.size()));
  v.set("func_attr", opt.funcAlign > 0 ? fmt::format("__attribute__((aligned({}))) ", opt.funcAlign) : "");
  // The driver compiles this file with -falign-functions=<func-align>; an explicit attribute keeps the
  // per-op call thunks at the usual 16 (clang applies -falign-functions only to functions without one).
  v.set("thunk_attr", opt.funcAlign > 16 ? "__attribute__((aligned(16))) " : "");
  v.setIf("profiling", opt.profiling);
  v.setIf("has_done", numDone > 0).set("num_done", numDone);
  v.setIf("has_flags", numFlags > 0).set("num_flags", numFlags);
  v.setIf("has_ksync", numKsync > 0).set("num_ksync", numKsync);

  // Waits per consumer, deduplicated (two edges from one producer, e.g. RAW
  // on two buffers, need one wait; a counter wait covers any flag wait).
  std::vector<std::vector<Wait>> waits(n);
  v.list("flag_tables");
  int numTables = 0;
  for (const Edge& e : sk.edges) {
    if (e.sync != SyncKind::Flag && e.sync != SyncKind::Counter && e.sync != SyncKind::Event) continue;
    const PlannedOp& p = sk.ops[e.producer];
    const PlannedOp& c = sk.ops[e.consumer];
    std::string summary = fmt::format("{} ({}, {} on {})", p.name, syncKindName(e.sync), depKindName(e.dep), e.buffer);
    std::string what = cString(fmt::format("{} <- {} ({}, {} on {})", c.name, p.name, syncKindName(e.sync),
                                           depKindName(e.dep), e.buffer));
    auto& list = waits[e.consumer];
    if (e.sync == SyncKind::Flag) {
      bool covered = std::any_of(list.begin(), list.end(), [&](const Wait& w) {
        return w.producer == e.producer && (w.kind == Wait::Kind::Counter || w.ranges == e.flagRanges);
      });
      if (covered) continue;
      Wait w;
      w.kind = isIdentity(e.flagRanges) ? Wait::Kind::FlagOne : Wait::Kind::FlagTable;
      w.producer = e.producer;
      w.flagBase = static_cast<uint32_t>(flagBaseOf[e.producer]);
      w.ranges = e.flagRanges;
      if (w.kind == Wait::Kind::FlagTable) {
        w.table = numTables++;
        auto& t = v.add("flag_tables");
        t.set("id", w.table);
        t.set("size", c.blockDim);
        t.set("comment", commentText(fmt::format("{} <- {}", c.name, p.name)));
        t.set("entries", formatRanges(e.flagRanges));
      }
      w.what = std::move(what);
      w.summary = std::move(summary);
      list.push_back(std::move(w));
    } else {
      // A counter wait replaces earlier flag waits on the same producer.
      list.erase(std::remove_if(list.begin(), list.end(),
                                [&](const Wait& w) { return w.producer == e.producer; }),
                 list.end());
      Wait w;
      w.kind = Wait::Kind::Counter;
      w.producer = e.producer;
      w.counter = static_cast<uint32_t>(doneOf[e.producer]);
      w.blocks = p.blockDim;
      w.what = std::move(what);
      w.summary = std::move(summary);
      list.push_back(std::move(w));
    }
  }

  std::vector<bool> hasSignal(n, false);
  for (size_t i = 0; i < n; ++i) hasSignal[i] = doneOf[i] >= 0 || flagBaseOf[i] >= 0;

  // Variants the source references: called ones and preloaded ones.
  std::set<uint32_t> used;
  for (const PlannedOp& op : sk.ops) {
    used.insert(op.variant);
    if (op.preloadVariant >= 0 && opt.preloadCode != PreloadCode::None) used.insert(static_cast<uint32_t>(op.preloadVariant));
  }
  v.list("kernels");
  for (uint32_t vi : used) {
    const KernelVariant& var = plan.variants[vi];
    auto& k = v.add("kernels");
    k.set("symbol", var.symbol);
    k.list("params");
    for (const ParamDecl& p : var.decl.params) {
      auto& pi = k.add("params");
      std::string type = cpuCType(p.dtype);
      if (p.kind == ParamKind::Buffer) type = (p.access == Access::Read ? "const " : "") + type + "*";
      pi.set("ctype", type);
      pi.set("pname", "/*" + sanitizeIdentifier(p.name) + "*/");
    }
  }

  v.setIf("has_waits", std::any_of(waits.begin(), waits.end(), [](const auto& w) { return !w.empty(); }));
  v.setIf("has_barriers", std::any_of(sk.ops.begin(), sk.ops.end(), [](const PlannedOp& o) { return o.barrierBefore; }));
  v.setIf("has_early", std::any_of(sk.ops.begin(), sk.ops.end(), [](const PlannedOp& o) { return o.earlyStart; }));
  v.setIf("has_signals", std::any_of(hasSignal.begin(), hasSignal.end(), [](bool s) { return s; }));

  // Per op, in index order: its call thunk (the kernel with its typed
  // arguments) and its constant descriptor (blocks, start mode, waits, what it
  // signals). The shared sk_op / sk_op_wait / sk_op_signal / sk_op_ksync read
  // the descriptor, so per op there is one tiny function and some data, and
  // the queues are one sk_op line per op: compile time stays linear and small.
  v.list("op_fns");
  v.list("ksync_fns");
  for (size_t i = 0; i < n; ++i) {
    const PlannedOp& op = sk.ops[i];
    const KernelVariant& var = plan.variants[op.variant];
    auto& of = v.add("op_fns");
    of.set("op", static_cast<uint64_t>(i));
    of.set("op_name", commentText(opLabel(op)));
    of.set("symbol", var.symbol);
    of.set("blocks", op.blockDim);
    std::string comment;
    if (op.earlyStart) comment += "; early start";
    if (op.kernelSync) comment += "; kernel_sync";
    of.set("comment", comment);
    // Its waits: one constant entry per producer, read by the shared sk_op_wait.
    of.list("waits_summary");
    of.list("wait_list");
    std::string waitsPtr = "nullptr";
    if (!waits[i].empty()) {
      std::string summary;
      auto& wl = of.add("wait_list");
      wl.list("waits");
      for (const Wait& wt : waits[i]) {
        if (!summary.empty()) summary += ", ";
        summary += wt.summary;
        std::string entry;
        switch (wt.kind) {
          case Wait::Kind::Counter:
            entry = fmt::format("{{SK_COUNTER, &sk_done[{}], {}, nullptr, \"{}\"}}", wt.counter, wt.blocks, wt.what);
            break;
          case Wait::Kind::FlagOne:
            entry = fmt::format("{{SK_FLAG, &sk_flags[{}], 0, nullptr, \"{}\"}}", wt.flagBase, wt.what);
            break;
          case Wait::Kind::FlagTable:
            entry = fmt::format("{{SK_FLAG_RANGE, &sk_flags[{}], 0, sk_fr{}, \"{}\"}}", wt.flagBase, wt.table, wt.what);
            break;
        }
        wl.add("waits").set("entry", entry);
      }
      of.add("waits_summary").set("summary", commentText(summary));
      waitsPtr = fmt::format("sk_waits_op{}", i);
    }
    std::string head = fmt::format("{{{}, {}, {}, {}, sk_call_op{}, {}, {},", i, op.blockDim,
                                   sk.queues[op.queue].numCores, op.earlyStart ? "SK_EARLY" : "SK_PLAIN", i,
                                   waits[i].size(), waitsPtr);
    std::string tail = fmt::format(
        "/*flags*/ {}, /*done*/ {}, /*kernel_sync*/ {}}}",
        flagBaseOf[i] >= 0 ? fmt::format("&sk_flags[{}]", flagBaseOf[i]) : "nullptr",
        doneOf[i] >= 0 ? fmt::format("&sk_done[{}]", doneOf[i]) : "nullptr",
        op.kernelSync ? fmt::format("&sk_ksync[{0}], &sk_ksync_base[{0}], \"{1}\"", ksyncOf[i],
                                    cString(opLabel(op) + ": sk_kernel_sync"))
                      : "nullptr, nullptr, nullptr");
    // The descriptor's second line lines up under its first field.
    const size_t indent = fmt::format("const sk_op_desc sk_op{} = {{", i).size();
    of.set("desc", head + "\n" + std::string(indent, ' ') + tail);
    if (op.kernelSync) v.add("ksync_fns").set("ksync", ksyncOf[i]);
    bool usesBuf = false;
    of.list("args");
    for (size_t a = 0; a < op.args.size(); ++a) {
      const BoundArg& arg = op.args[a];
      const ParamDecl& decl = var.decl.params[a];
      std::string text;
      if (arg.kind == ParamKind::Buffer) {
        usesBuf = true;
        text = fmt::format("static_cast<{}{}*>(buf[{}])", decl.access == Access::Read ? "const " : "",
                           cpuCType(decl.dtype), arg.buffer);
        if (arg.offset) text += fmt::format(" + {}", arg.offset);
      } else {
        auto lit = cpuScalarLiteral(arg.scalar, decl.dtype);
        if (!lit) return std::move(lit).error().context(fmt::format("op {} argument {}", op.name, decl.name));
        text = *lit;
      }
      of.add("args").set("arg", text);
    }
    // An op without buffer arguments leaves the parameter unnamed (-Wunused-parameter).
    of.set("buf_param", usesBuf ? "buf" : "/*buf*/");
  }

  bool anyPreload = false;
  v.list("queues");
  for (size_t q = 0; q < sk.queues.size(); ++q) {
    const Queue& qu = sk.queues[q];
    auto& qv = v.add("queues");
    qv.set("q", static_cast<uint64_t>(q));
    qv.set("stream", qu.stream);
    qv.set("first", qu.firstCore);
    qv.set("end", qu.firstCore + qu.numCores);
    qv.set("cores", qu.numCores);
    qv.set("core_test", qu.firstCore == 0 ? fmt::format("core < {}", qu.numCores)
                                          : fmt::format("core >= {} && core < {}", qu.firstCore,
                                                        qu.firstCore + qu.numCores));
    uint64_t barriers = 0;
    for (uint32_t i : qu.ops) barriers += sk.ops[i].barrierBefore ? 1 : 0;
    qv.set("barriers_per_launch", barriers);
    qv.setIf("queue_has_barriers", barriers > 0);
    qv.list("ops");
    uint64_t k = 0;
    for (uint32_t i : qu.ops) {
      const PlannedOp& op = sk.ops[i];
      auto& ov = qv.add("ops");
      ov.set("op", i);
      ov.set("op_name", commentText(opLabel(op)));
      ov.set("barrier_what", cString("barrier before " + opLabel(op)));
      ov.list("barrier");
      if (op.barrierBefore) ov.add("barrier").set("k", ++k);
      ov.list("preload");
      if (op.preloadVariant >= 0) {
        const KernelVariant& pv = plan.variants[static_cast<size_t>(op.preloadVariant)];
        uint64_t bytes = preloadBytes(opt.preloadCode, pv.codeBytes);
        if (bytes > 0) {
          anyPreload = true;
          auto& p = ov.add("preload");
          p.set("preload_symbol", pv.symbol);
          p.set("preload_bytes", bytes);
        }
      }
    }
  }
  v.setIf("has_preload", anyPreload);

  auto text = tmpl_.render(v);
  if (!text) return std::move(text).error();

  GeneratedSource src;
  src.name = sk.name;
  src.fileName = sanitizeIdentifier(sk.name) + ".cpp";
  src.language = "c++";
  src.text = std::move(*text);
  src.variants.assign(used.begin(), used.end());

  nlohmann::json m;
  m["format"] = "superkernel.manifest";
  m["version"] = 1;
  m["name"] = sk.name;
  m["target"] = "cpu";
  m["num_cores"] = sk.numCores;
  m["options"] = opt.canonical();
  m["fused"] = sk.fused;
  m["buffers"] = nlohmann::json::array();
  for (const PlanBuffer& b : sk.buffers)
    m["buffers"].push_back({{"name", b.name}, {"dtype", dtypeName(b.dtype)}, {"elements", b.elements}});
  m["ops"] = nlohmann::json::array();
  for (const PlannedOp& op : sk.ops)
    m["ops"].push_back({{"name", op.name},
                        {"symbol", plan.variants[op.variant].symbol},
                        {"block_dim", op.blockDim},
                        {"queue", op.queue}});
  m["variants"] = nlohmann::json::array();
  for (uint32_t vi : used) m["variants"].push_back(plan.variants[vi].symbol);
  src.manifest = m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return src;
}

}  // namespace

// ---- free helpers ----------------------------------------------------------

uint64_t preloadBytes(PreloadCode mode, uint64_t codeBytes) {
  switch (mode) {
    case PreloadCode::None:
      return 0;
    case PreloadCode::Max:
      return kPreloadMax;
    case PreloadCode::PerFunc: {
      // Unknown size (0): one granule, the smallest useful prefetch.
      uint64_t rounded = std::max<uint64_t>(kPreloadGranule, (codeBytes + kPreloadGranule - 1) / kPreloadGranule *
                                                                 kPreloadGranule);
      return std::min(rounded, kPreloadMax);
    }
  }
  return 0;
}

const char* cpuCType(DType t) { return dtypeCType(t); }

Expected<std::string> cpuScalarLiteral(const ScalarValue& v, DType t) {
  if (t == DType::F16 || t == DType::BF16) {
    return badInput(fmt::format("scalar of dtype {} is not supported on cpu (2-byte storage types are buffers only)",
                                dtypeName(t)));
  }
  if (t == DType::F64 || t == DType::F32) {
    double d = std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v);
    if (t == DType::F32) {
      // Round to float here so the literal is exactly the value passed.
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
        return badInput(fmt::format("{} does not fit in f32", d));
      }
      return hexFloat(static_cast<double>(static_cast<float>(d)), "f");
    }
    return hexFloat(d, "");
  }
  // Integral types: the value must be an exact integer in range.
  __int128 value = 0;
  if (std::holds_alternative<int64_t>(v)) {
    value = std::get<int64_t>(v);
  } else {
    double d = std::get<double>(v);
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > 1.8446744073709552e19) {
      return badInput(fmt::format("{} is not an integer value for a {} parameter", d, dtypeName(t)));
    }
    value = static_cast<__int128>(d);
  }
  auto [lo, hi] = dtypeIntRange(t);
  if (value < lo || value > hi) {
    return badInput(fmt::format("{} is out of range for a {} parameter", static_cast<long long>(value), dtypeName(t)));
  }
  switch (t) {
    case DType::Bool:
      return std::string(value ? "true" : "false");
    case DType::I64:
      if (value == INT64_MIN) return std::string("(-INT64_C(9223372036854775807) - 1)");
      return fmt::format("INT64_C({})", static_cast<int64_t>(value));
    case DType::U64:
      return fmt::format("UINT64_C({})", static_cast<uint64_t>(value));
    case DType::I32:
      if (value == INT32_MIN) return std::string("(-2147483647 - 1)");
      return fmt::format("{}", static_cast<int64_t>(value));
    case DType::U32:
      return fmt::format("{}u", static_cast<uint64_t>(value));
    default:
      return fmt::format("static_cast<{}>({})", cpuCType(t), static_cast<int64_t>(value));
  }
}

std::string sanitizeIdentifier(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  return out;
}

Expected<std::shared_ptr<const Target>> makeCpuTarget() {
  std::filesystem::path file = dataTemplatesDir() / "cpu" / "superkernel.cpp.tmpl";
  std::ifstream in(file, std::ios::binary);
  if (!in) return ioError(fmt::format("cannot read template {}", file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return ioError(fmt::format("cannot read template {}", file.string()));
  auto tmpl = Template::parse(ss.str(), file.string());
  if (!tmpl) return std::move(tmpl).error();
  return std::shared_ptr<const Target>(std::make_shared<CpuTarget>(std::move(*tmpl), file));
}

}  // namespace sk
