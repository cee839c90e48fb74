// The cuda emitter: fills templates/cuda/superkernel.cu.tmpl from one step of
// a FusionPlan. As on cpu, every decision (sync kinds, queues, barriers) is
// the planner's and the slots and deduplicated waits are the shared sync
// layout's (codegen/SyncLayout.h); this file prints them as constant tables
// that the cuda runtime's sk_block_begin / sk_block_end read
// (runtime/cuda/include/superkernel/cuda/superkernel_rt.cuh).
//
// CTA shape: a fused step runs every op with the largest "threads" of its
// kernels (kernels loop over blockDim.x, kernel.cuh) and the largest
// "shared_bytes"; an unfused step uses its kernel's own.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/codegen/Template.h"
#include "superkernel/support/Paths.h"
#include "support/Escape.h"
#include "target/cuda/CudaBackend.h"

namespace sk {
namespace {

std::string commentText(std::string_view s) { return escapeComment(s); }

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

class CudaTarget final : public Target {
 public:
  CudaTarget(Template tmpl, std::filesystem::path file) : tmpl_(std::move(tmpl)), file_(std::move(file)) {}

  std::string_view name() const override { return "cuda"; }
  std::vector<std::filesystem::path> templateFiles() const override { return {file_}; }

  Expected<GeneratedSource> emit(const FusionPlan& plan, size_t step) const override {
    if (step >= plan.steps.size())
      return internalError(fmt::format("step {} out of range (the plan has {})", step, plan.steps.size()));
    const SuperKernelPlan& sk = plan.steps[step];
    auto out = emitStep(plan, sk);
    if (!out) return std::move(out).error().context("while generating cuda code for SuperKernel " + sk.name);
    return out;
  }

 private:
  Expected<GeneratedSource> emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const;

