// Hand-made FusionPlans for the codegen tests: built directly (not by the
// planner) so each sync kind, queue layout and option the emitter handles is
// pinned by a golden file independent of planner changes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "superkernel/plan/Plan.h"

namespace sk::testplans {

inline ParamDecl buf(const char* name, DType t, Access a, Partition p) {
  ParamDecl d;
  d.name = name;
  d.kind = ParamKind::Buffer;
  d.dtype = t;
  d.access = a;
  d.partition = p;
  return d;
}
inline ParamDecl scalar(const char* name, DType t) {
  ParamDecl d;
  d.name = name;
  d.kind = ParamKind::Scalar;
  d.dtype = t;
  return d;
}

inline KernelVariant variant(const char* kernel, const char* entry, std::string symbol, std::vector<ParamDecl> params,
                             uint64_t codeBytes, bool earlyStart = false, bool kernelSync = false) {
  KernelVariant v;
  v.decl.name = kernel;
  v.decl.entry = entry;
  v.decl.source = std::string("kernels/") + kernel + ".cpp";
  v.decl.sourcePath = std::string("/src/kernels/") + kernel + ".cpp";
  v.decl.earlyStart = earlyStart;
  v.decl.kernelSync = kernelSync;
  v.decl.params = std::move(params);
  v.symbol = std::move(symbol);
  v.codeBytes = codeBytes;
  return v;
}

inline KernelVariant addVariant() {
  return variant("add", "add_kernel", "add_kernel__v3f1c2a9b0d4e",
                 {buf("x", DType::F32, Access::Read, Partition::Block), buf("y", DType::F32, Access::Read, Partition::Block),
                  buf("z", DType::F32, Access::Write, Partition::Block), scalar("n", DType::I64)},
                 300);
}

inline BoundArg bufArg(const ParamDecl& p, int buffer, uint64_t count, uint64_t offset = 0) {
  BoundArg a;
  a.kind = ParamKind::Buffer;
  a.dtype = p.dtype;
  a.access = p.access;
  a.partition = p.partition;
  a.buffer = buffer;
  a.offset = offset;
  a.count = count;
  return a;
}
inline BoundArg scalarArg(const ParamDecl& p, ScalarValue v) {
  BoundArg a;
  a.kind = ParamKind::Scalar;
  a.dtype = p.dtype;
  a.scalar = v;
  return a;
}

inline PlanBuffer planBuf(const char* name, DType t, uint64_t elements, uint32_t listIndex) {
  PlanBuffer b;
  b.name = name;
  b.dtype = t;
  b.elements = elements;
  b.listIndex = listIndex;
  return b;
}

inline PlannedOp op(uint32_t index, const char* name, uint32_t variant, uint32_t blockDim, uint32_t queue,
                    std::vector<BoundArg> args) {
  PlannedOp o;
  o.opIndex = index;
  o.name = name;
  o.variant = variant;
  o.blockDim = blockDim;
  o.queue = queue;
  o.args = std::move(args);
  return o;
}

inline Edge edge(uint32_t p, uint32_t c, DepKind dep, SyncKind sync, const char* buffer,
                 std::vector<std::pair<uint32_t, uint32_t>> ranges = {}) {
  Edge e;
  e.producer = p;
  e.consumer = c;
  e.dep = dep;
  e.sync = sync;
  e.buffer = buffer;
  e.flagRanges = std::move(ranges);
  return e;
}

inline std::vector<BoundArg> addArgs(const KernelVariant& v, int x, int y, int z, int64_t n, uint64_t zOffset = 0) {
  const auto& p = v.decl.params;
  return {bufArg(p[0], x, static_cast<uint64_t>(n)), bufArg(p[1], y, static_cast<uint64_t>(n)),
          bufArg(p[2], z, static_cast<uint64_t>(n), zOffset), scalarArg(p[3], n)};
}

/// The seed example: four chained `add` ops of 40 blocks, all edges local,
/// one queue on 4 cores, default options.
inline FusionPlan seedPlan() {
  FusionPlan plan;
  plan.variants.push_back(addVariant());
  SuperKernelPlan sk;
  sk.name = "sk1";
  sk.fused = true;
  sk.scope = "sk1";
  sk.endReason = "end of op list";
  sk.numCores = 4;
  const char* names[] = {"x", "y", "t1", "t2", "t3", "out"};
  for (uint32_t i = 0; i < 6; ++i) sk.buffers.push_back(planBuf(names[i], DType::F32, 4096, i));
  const KernelVariant& v = plan.variants[0];
  sk.ops.push_back(op(0, "add_0", 0, 40, 0, addArgs(v, 0, 1, 2, 4096)));
  sk.ops.push_back(op(1, "add_1", 0, 40, 0, addArgs(v, 2, 1, 3, 4096)));
  sk.ops.push_back(op(2, "add_2", 0, 40, 0, addArgs(v, 3, 1, 4, 4096)));
  sk.ops.push_back(op(3, "add_3", 0, 40, 0, addArgs(v, 4, 1, 5, 4096)));
  sk.edges.push_back(edge(0, 1, DepKind::RAW, SyncKind::Local, "t1"));
  sk.edges.push_back(edge(1, 2, DepKind::RAW, SyncKind::Local, "t2"));
  sk.edges.push_back(edge(2, 3, DepKind::RAW, SyncKind::Local, "t3"));
  Queue q;
  q.numCores = 4;
  q.ops = {0, 1, 2, 3};
  sk.queues.push_back(q);
  plan.steps.push_back(std::move(sk));
  return plan;
}

/// Every sync kind inside one queue: a flag table (8 -> 4 blocks), a counter
/// edge into an early-start kernel, a barrier before a kernel_sync kernel,
/// a counter into a view, all scalar types; profiling on, func-align 0,
/// per-func preloads of several sizes.
inline FusionPlan syncKindsPlan() {
  FusionPlan plan;
  plan.variants.push_back(addVariant());
  plan.variants.push_back(variant("scale", "scale_kernel", "scale_kernel__v00aa11bb22cc",
                                  {buf("x", DType::F32, Access::Read, Partition::Block),
                                   buf("y", DType::F32, Access::Write, Partition::Block), scalar("alpha", DType::F32),
                                   scalar("beta", DType::F64), scalar("k", DType::I32), scalar("m", DType::U64),
                                   scalar("flip", DType::Bool), scalar("small", DType::I8)},
                                  5000));
  plan.variants.push_back(variant("gather", "gather_kernel", "gather_kernel__v1234567890ab",
                                  {buf("x", DType::F32, Access::Read, Partition::All),
                                   buf("idx", DType::I32, Access::Read, Partition::Block),
                                   buf("y", DType::F32, Access::Write, Partition::Block)},
                                  2048, /*earlyStart=*/true));
  plan.variants.push_back(variant("norm", "norm_kernel", "norm_kernel__vffeeddccbbaa",
                                  {buf("x", DType::F32, Access::ReadWrite, Partition::Block)}, 40000,
                                  /*earlyStart=*/false, /*kernelSync=*/true));

  SuperKernelPlan sk;
  sk.name = "mixed";
  sk.fused = true;
  sk.scope = "mixed";
  sk.numCores = 4;
  sk.options.profiling = true;
  sk.options.funcAlign = 0;
  sk.buffers = {planBuf("x", DType::F32, 1024, 0),   planBuf("y", DType::F32, 1024, 1),
                planBuf("t1", DType::F32, 1024, 2),  planBuf("t2", DType::F32, 1024, 3),
                planBuf("idx", DType::I32, 1024, 4), planBuf("t3", DType::F32, 1024, 5),
                planBuf("big", DType::F32, 2048, 6)};
  const auto& add = plan.variants[0].decl.params;
  const auto& sc = plan.variants[1].decl.params;
  const auto& ga = plan.variants[2].decl.params;
  const auto& no = plan.variants[3].decl.params;
  sk.ops.push_back(op(0, "add_a", 0, 8, 0, addArgs(plan.variants[0], 0, 1, 2, 1024)));
  sk.ops.push_back(op(1, "scale_b", 1, 4, 0,
                      {bufArg(sc[0], 2, 1024), bufArg(sc[1], 3, 1024), scalarArg(sc[2], 0.1),
                       scalarArg(sc[3], -1.0 / 3.0), scalarArg(sc[4], int64_t{-2147483648LL}),
                       scalarArg(sc[5], int64_t{123456789012345LL}), scalarArg(sc[6], int64_t{1}),
                       scalarArg(sc[7], int64_t{-5})}));
  sk.ops.push_back(op(2, "gather_c", 2, 4, 0, {bufArg(ga[0], 3, 1024), bufArg(ga[1], 4, 1024), bufArg(ga[2], 5, 1024)}));
  sk.ops.push_back(op(3, "norm_d", 3, 4, 0, {bufArg(no[0], 5, 1024)}));
  sk.ops.push_back(op(4, "add_e", 0, 8, 0,
                      {bufArg(add[0], 5, 1024), bufArg(add[1], 1, 1024), bufArg(add[2], 6, 1024, 1024),
                       scalarArg(add[3], int64_t{1024})}));
  sk.ops[2].earlyStart = true;
  sk.ops[3].kernelSync = true;
  sk.ops[3].barrierBefore = true;
  sk.ops[0].preloadVariant = 1;
  sk.ops[1].preloadVariant = 2;
  sk.ops[2].preloadVariant = 3;
  sk.ops[3].preloadVariant = 0;
  sk.edges.push_back(edge(0, 1, DepKind::RAW, SyncKind::Flag, "t1", {{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  sk.edges.push_back(edge(1, 2, DepKind::RAW, SyncKind::Counter, "t2"));
  sk.edges.push_back(edge(2, 3, DepKind::RAW, SyncKind::Barrier, "t3"));
  sk.edges.push_back(edge(3, 4, DepKind::RAW, SyncKind::Counter, "t3"));
  // A second edge between the same pair (WAR on another buffer) needs no second wait.
  sk.edges.push_back(edge(0, 1, DepKind::WAR, SyncKind::Flag, "t1", {{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  Queue q;
  q.numCores = 4;
  q.ops = {0, 1, 2, 3, 4};
  sk.queues.push_back(q);
  plan.steps.push_back(std::move(sk));
  return plan;
}

/// stream-fusion=1: two queues of two cores each; an event edge across them,
/// a local edge inside one, and a cross-queue flag edge; early-start 2,
/// preload none.
inline FusionPlan twoStreamsPlan() {
  FusionPlan plan;
  plan.variants.push_back(addVariant());
  SuperKernelPlan sk;
  sk.name = "streams";
  sk.fused = true;
  sk.scope = "streams";
  sk.numCores = 4;
  sk.options.streamFusion = true;
  sk.options.earlyStart = 2;
  sk.options.preloadCode = PreloadCode::None;
  const char* names[] = {"x", "y", "t1", "t2", "out", "res"};
  for (uint32_t i = 0; i < 6; ++i) sk.buffers.push_back(planBuf(names[i], DType::F32, 256, i));
  const KernelVariant& v = plan.variants[0];
  sk.ops.push_back(op(0, "s0_first", 0, 4, 0, addArgs(v, 0, 1, 2, 256)));
  sk.ops.push_back(op(1, "s1_first", 0, 4, 1, addArgs(v, 1, 1, 3, 256)));
  sk.ops.push_back(op(3, "s1_join", 0, 4, 1, addArgs(v, 2, 3, 4, 256)));
  sk.ops.push_back(op(4, "s0_last", 0, 4, 0, addArgs(v, 4, 1, 5, 256)));
  sk.ops[1].stream = 1;
  sk.ops[2].stream = 1;
  sk.ops[0].preloadVariant = 0;  // ignored: preload-code=none
  sk.edges.push_back(edge(0, 2, DepKind::RAW, SyncKind::Event, "t1"));
  sk.edges.push_back(edge(1, 2, DepKind::RAW, SyncKind::Local, "t2"));
  sk.edges.push_back(edge(2, 3, DepKind::RAW, SyncKind::Flag, "out", {{0, 0}, {1, 1}, {2, 2}, {3, 3}}));
  Queue q0;
  q0.stream = 0;
  q0.firstCore = 0;
  q0.numCores = 2;
  q0.ops = {0, 3};
  Queue q1;
  q1.stream = 1;
  q1.firstCore = 2;
  q1.numCores = 2;
  q1.ops = {1, 2};
  sk.queues = {q0, q1};
  plan.steps.push_back(std::move(sk));
  return plan;
}

/// Runtime scalars: add_0's `n` is element 1 of the i64 buffer "step"
/// (read at the call), add_1's a literal; a local edge between them.
inline FusionPlan runtimeScalarPlan() {
  FusionPlan plan;
  KernelVariant v = addVariant();
  v.decl.params[3].runtime = true;
  plan.variants.push_back(v);
  SuperKernelPlan sk;
  sk.name = "decode";
  sk.fused = true;
  sk.scope = "decode";
  sk.endReason = "end of op list";
  sk.numCores = 2;
  const char* names[] = {"x", "y", "t1", "out"};
  for (uint32_t i = 0; i < 4; ++i) sk.buffers.push_back(planBuf(names[i], DType::F32, 4096, i));
  sk.buffers.push_back(planBuf("step", DType::I64, 2, 4));
  std::vector<BoundArg> a0 = addArgs(v, 0, 1, 2, 4096);
  a0[3] = scalarArg(v.decl.params[3], int64_t{0});
  a0[3].runtime = true;
  a0[3].buffer = 4;
  a0[3].offset = 1;
  a0[3].count = 1;
  sk.ops.push_back(op(0, "add_0", 0, 8, 0, a0));
  sk.ops.push_back(op(1, "add_1", 0, 8, 0, addArgs(v, 2, 1, 3, 4096)));
  sk.edges.push_back(edge(0, 1, DepKind::RAW, SyncKind::Local, "t1"));
  Queue q;
  q.numCores = 2;
  q.ops = {0, 1};
  sk.queues.push_back(q);
  plan.steps.push_back(std::move(sk));
  return plan;
}

/// One unfused op (the reference path): a single op in its own step.
inline FusionPlan unfusedPlan() {
  FusionPlan plan = seedPlan();
  SuperKernelPlan& sk = plan.steps[0];
  sk.name = "add_0";
  sk.fused = false;
  sk.scope.clear();
  sk.endReason = "not in a scope";
  sk.numCores = 2;
  sk.ops.resize(1);
  sk.edges.clear();
  sk.queues[0].numCores = 2;
  sk.queues[0].ops = {0};
  sk.buffers.resize(3);
  return plan;
}

}  // namespace sk::testplans
