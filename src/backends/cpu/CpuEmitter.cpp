// The cpu emitter: fills templates/cpu/superkernel.cpp.tmpl from one step of
// a FusionPlan. All decisions (sync kinds, queues, barriers, preloads) are
// the planner's, and the slots and deduplicated waits are the shared sync
// layout's (codegen/SyncLayout.h, which also checks the step's shape); this
// file only prints them with the cpu runtime's primitives.
#include <fmt/format.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include "superkernel/codegen/StepValues.h"
#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/codegen/Template.h"
#include "superkernel/codegen/TemplateEmitter.h"
#include "superkernel/plan/DataPreload.h"
#include "backends/cpu/CpuBackend.h"
#include "superkernel/support/Paths.h"
#include "support/Escape.h"

namespace sk {
namespace {

// Names from the op list reach the source only through these two (support/Escape.h).
std::string cString(std::string_view s) { return escapeCString(s); }
std::string commentText(std::string_view s) { return escapeComment(s); }

// List "helpers": one function per kernel variant, kind (plain: sk_plain_, else sk_op_) and pattern of
// runtime scalars (passed as the address of their element, suffix _r<argument>...), which the queue lines
// call with each op's arguments; helperOf[i] names op i's.
template <typename IsPlain>
void addHelpers(TemplateValues& v, const FusionPlan& plan, const SuperKernelPlan& sk, const IsPlain& plain,
                std::vector<std::string>& helperOf) {
  v.list("helpers");
  std::set<std::string> made;
  for (size_t i = 0; i < sk.ops.size(); ++i) {
    const PlannedOp& op = sk.ops[i];
    const KernelVariant& var = plan.variants[op.variant];  // its arguments match var's parameters (checkStepShape)
    // A runtime scalar reaches the helper as the address of its element (RuntimeScalarArg::Pointer).
    auto runtime = [&](size_t a) { return op.args[a].kind != ParamKind::Buffer && op.args[a].runtime; };
    std::string name = (plain(i) ? "sk_plain_" : "sk_op_") + var.symbol;
    for (size_t a = 0; a < op.args.size(); ++a)
      if (runtime(a)) name += fmt::format("_r{}", a);
    helperOf[i] = name;
    if (!made.insert(name).second) continue;
    auto& h = v.add("helpers");
    h.set("name", name).set("symbol", var.symbol).setIf("plain", plain(i));
    h.list("params");
    for (size_t a = 0; a < op.args.size(); ++a) {
      const ParamDecl& p = var.decl.params[a];
      auto& pv = h.add("params");
      pv.set("i", static_cast<uint64_t>(a));
      pv.set("ctype", runtime(a) ? fmt::format("const {}*", cType(p.dtype)) : cParamType(p));
      pv.set("use", (runtime(a) ? "*a" : "a") + std::to_string(a));
    }
  }
}

// Step index checks, error context and the template file are TemplateEmitter's
// (codegen/TemplateEmitter.h); this class prints the cpu runtime's source.
class CpuTemplateEmitter final : public TemplateEmitter {
 public:
  CpuTemplateEmitter(Template tmpl, std::filesystem::path file) : TemplateEmitter("cpu", std::move(tmpl), std::move(file)) {}

