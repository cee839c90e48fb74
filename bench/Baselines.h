// Baselines built from the SAME compiled sub-kernels as a SuperKernel, for the
// comparisons of bench/suite.cpp (header-only: bench/CMakeLists.txt builds
// one executable per bench/*.cpp).
//
// From the single fused step of a FusionPlan this emits one C++ source that
// calls the very sub-kernel objects the SuperKernel links (same variants,
// same macros, same -O2 -march flags, same argument literals, same block ->
// worker mapping: block b of an op on worker b % W) and links it through the
// library's own Driver (so it is cached like any SuperKernel). Its exported
// `run` is a bench-private protocol: `stream` points at a BenchCall that
// selects one of:
//
//   Pool  (b) the ggml way: ONE launch of the persistent pool (the executor's
//         workers, runCores), every worker walks the ops in order, runs its
//         blocks of each, then a barrier after every op but the last (like
//         ggml_graph_compute_thread + ggml_barrier). No plan knowledge is
//         used: every op boundary pays a barrier, which is what a graph
//         runner without dependency analysis must do. Tuning: the barrier is
//         the runtime's own (sk_counter_arrive + sk_wait_ge: one monotonic
//         counter on its own cache line, inline spin, then the executor's
//         backoff), i.e. exactly the SuperKernel's sync_all. A pure spin like
//         ggml's was tried first and is pathological on a loaded 2-core VM
//         (a descheduled worker makes the other spin a whole time slice:
//         ~10 ms per barrier), so the fair baseline uses the same waits.
//   Ideal (e) the lower bound: the same straight-line per-worker code with
//         no synchronization at all (results are garbage; the time is what
//         each worker's compute costs alone, plus the one launch).
//   Block one block of one op (what Executor::launch runs per block: the
//         "one executor launch per op" baseline of the chain benchmarks).
//   Core  all blocks of one op that belong to worker `block` of `cores`
//         (what each thread of one `#pragma omp parallel` region runs).
//
// The per-worker code of Pool and Ideal is straight-line (one direct call per
// block, like the SuperKernel's queues), so neither pays an interpreter or
// an indirect call that the SuperKernel does not.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Driver.h"
#include "superkernel/plan/Plan.h"
#include "superkernel/session/Session.h"
#include "superkernel/target/cpu/Cpu.h"