  Template tmpl_;
  std::filesystem::path file_;
};

Expected<GeneratedSource> CudaTarget::emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const {
  SK_ASSIGN_OR_RETURN(SyncLayout L, layoutSync(plan, sk));
  const size_t n = sk.ops.size();
  if (n == 0) return internalError("a step without ops");
  // An unfused step's text names its kernel, not its op (as on cpu: the layers
  // of a decode stack share one module per distinct op).
  auto opLabel = [&](const PlannedOp& op) { return sk.fused ? op.name : plan.variants[op.variant].decl.name; };
  const std::string skLabel = sk.fused ? sk.name : "unfused " + opLabel(sk.ops[0]);

  uint32_t threads = 0, smem = 0;
  bool anyKernelSync = false;
  for (const PlannedOp& op : sk.ops) {
    const KernelDecl& d = plan.variants[op.variant].decl;
    threads = std::max(threads, d.threads ? d.threads : kCudaDefaultThreads);
    smem = std::max(smem, d.sharedBytes);
    anyKernelSync = anyKernelSync || op.kernelSync;
  }
  // Fused: the plan's co-resident CTAs. Unfused: one CTA per block, except a
  // kernel_sync kernel, whose blocks must all be resident (the plan's cores).
  uint64_t grid = sk.numCores;
  if (!sk.fused) grid = anyKernelSync ? sk.numCores : sk.ops[0].blockDim;
  if (!sk.fused && sk.queues.size() != 1) return internalError("an unfused step with more than one queue");

  TemplateValues v;
  v.set("name", commentText(skLabel));
  v.set("num_ops", static_cast<uint64_t>(n));
  v.set("num_queues", static_cast<uint64_t>(sk.queues.size()));
  v.set("num_cores", sk.numCores);
  v.set("num_buffers", static_cast<uint64_t>(sk.buffers.size()));
  v.setIf("has_buffers", !sk.buffers.empty());
  v.set("threads", threads);
  v.set("smem", smem);
  v.setIf("has_smem", smem > 0);
  v.setIf("smem_attr", smem > 48 * 1024);
  v.set("grid", grid);
  v.setIf("fused", sk.fused);
  v.setIf("check_resident", sk.fused || anyKernelSync);
  v.setIf("has_done", L.numCounters > 0).set("num_done", L.numCounters);
  v.setIf("has_flags", L.numFlags > 0).set("num_flags", L.numFlags);
  v.setIf("has_ksync", L.numKernelSyncs > 0).set("num_ksync2", 2 * L.numKernelSyncs);
  v.setIf("has_barriers", std::any_of(sk.ops.begin(), sk.ops.end(), [](const PlannedOp& o) { return o.barrierBefore; }));
  v.set("done_ptr", L.numCounters > 0 ? "sk_done" : "nullptr");
  v.set("flags_ptr", L.numFlags > 0 ? "sk_flags" : "nullptr");
  v.set("ksync_ptr", L.numKernelSyncs > 0 ? "sk_ksync" : "nullptr");
  v.set("waits_ptr", L.anyWaits() ? "sk_waits" : "nullptr");

  // Flag range tables, laid out one after another in sk_ranges.
  std::vector<uint32_t> tableRow(L.flagTables.size(), 0);
  uint64_t rows = 0;
  v.list("flag_tables");
  for (size_t t = 0; t < L.flagTables.size(); ++t) {
    const FlagTable& ft = L.flagTables[t];
    tableRow[t] = static_cast<uint32_t>(rows);
    rows += ft.ranges->size();
    auto& tv = v.add("flag_tables");
    tv.set("comment", commentText(fmt::format("rows {}..: {} <- {}", tableRow[t], sk.ops[ft.consumer].name,
                                              sk.ops[ft.producer].name)));
    tv.set("entries", formatRanges(*ft.ranges));
  }
  v.setIf("has_ranges", rows > 0).set("num_ranges", rows);
  v.set("ranges_ptr", rows > 0 ? "sk_ranges" : "nullptr");

  v.list("kernels");
  for (uint32_t vi : L.variants) {
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

  v.setIf("has_waits", L.anyWaits());
  v.list("wait_rows");
  uint64_t numWaits = 0;
  v.list("op_fns");
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
    of.list("waits_summary");
    const uint64_t firstWait = numWaits;
    if (!L.waits[i].empty()) {
      std::string summary;
      for (const SyncWait& wt : L.waits[i]) {
        const Edge& e = *wt.edge;
        const PlannedOp& p = sk.ops[e.producer];
        std::string what = fmt::format("{} <- {} ({}, {} on {})", op.name, p.name, syncKindName(e.sync),
                                       depKindName(e.dep), e.buffer);
        summary += (summary.empty() ? "" : ", ") +
                   fmt::format("{} ({}, {} on {})", p.name, syncKindName(e.sync), depKindName(e.dep), e.buffer);
        std::string row;
        switch (wt.kind) {
          case SyncWait::Kind::Counter:
            row = fmt::format("{{SK_WAIT_COUNTER, {}, {}, 0}}", wt.counter, wt.blocks);
            break;
          case SyncWait::Kind::FlagOne:
            row = fmt::format("{{SK_WAIT_FLAG, {}, 0, 0}}", wt.flagBase);
            break;
          case SyncWait::Kind::FlagTable:
            row = fmt::format("{{SK_WAIT_FLAG_RANGE, {}, 0, {}}}", wt.flagBase,
                              tableRow.at(static_cast<size_t>(wt.table)));
            break;
        }
        auto& wr = v.add("wait_rows");
        wr.set("row", row);
        wr.set("what", commentText(what));
        ++numWaits;
      }
      of.add("waits_summary").set("summary", commentText(summary));
    }
    of.set("desc", fmt::format("{{{}u, {}u, {}u, {}u, {}, {}, {}, 0u}}", op.blockDim, op.earlyStart ? 1 : 0,
                               L.waits[i].size(), L.waits[i].empty() ? 0 : firstWait, L.flagBaseOf[i],
                               L.counterOf[i], op.kernelSync ? L.kernelSyncOf[i] : -1));
    of.list("args");
    for (size_t a = 0; a < op.args.size(); ++a) {
      const BoundArg& arg = op.args[a];
      const ParamDecl& decl = var.decl.params[a];
      std::string text;
      if (arg.kind == ParamKind::Buffer) {
        text = fmt::format("static_cast<{}{}*>(sk_buf[{}])", decl.access == Access::Read ? "const " : "",
                           cpuCType(decl.dtype), arg.buffer);
        if (arg.offset) text += fmt::format(" + {}", arg.offset);
      } else {
        auto lit = cpuScalarLiteral(arg.scalar, decl.dtype);
        if (!lit) return std::move(lit).error().context(fmt::format("op {} argument {}", op.name, decl.name));
        text = *lit;
      }
      of.add("args").set("arg", text);
    }
  }
  v.set("num_waits", numWaits);

  v.list("queues");
  for (size_t q = 0; q < sk.queues.size(); ++q) {
    const Queue& qu = sk.queues[q];
    auto& qv = v.add("queues");
    qv.set("q", static_cast<uint64_t>(q));
    qv.set("stream", qu.stream);
    qv.set("first", qu.firstCore);
    qv.set("end", qu.firstCore + qu.numCores);
    qv.set("cores", qu.numCores);
    qv.set("core_test", qu.firstCore == 0 ? fmt::format("core < {}u", qu.numCores)
                                          : fmt::format("core >= {}u && core < {}u", qu.firstCore,
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
      ov.set("blocks", op.blockDim);
      ov.list("barrier");
      if (op.barrierBefore) ov.add("barrier").set("k", ++k);
      ov.list("preload");
      if (op.preloadVariant >= 0) {
        const KernelVariant& pv = plan.variants[static_cast<size_t>(op.preloadVariant)];
        uint64_t bytes = preloadBytes(sk.options.preloadCode, pv.codeBytes);
        if (bytes > 0) {
          auto& p = ov.add("preload");
          p.set("preload_symbol", pv.symbol);
          p.set("preload_bytes", bytes);
        }
      }
    }
  }

  auto text = tmpl_.render(v);
  if (!text) return std::move(text).error();

  GeneratedSource src;
  src.name = sk.name;
  src.fileName = sanitizeIdentifier(sk.name) + ".cu";
  src.language = "cuda";
  src.text = std::move(*text);
  src.variants = L.variants;
  src.manifest = stepManifest(plan, sk, "cuda", L);
  return src;
}

}  // namespace

Expected<std::shared_ptr<const Target>> makeCudaEmitter() {
  SK_RETURN_IF_ERROR(checkDataDir());
  std::filesystem::path file = dataTemplatesDir() / "cuda" / "superkernel.cu.tmpl";
  std::ifstream in(file, std::ios::binary);
  if (!in) return ioError(fmt::format("cannot read template {}", file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return ioError(fmt::format("cannot read template {}", file.string()));
  auto tmpl = Template::parse(ss.str(), file.string());
  if (!tmpl) return std::move(tmpl).error();
  return std::shared_ptr<const Target>(std::make_shared<CudaTarget>(std::move(*tmpl), file));
}

}  // namespace sk