 private:
  Expected<GeneratedSource> emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const override;
};

Expected<GeneratedSource> CpuTemplateEmitter::emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const {
  SK_ASSIGN_OR_RETURN(SyncLayout L, layoutSync(plan, sk));
  const size_t n = sk.ops.size();
  const Options& opt = sk.options;
  // Labels: an unfused step's text names its kernel, not its op (codegen/StepValues.h).
  auto opLabel = [&](const PlannedOp& op) { return stepOpLabel(plan, sk, op); };

  // What cpu and cuda print alike (codegen/StepValues.h), then the cpu runtime's own values.
  TemplateValues v;
  setStepCounts(v, plan, sk);
  v.set("func_attr", opt.funcAlign > 0 ? fmt::format("__attribute__((aligned({}))) ", opt.funcAlign) : "");
  v.setIf("profiling", opt.profiling);
  v.setIf("has_done", L.numCounters > 0).set("num_done", L.numCounters);
  v.setIf("has_flags", L.numFlags > 0).set("num_flags", L.numFlags);
  v.setIf("has_ksync", L.numKernelSyncs > 0).set("num_ksync", L.numKernelSyncs);

  v.list("flag_tables");
  for (size_t t = 0; t < L.flagTables.size(); ++t) {
    const FlagTable& ft = L.flagTables[t];
    auto& tv = v.add("flag_tables");
    tv.set("id", static_cast<uint64_t>(t));
    tv.set("size", sk.ops[ft.consumer].blockDim);
    tv.set("comment", commentText(fmt::format("{} <- {}", sk.ops[ft.consumer].name, sk.ops[ft.producer].name)));
    tv.set("entries", formatFlagRanges(*ft.ranges));
  }

  addKernelDecls(v, plan, L);

  v.setIf("has_waits", L.anyWaits());
  v.setIf("has_barriers", std::any_of(sk.ops.begin(), sk.ops.end(), [](const PlannedOp& o) { return o.barrierBefore; }));
  v.setIf("has_early", std::any_of(sk.ops.begin(), sk.ops.end(), [](const PlannedOp& o) { return o.earlyStart; }));
  v.setIf("has_signals", L.anySignals());
  // A plain op (sk_plain_<symbol>): nothing for sk_op to do but call its blocks.
  auto plain = [&](size_t i) {
    return L.waits[i].empty() && L.flagBaseOf[i] < 0 && L.counterOf[i] < 0 && !sk.ops[i].kernelSync &&
           !opt.profiling;
  };
  bool anyPlain = false, anyGeneric = false;
  for (size_t i = 0; i < n; ++i) (plain(i) ? anyPlain : anyGeneric) = true;
  v.setIf("has_plain", anyPlain);
  v.setIf("has_generic", anyGeneric);
  // One helper per kernel variant, plain or not, and runtime-scalar pattern (helperOf[i]: op i's name).
  std::vector<std::string> helperOf(n);
  addHelpers(v, plan, sk, plain, helperOf);

  // Per op that is not plain, in index order: its constant descriptor (blocks,
  // start mode, waits, what it signals). sk_op (inlined into the variant's
  // helper) / sk_op_wait / sk_op_signal / sk_op_ksync read it, so per op there
  // is some data and one queue line, no function: compile time stays linear.
  v.list("op_fns");
  v.list("ksync_fns");
  for (size_t i = 0; i < n; ++i) {
    const PlannedOp& op = sk.ops[i];
    auto& of = addOpFn(v, plan, sk, L, i);
    of.setIf("plain_op", plain(i));
    // Its waits: one constant entry per producer, read by the shared sk_op_wait.
    of.list("wait_list");
    std::string waitsPtr = "nullptr";
    if (!L.waits[i].empty()) {
      auto& wl = of.add("wait_list");
      wl.list("waits");
      for (const SyncWait& wt : L.waits[i]) {
        std::string what = cString(op.name + " <- " + describeWait(sk, *wt.edge));
        std::string entry;
        switch (wt.kind) {
          case SyncWait::Kind::Counter:
            entry = fmt::format("{{SK_COUNTER, &sk_done[{}], {}, nullptr, \"{}\"}}", wt.counter, wt.blocks, what);
            break;
          case SyncWait::Kind::FlagOne:
            entry = fmt::format("{{SK_FLAG, &sk_flags[{}], 0, nullptr, \"{}\"}}", wt.flagBase, what);
            break;
          case SyncWait::Kind::FlagTable:
            entry = fmt::format("{{SK_FLAG_RANGE, &sk_flags[{}], 0, sk_fr{}, \"{}\"}}", wt.flagBase, wt.table, what);
            break;
        }
        wl.add("waits").set("entry", entry);
      }
      waitsPtr = fmt::format("sk_waits_op{}", i);
    }
    std::string head = fmt::format("{{{}, {}, {}, {}, {}, {},", i, op.blockDim, sk.queues[op.queue].numCores,
                                   op.earlyStart ? "SK_EARLY" : "SK_PLAIN", L.waits[i].size(), waitsPtr);
    std::string tail = fmt::format(
        "/*flags*/ {}, /*done*/ {}, /*kernel_sync*/ {}}}",
        L.flagBaseOf[i] >= 0 ? fmt::format("&sk_flags[{}]", L.flagBaseOf[i]) : "nullptr",
        L.counterOf[i] >= 0 ? fmt::format("&sk_done[{}]", L.counterOf[i]) : "nullptr",
        op.kernelSync ? fmt::format("&sk_ksync[{0}], &sk_ksync_base[{0}], \"{1}\"", L.kernelSyncOf[i],
                                    cString(opLabel(op) + ": sk_kernel_sync"))
                      : "nullptr, nullptr, nullptr");
    // The descriptor's second line lines up under its first field.
    const size_t indent = fmt::format("const sk_op_desc sk_op{} = {{", i).size();
    of.set("desc", head + "\n" + std::string(indent, ' ') + tail);
    if (op.kernelSync) v.add("ksync_fns").set("ksync", L.kernelSyncOf[i]);
  }

  // Data preload (preload-data): what each op prefetches before its waits is the planner's rule
  // (plan/DataPreload.cpp), with cpu's budget; a prefetch is 64-byte-line prefetches of the core's slice.
  const std::vector<std::vector<DataPreload>> dataPreloads = scheduleDataPreload(sk, cpuMachineModel(sk.numCores));
  bool anyDataPreload = false;
  std::optional<Error> argError;  // the first argument a queue line could not print (BadInput naming it)

  // Per queue, cpu adds what its barrier wait reports when it times out.
  const bool anyPreload = addQueues(v, plan, sk, "", [&](TemplateValues& ov, const PlannedOp& op) {
    ov.set("barrier_what", cString("barrier before " + opLabel(op)));
    const auto i = static_cast<size_t>(&op - sk.ops.data());
    anyDataPreload |= addDataPreloads(ov, dataPreloads[i], "u", "uint64_t{c}");
    ov.setIf("plain", plain(i));
    ov.set("helper", helperOf[i]);
    auto args = addCallArgs(ov, plan.variants[op.variant], op, "env->buf", RuntimeScalarArg::Pointer);
    if (!args && !argError) argError = std::move(args).error();
    ov.set("blocks", op.blockDim);
    ov.set("cores", sk.queues[op.queue].numCores);
  });
  if (argError) return std::move(*argError);
  v.setIf("has_preload", anyPreload);
  v.setIf("has_data_preload", anyDataPreload);

  return renderStep(plan, sk, L, v, ".cpp", "c++");
}

}  // namespace

Expected<std::shared_ptr<const Emitter>> makeCpuEmitter() {
  SK_RETURN_IF_ERROR(checkDataDir());
  std::filesystem::path file = dataTemplatesDir() / "cpu" / "superkernel.cpp.tmpl";
  auto tmpl = readTemplateFile(file);
  if (!tmpl) return std::move(tmpl).error();
  return std::shared_ptr<const Emitter>(std::make_shared<CpuTemplateEmitter>(std::move(*tmpl), file));
}

}  // namespace sk
