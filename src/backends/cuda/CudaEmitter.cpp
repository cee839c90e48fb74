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

#include "superkernel/codegen/StepValues.h"
#include "superkernel/codegen/SyncLayout.h"
#include "superkernel/codegen/Template.h"
#include "superkernel/codegen/TemplateEmitter.h"
#include "superkernel/plan/DataPreload.h"
#include "superkernel/support/Paths.h"
#include "support/Escape.h"
#include "backends/cuda/CudaBackend.h"

namespace sk {
namespace {

std::string commentText(std::string_view s) { return escapeComment(s); }

// Step index checks, error context and the template file are TemplateEmitter's
// (codegen/TemplateEmitter.h); this class prints the cuda runtime's source.
class CudaTemplateEmitter final : public TemplateEmitter {
 public:
  CudaTemplateEmitter(Template tmpl, std::filesystem::path file) : TemplateEmitter("cuda", std::move(tmpl), std::move(file)) {}

 private:
  Expected<GeneratedSource> emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const override;
};

Expected<GeneratedSource> CudaTemplateEmitter::emitStep(const FusionPlan& plan, const SuperKernelPlan& sk) const {
  SK_ASSIGN_OR_RETURN(SyncLayout L, layoutSync(plan, sk));
  const size_t n = sk.ops.size();
  if (n == 0) return internalError("a step without ops");

  uint32_t threads = 0, smem = 0;
  bool anyKernelSync = false;
  for (const PlannedOp& op : sk.ops) {
    const KernelDecl& d = plan.variants[op.variant].decl;
    threads = std::max(threads, static_cast<uint32_t>(d.attribute("threads", kCudaDefaultThreads)));
    smem = std::max(smem, static_cast<uint32_t>(d.attribute("shared_bytes")));
    anyKernelSync = anyKernelSync || op.kernelSync;
  }
  // Fused: the plan's co-resident CTAs. Unfused: one CTA per block, except a
  // kernel_sync kernel, whose blocks must all be resident (the plan's cores).
  uint64_t grid = sk.numCores;
  if (!sk.fused) grid = anyKernelSync ? sk.numCores : sk.ops[0].blockDim;
  if (!sk.fused && sk.queues.size() != 1) return internalError("an unfused step with more than one queue");

  // What cpu and cuda print alike (codegen/StepValues.h; an unfused step's
  // text names its kernel, not its op), then the cuda runtime's own values.
  TemplateValues v;
  setStepCounts(v, plan, sk);
  v.setIf("has_buffers", !sk.buffers.empty());
  v.set("threads", threads);
  v.set("smem", smem);
  v.setIf("has_smem", smem > 0);
  v.setIf("smem_attr", smem > 48 * 1024);
  v.set("grid", grid);
  v.setIf("fused", sk.fused);
  v.setIf("check_resident", sk.fused || anyKernelSync);
  v.setIf("graph_pdl", !sk.fused && sk.graphPdl);  // superkernel_rt.cuh's SK_CUDA_PDL (CompileRequest::graphPdl)
  // profiling=1: a row of records per CTA, 4 per block it runs (wait begin/end, op begin/end).
  uint64_t profSlots = 0;
  for (const PlannedOp& op : sk.ops) {
    const uint64_t ctas = sk.fused ? sk.queues.at(op.queue).numCores : grid;
    profSlots += 4 * ((op.blockDim + ctas - 1) / std::max<uint64_t>(ctas, 1));
  }
  v.setIf("profiling", sk.options.profiling);
  v.set("prof_slots", profSlots);
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
    tv.set("entries", formatFlagRanges(*ft.ranges));
  }
  v.setIf("has_ranges", rows > 0).set("num_ranges", rows);
  v.set("ranges_ptr", rows > 0 ? "sk_ranges" : "nullptr");

  addKernelDecls(v, plan, L);

  v.setIf("has_waits", L.anyWaits());
  v.list("wait_rows");
  uint64_t numWaits = 0;
  v.list("op_fns");
  for (size_t i = 0; i < n; ++i) {
    const PlannedOp& op = sk.ops[i];
    const KernelVariant& var = plan.variants[op.variant];
    auto& of = addOpFn(v, plan, sk, L, i);
    const uint64_t firstWait = numWaits;
    // Its waits: rows of the one sk_waits table, which sk_block_begin reads.
    for (const SyncWait& wt : L.waits[i]) {
      std::string what = op.name + " <- " + describeWait(sk, *wt.edge);
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
    of.set("desc", fmt::format("{{{}u, {}u, {}u, {}u, {}, {}, {}, 0u}}", op.blockDim, op.earlyStart ? 1 : 0,
                               L.waits[i].size(), L.waits[i].empty() ? 0 : firstWait, L.flagBaseOf[i],
                               L.counterOf[i], op.kernelSync ? L.kernelSyncOf[i] : -1));
    auto args = addCallArgs(of, var, op, "sk_buf");
    if (!args) return std::move(args).error();
  }
  v.set("num_waits", numWaits);

  // Data preload (preload-data): the planner's rule (plan/DataPreload.cpp) with cuda's budget
  // (cudaMachineModel; cuda-sim's is the same), each prefetch an L2 prefetch of the CTA's slice.
  const std::vector<std::vector<DataPreload>> dataPreloads =
      scheduleDataPreload(sk, cudaMachineModel("cuda", sk.numCores));
  bool anyDataPreload = false;

  // Per queue as on cpu, with unsigned literals in the core test (cores are
  // uint32_t here; sk_run_op reads each op's block count from sk_ops).
  addQueues(v, plan, sk, "u", [&](TemplateValues& ov, const PlannedOp& op) {
    const auto i = static_cast<size_t>(&op - sk.ops.data());
    anyDataPreload |= addDataPreloads(ov, dataPreloads[i], "ull", "c", [&](TemplateValues& dp, const DataPreload& d) {
      dp.set("for_op", commentText(fmt::format("op {}: {}", d.forOp, stepOpLabel(plan, sk, sk.ops[d.forOp]))));
    });
  });
  v.setIf("has_data_preload", anyDataPreload);
  std::string bufBytes;
  for (const PlanBuffer& b : sk.buffers)
    bufBytes += fmt::format("{}{}ull", bufBytes.empty() ? "" : ", ", b.elements * dtypeSize(b.dtype));
  v.set("buf_bytes", bufBytes);

  auto source = renderStep(plan, sk, L, v, ".cu", "cuda");
  if (source && !sk.fused && sk.graphPdl) source->launch = kCudaGraphPdlLaunch;  // the recipe exports sk_last_launch
  return source;
}

}  // namespace

Expected<std::shared_ptr<const Emitter>> makeCudaEmitter() {
  SK_RETURN_IF_ERROR(checkDataDir());
  std::filesystem::path file = dataTemplatesDir() / "cuda" / "superkernel.cu.tmpl";
  auto tmpl = readTemplateFile(file);
  if (!tmpl) return std::move(tmpl).error();
  return std::shared_ptr<const Emitter>(std::make_shared<CudaTemplateEmitter>(std::move(*tmpl), file));
}

}  // namespace sk