namespace skbench {

enum BenchMode : uint32_t { kModePool = 0, kModeIdeal = 1, kModeBlock = 2, kModeCore = 3 };

// Must match the struct the generated source declares (below).
struct BenchCall {
  uint32_t mode = kModePool;
  uint32_t op = 0;
  uint32_t block = 0;
  uint32_t cores = 1;
  const sk_services* services = nullptr;
};

struct Baselines {
  sk::SuperKernelArtifact artifact;   // holds the cache entry
  std::shared_ptr<const sk::LoadedKernel> kernel;  // keeps the library loaded
  sk::SuperKernelRunFn run = nullptr;
  uint32_t workers = 1;
  std::vector<uint32_t> blockDims;    // per op, plan order
  std::vector<uint32_t> listBuffers;  // manifest order -> OpList buffer index
  size_t sourceBytes = 0;
};

inline sk::Expected<std::string> emitBaselineSource(const sk::FusionPlan& plan, const sk::SuperKernelPlan& sk) {
  using namespace sk;
  if (sk.queues.size() != 1) return badInput("baselines: the plan must have one queue (stream-fusion=0)");
  const uint32_t W = sk.numCores;
  std::string decls, pool, ideal, sw, bds;
  std::vector<bool> declared(plan.variants.size(), false);
  uint32_t barriers = 0;
  const auto& order = sk.queues[0].ops;
  for (size_t qi = 0; qi < order.size(); ++qi) {
    const PlannedOp& op = sk.ops[order[qi]];
    if (op.kernelSync) return badInput("baselines: kernel_sync ops are not supported (" + op.name + ")");
    const KernelVariant& var = plan.variants[op.variant];
    if (!declared[op.variant]) {
      declared[op.variant] = true;
      std::string ps;
      for (const ParamDecl& p : var.decl.params) ps += ", " + cParamType(p);
      decls += fmt::format("void {}(const sk_ctx*{});\n", var.symbol, ps);
    }
    std::string args;
    for (size_t a = 0; a < op.args.size(); ++a) {
      const BoundArg& arg = op.args[a];
      const ParamDecl& d = var.decl.params[a];
      if (arg.kind == ParamKind::Buffer) {
        args += fmt::format(", static_cast<{}{}*>(buf[{}])", d.access == Access::Read ? "const " : "",
                            cType(d.dtype), arg.buffer);
        if (arg.offset) args += fmt::format(" + {}", arg.offset);
      } else if (arg.runtime) {
        args += fmt::format(", static_cast<const {}*>(buf[{}])[{}]", cType(d.dtype), arg.buffer, arg.offset);
      } else {
        auto lit = cScalarLiteral(arg.scalar, d.dtype);
        if (!lit) return std::move(lit).error();
        args += ", " + *lit;
      }
    }
    const std::string call = fmt::format("{}(&ctx{})", var.symbol, args);
    const std::string loop = fmt::format(
        "  for (uint32_t b = c; b < {0}u; b += {1}u) {{ const sk_ctx ctx = {{b, {0}u, nullptr}}; {2}; }}\n",
        op.blockDim, W, call);
    pool += fmt::format("  // {}\n", op.name) + loop;
    ideal += loop;
    if (qi + 1 < order.size()) {
      ++barriers;
      pool += fmt::format("  if (bench_barrier(L->s, L->base + {}u * {}ull)) return;\n", W, barriers);
    }
    sw += fmt::format("    case {}: {{ const sk_ctx ctx = {{b, {}u, nullptr}}; {}; return; }}\n", qi, op.blockDim,
                      call);
    bds += fmt::format("{}u,", op.blockDim);
  }
  std::string text;
  text += "// superkernel bench baselines (bench/Baselines.h): ggml-style pool, ideal, per-op blocks.\n";
  text += "#include <stdint.h>\n#include \"superkernel/cpu/superkernel_rt.h\"\n";
  text += "extern \"C\" {\n" + decls + "}\n";
  text += "namespace {\n";
  text += "struct bench_call { uint32_t mode, op, block, cores; const sk_services* s; };\n";
  text += "struct bench_launch { void* const* buf; uint64_t base; const sk_services* s; };\n";
  text += "sk_counter bench_bar;\nuint64_t bench_pool_launches;\n";
  text += fmt::format("const uint32_t bench_bd[{}] = {{{}}};\n", order.size(), bds);
  text +=
      "// The all-worker barrier after every op: the runtime's sync_all primitive.\n"
      "inline int bench_barrier(const sk_services* s, uint64_t target) {\n"
      "  sk_counter_arrive(s, &bench_bar);\n"
      "  return sk_wait_ge(s, &bench_bar, target, \"bench pool barrier\");\n"
      "}\n";
  text += "void bench_pool(void* arg, uint32_t c) {\n  const bench_launch* L = static_cast<const bench_launch*>(arg);\n"
          "  void* const* buf = L->buf;\n" +
          pool + "}\n";
  text += "void bench_ideal(void* arg, uint32_t c) {\n  const bench_launch* L = static_cast<const bench_launch*>(arg);\n"
          "  void* const* buf = L->buf;\n" +
          ideal + "}\n";
  text += "void bench_op_block(void* const* buf, uint32_t op, uint32_t b) {\n  switch (op) {\n" + sw +
          "    default: return;\n  }\n}\n";
  text += "}  // namespace\n";
  text += fmt::format(
      "extern \"C\" __attribute__((visibility(\"default\"))) int run(uint32_t, void* stream, const sk_run_args* args) "
      "{{\n"
      "  const bench_call* c = static_cast<const bench_call*>(stream);\n"
      "  switch (c->mode) {{\n"
      "    case 0: {{ bench_launch L = {{args->buffers, bench_pool_launches++ * {0}ull * {1}ull, c->s}};\n"
      "              return c->s->run_cores(c->s->self, {1}u, bench_pool, &L); }}\n"
      "    case 1: {{ bench_launch L = {{args->buffers, 0, c->s}};\n"
      "              return c->s->run_cores(c->s->self, {1}u, bench_ideal, &L); }}\n"
      "    case 2: bench_op_block(args->buffers, c->op, c->block); return 0;\n"
      "    case 3: for (uint32_t b = c->block; b < bench_bd[c->op]; b += c->cores) bench_op_block(args->buffers, "
      "c->op, b);\n"
      "            return 0;\n"
      "  }}\n  return -1;\n}}\n",
      barriers, W);
  return text;
}

/// Build the baselines of `cp` (a fused CompiledPlan with one step).
inline sk::Expected<Baselines> buildBaselines(sk::Session& session, const sk::CompiledPlan& cp) {
  using namespace sk;
  if (cp.plan.steps.size() != 1 || !cp.plan.steps[0].fused)
    return badInput(fmt::format("baselines: expected one fused step, the plan has {}", cp.plan.steps.size()));
  const SuperKernelPlan& sk = cp.plan.steps[0];
  DriverConfig dc;
  dc.arch = cp.list.arch;
  dc.jobs = session.options().jobs;
  Driver driver(session.toolchain(), session.cache(), dc);
  std::vector<KernelVariant> vars;
  std::vector<uint32_t> seen(cp.plan.variants.size(), 0);
  for (const PlannedOp& op : sk.ops)
    if (!seen[op.variant]++) vars.push_back(cp.plan.variants[op.variant]);
  auto objs = driver.compileObjects(vars, sk.options);
  if (!objs) return std::move(objs).error().context("baselines: sub-kernel objects");
  auto text = emitBaselineSource(cp.plan, sk);
  if (!text) return std::move(text).error();
  auto art = driver.buildSuperKernel(*text, *objs, sk.options);
  if (!art) return std::move(art).error().context("baselines: link");
  Baselines b;
  b.artifact = std::move(*art);
  auto kernel = cpuLoad(*b.artifact.artifact);
  if (!kernel) return std::move(kernel).error().context("baselines: load");
  b.kernel = std::move(*kernel);
  b.run = cpuRunFunction(*b.kernel);
  b.workers = sk.numCores;
  b.sourceBytes = text->size();
  for (uint32_t i : sk.queues[0].ops) b.blockDims.push_back(sk.ops[i].blockDim);
  for (const PlanBuffer& pb : sk.buffers) b.listBuffers.push_back(pb.listIndex);
  return b;
}

}  // namespace skbench
