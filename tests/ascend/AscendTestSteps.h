// Hand-made AscendSteps for the emitter's goldens and the simulator runs:
// built directly (not by the planner), from the real ascend builtin kernels,
// so every golden also compiles and runs in the simulator against its
// unfused reference.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/ascend/AscendStep.h"

namespace sktest::ascend {

using namespace sk::ascend;

inline std::filesystem::path kernelsDir() { return SK_ASCEND_KERNELS_DIR; }

inline AscendObject object(const char* source, const char* entry, std::string symbol, Pool pool,
                           std::vector<std::pair<std::string, std::string>> defines, bool earlyStart = false) {
  AscendObject o;
  o.symbol = symbol;
  o.source = kernelsDir() / source;
  o.defines = std::move(defines);
  o.defines.emplace_back(entry, symbol);
  o.pool = pool;
  o.earlyStart = earlyStart;
  o.codeBytes = 0;
  return o;
}

/// Ascend C test kernels (tests/ascend/data/kernels): ports of the session tests' kernels, sync_sum and
/// cube_gemv.
inline std::filesystem::path testKernelsDir() {
  return std::filesystem::path(SK_SOURCE_ROOT) / "tests" / "ascend" / "data" / "kernels";
}

/// The cube projection of the steps below (tests/ascend/data/kernels/cube_gemv.cpp: scalar code with its own
/// early start; the gemv builtin runs on the vector cores): y[rows] = W[rows x cols] (bf16 or f32) . x[cols].
inline AscendObject cubeGemv(std::string symbol, bool bf16, int rows, int cols) {
  std::vector<std::pair<std::string, std::string>> defines{{"SK_ROWS", std::to_string(rows)},
                                                           {"SK_COLS", std::to_string(cols)}};
  if (bf16) defines.insert(defines.begin(), {"SK_WEIGHT_BF16", "1"});
  AscendObject o = object("cube_gemv.cpp", bf16 ? "fx_cube_gemv_bf16w" : "fx_cube_gemv_f32", std::move(symbol),
                          Pool::Cube, std::move(defines), true);
  o.source = testKernelsDir() / "cube_gemv.cpp";
  return o;
}

inline sk::PlanBuffer buffer(const char* name, sk::DType t, uint64_t elements, uint32_t index) {
  sk::PlanBuffer b;
  b.name = name;
  b.dtype = t;
  b.elements = elements;
  b.listIndex = index;
  return b;
}

inline AscendOp op(const char* name, uint32_t object, uint32_t blocks, Pool pool, std::vector<AscendArg> args) {
  AscendOp o;
  o.name = name;
  o.object = object;
  o.blockDim = blocks;
  o.pool = pool;
  o.args = std::move(args);
  return o;
}

inline sk::PoolSyncEdge edge(uint32_t p, uint32_t c, bool local, std::string what) {
  return sk::PoolSyncEdge{p, c, local, std::move(what)};
}

/// The sync points of a hand-made step from its edges, laid out as a plan's are (sk::poolSyncPoints over the
/// ops' pools and own early start, and the step's debug-sync-all).
inline std::vector<sk::PoolSyncPoint> syncPoints(const AscendStep& s, const std::vector<sk::PoolSyncEdge>& edges) {
  std::vector<sk::PoolSyncOp> ops;
  for (const AscendOp& o : s.ops) ops.push_back({o.name, static_cast<uint32_t>(o.pool), o.ownEarlyStart});
  auto points = sk::poolSyncPoints(ops, edges, s.options.debugSyncAll);
  if (!points.ok()) throw std::runtime_error(points.error().message());
  return *points;
}

/// norm (vector) -> proj (cube, declares early start) -> add (vector) -> copy (vector, block-local) ->
/// swiglu (vector, block-local): every pool pair and a local edge. Buffers:
/// 0 x[64] 1 w[64] 2 h[64] 3 W[37x64 bf16] 4 y[37] 5 r[37] 6 z[37] 7 z2[37] 8 o[37].
inline AscendStep chain(const sk::Options& options) {
  AscendStep s;
  s.name = "chain";
  s.fused = true;
  s.options = options;
  s.type = KernelType::MixAic1_2;
  s.blockDim = 8;
  s.buffers = {buffer("x", sk::DType::F32, 64, 0),  buffer("w", sk::DType::F32, 64, 1),
               buffer("h", sk::DType::F32, 64, 2),  buffer("W", sk::DType::BF16, 37 * 64, 3),
               buffer("y", sk::DType::F32, 37, 4),  buffer("r", sk::DType::F32, 37, 5),
               buffer("z", sk::DType::F32, 37, 6),  buffer("z2", sk::DType::F32, 37, 7),
               buffer("o", sk::DType::F32, 37, 8)};
  s.objects = {
      object("rms_norm.cpp", "sk_rms_norm_f32", "sk_rms_norm_f32__vt0", Pool::Vector,
             {{"SK_ROWS", "1"}, {"SK_COLS", "64"}, {"SK_EPS", "1e-5f"}}),
      cubeGemv("fx_cube_gemv_bf16w__vt1", true, 37, 64),
      object("add.cpp", "sk_add_f32", "sk_add_f32__vt2", Pool::Vector, {{"SK_N", "37"}}),
      object("copy.cpp", "sk_copy_f32", "sk_copy_f32__vt3", Pool::Vector, {{"SK_N", "37"}}),
      object("swiglu.cpp", "sk_swiglu_f32", "sk_swiglu_f32__vt4", Pool::Vector, {{"SK_N", "37"}}),
  };
  s.objects[1].codeBytes = 5000;  // 3 preload units per-func
  s.ops = {op("norm", 0, 4, Pool::Vector, {{0, 0}, {1, 0}, {2, 0}}),
           op("proj", 1, 8, Pool::Cube, {{3, 0}, {2, 0}, {4, 0}}),
           op("add", 2, 16, Pool::Vector, {{4, 0}, {5, 0}, {6, 0}}),
           op("copy", 3, 16, Pool::Vector, {{6, 0}, {7, 0}}),
           op("swiglu", 4, 16, Pool::Vector, {{6, 0}, {7, 0}, {8, 0}})};
  s.ops[1].ownEarlyStart = options.earlyStart == 1;
  s.syncBefore = syncPoints(s, {edge(0, 1, false, "proj <- norm (RAW on h)"), edge(1, 2, false, "add <- proj (RAW on y)"),
             edge(2, 3, true, "copy <- add (RAW on z)"), edge(3, 4, true, "swiglu <- copy (RAW on z2)"),
             edge(2, 4, true, "swiglu <- add (RAW on z)")});
  return s;
}

/// chain, and beside it one launch of another stream ("tiling", stream 1) that reads proj's output y and
/// writes r, which add reads: the cube cores notify it after proj, the vector cores wait for it before add.
inline AscendStep chainWithSide(const sk::Options& options) {
  AscendStep s = chain(options);
  AscendSide side;
  side.name = "tiling";
  side.stream = 1;
  side.notifyAfter[static_cast<int>(Pool::Cube)] = 1;
  side.waitBefore[static_cast<int>(Pool::Vector)] = 2;
  s.sides = {side};
  return s;
}

/// Vector cores only (MIX_AIV_1_0): add -> rms_norm over the sum (all-to-all) -> add with a view offset.
/// Buffers: 0 a[64] 1 b[64] 2 s[64] 3 w[64] 4 n[64] 5 t[32].
inline AscendStep vectorOnly(const sk::Options& options) {
  AscendStep s;
  s.name = "vec";
  s.fused = true;
  s.options = options;
  s.type = KernelType::MixAiv1_0;
  s.blockDim = 6;
  s.buffers = {buffer("a", sk::DType::F32, 64, 0), buffer("b", sk::DType::F32, 64, 1),
               buffer("s", sk::DType::F32, 64, 2), buffer("w", sk::DType::F32, 64, 3),
               buffer("n", sk::DType::F32, 64, 4), buffer("t", sk::DType::F32, 32, 5)};
  s.objects = {object("add.cpp", "sk_add_f32", "sk_add_f32__vv0", Pool::Vector, {{"SK_N", "64"}}),
               object("rms_norm.cpp", "sk_rms_norm_f32", "sk_rms_norm_f32__vv1", Pool::Vector,
                      {{"SK_ROWS", "2"}, {"SK_COLS", "32"}, {"SK_EPS", "1e-5f"}}),
               object("add.cpp", "sk_add_f32", "sk_add_f32__vv2", Pool::Vector, {{"SK_N", "32"}})};
  s.ops = {op("sum", 0, 6, Pool::Vector, {{0, 0}, {1, 0}, {2, 0}}),
           op("norm", 1, 2, Pool::Vector, {{2, 0}, {3, 0}, {4, 0}}),
           op("tail", 2, 3, Pool::Vector, {{4, 128}, {2, 128}, {5, 0}})};
  s.syncBefore = syncPoints(s, {edge(0, 1, false, "norm <- sum (RAW on s)"), edge(1, 2, false, "tail <- norm (RAW on n)")});
  return s;
}

/// Cube cores only (MIX_AIC_1_0): two projections, the second reading the first's output.
/// Buffers: 0 W[37x64 bf16] 1 x[64] 2 y[37] 3 V[64x37 f32] 4 u[64].
inline AscendStep cubeOnly(const sk::Options& options) {
  AscendStep s;
  s.name = "cube";
  s.fused = true;
  s.options = options;
  s.type = KernelType::MixAic1_0;
  s.blockDim = 5;
  s.buffers = {buffer("W", sk::DType::BF16, 37 * 64, 0), buffer("x", sk::DType::F32, 64, 1),
               buffer("y", sk::DType::F32, 37, 2), buffer("V", sk::DType::F32, 64 * 37, 3),
               buffer("u", sk::DType::F32, 64, 4)};
  s.objects = {cubeGemv("fx_cube_gemv_bf16w__vc0", true, 37, 64), cubeGemv("fx_cube_gemv_f32__vc1", false, 64, 37)};
  s.ops = {op("p1", 0, 5, Pool::Cube, {{0, 0}, {1, 0}, {2, 0}}), op("p2", 1, 3, Pool::Cube, {{3, 0}, {2, 0}, {4, 0}})};
  s.ops[0].ownEarlyStart = s.ops[1].ownEarlyStart = options.earlyStart == 1;
  s.syncBefore = syncPoints(s, {edge(0, 1, false, "p2 <- p1 (RAW on y)")});
  return s;
}

/// More buffers than a launch passes directly (kMaxDirectBuffers): 40 buffers x0..x39 of 48 floats on the
/// vector cores, op i adds x0 to x[i] into x[i+1]; block counts alternate 4 and 3 (so every edge is a sync
/// point) and op 5 reads both inputs at a byte offset into the table's entries.
inline AscendStep wide(const sk::Options& options) {
  AscendStep s;
  s.name = "wide";
  s.fused = true;
  s.options = options;
  s.type = KernelType::MixAiv1_0;
  s.blockDim = 4;
  constexpr uint32_t kBuffers = 40;
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (uint32_t i = 0; i < kBuffers; ++i) n.push_back("x" + std::to_string(i));
    return n;
  }();
  for (uint32_t i = 0; i < kBuffers; ++i) s.buffers.push_back(buffer(names[i].c_str(), sk::DType::F32, 48, i));
  // An object per (size, block count): inside a SuperKernel an object is compiled for its op's block count.
  s.objects = {object("add.cpp", "sk_add_f32", "sk_add_f32__vw0", Pool::Vector, {{"SK_N", "48"}}),
               object("add.cpp", "sk_add_f32", "sk_add_f32__vw1", Pool::Vector, {{"SK_N", "48"}}),
               object("add.cpp", "sk_add_f32", "sk_add_f32__vw2", Pool::Vector, {{"SK_N", "32"}})};
  static const std::vector<std::string> opNames = [] {
    std::vector<std::string> n;
    for (uint32_t i = 0; i + 1 < kBuffers; ++i) n.push_back("add" + std::to_string(i));
    return n;
  }();
  std::vector<sk::PoolSyncEdge> edges;
  for (uint32_t i = 0; i + 1 < kBuffers; ++i) {
    const uint64_t off = i == 5 ? 64 : 0;
    s.ops.push_back(op(opNames[i].c_str(), i == 5 ? 2 : i % 2, i % 2 ? 3 : 4, Pool::Vector,
                       {{static_cast<int>(i), off}, {0, off}, {static_cast<int>(i + 1), 0}}));
    if (i > 0) edges.push_back(edge(i - 1, i, false, opNames[i] + " <- " + opNames[i - 1] + " (RAW on x" +
                                                         std::to_string(i) + ")"));
  }
  s.syncBefore = syncPoints(s, edges);
  return s;
}

/// sync_sum (tests/ascend/data/kernels/sync_sum.cpp: SyncAll twice per launch, kernel_sync) on 3 blocks
/// between two wider vector ops: add (6 blocks) -> sync_sum (3 blocks; its SyncAll is a barrier over all 6
/// vector cores, so 3 cores must feed it) -> add (6 blocks). MIX_AIV_1_0 on 6 vector cores.
/// Buffers: 0 a[60] 1 b[60] 2 s[60] 3 partial[8] 4 t[60] 5 u[60].
inline AscendStep feedVector(const sk::Options& options) {
  AscendStep s;
  s.name = "feed";
  s.fused = true;
  s.options = options;
  s.type = KernelType::MixAiv1_0;
  s.blockDim = 6;
  s.buffers = {buffer("a", sk::DType::F32, 60, 0), buffer("b", sk::DType::F32, 60, 1),
               buffer("s", sk::DType::F32, 60, 2), buffer("partial", sk::DType::F32, 8, 3),
               buffer("t", sk::DType::F32, 60, 4), buffer("u", sk::DType::F32, 60, 5)};
  s.objects = {object("add.cpp", "sk_add_f32", "sk_add_f32__vf0", Pool::Vector, {{"SK_N", "60"}}),
               object("sync_sum.cpp", "fx_sync_sum", "fx_sync_sum__vf1", Pool::Vector, {{"SK_N", "60"}})};
  s.objects[1].source = testKernelsDir() / "sync_sum.cpp";
  s.ops = {op("sum", 0, 6, Pool::Vector, {{0, 0}, {1, 0}, {2, 0}}),
           op("reduce", 1, 3, Pool::Vector, {{2, 0}, {3, 0}, {4, 0}}),
           op("tail", 0, 6, Pool::Vector, {{4, 0}, {1, 0}, {5, 0}})};
  s.ops[1].kernelSync = true;
  s.ops[1].syncAllCalls = 2;
  s.syncBefore = syncPoints(s, {edge(0, 1, false, "reduce <- sum (RAW on s)"), edge(1, 2, false, "tail <- reduce (RAW on t)")});
  return s;
}

/// Cube and vector cores (MIX_AIC_1_2 on 2 AI Cores: 2 cube, 4 vector cores): a cube projection, then
/// sync_sum on 3 of the 4 vector cores over its output (1 core feeds it), then a vector add on all 4.
/// Buffers: 0 W[40x16 f32] 1 x[16] 2 y[40] 3 partial[8] 4 t[40] 5 u[40].
inline AscendStep feedMix(const sk::Options& options) {
  AscendStep s;
  s.name = "feedmix";
  s.fused = true;
  s.options = options;
  s.type = KernelType::MixAic1_2;
  s.blockDim = 2;
  s.buffers = {buffer("W", sk::DType::F32, 40 * 16, 0), buffer("x", sk::DType::F32, 16, 1),
               buffer("y", sk::DType::F32, 40, 2),      buffer("partial", sk::DType::F32, 8, 3),
               buffer("t", sk::DType::F32, 40, 4),      buffer("u", sk::DType::F32, 40, 5)};
  s.objects = {cubeGemv("fx_cube_gemv_f32__vm0", false, 40, 16),
               object("sync_sum.cpp", "fx_sync_sum", "fx_sync_sum__vm1", Pool::Vector, {{"SK_N", "40"}}),
               object("add.cpp", "sk_add_f32", "sk_add_f32__vm2", Pool::Vector, {{"SK_N", "40"}})};
  s.objects[1].source = testKernelsDir() / "sync_sum.cpp";
  s.ops = {op("proj", 0, 2, Pool::Cube, {{0, 0}, {1, 0}, {2, 0}}),
           op("reduce", 1, 3, Pool::Vector, {{2, 0}, {3, 0}, {4, 0}}),
           op("tail", 2, 4, Pool::Vector, {{4, 0}, {2, 0}, {5, 0}})};
  s.ops[0].ownEarlyStart = options.earlyStart == 1;
  s.ops[1].kernelSync = true;
  s.ops[1].syncAllCalls = 2;
  s.syncBefore = syncPoints(s, {edge(0, 1, false, "reduce <- proj (RAW on y)"), edge(1, 2, false, "tail <- reduce (RAW on t)"),
             edge(0, 2, false, "tail <- proj (RAW on y)")});
  return s;
}

/// Runtime scalars (MIX_AIV_1_0): bump (step += 3) -> rope x -> y at the position in step -> bump again ->
/// rope y -> z at the new position. Both ropes read pos from runtime slot 0 (step[0]) when they run, so a
/// read before the bump it waits for would rotate by the wrong angle. Buffers: 0 step[1] i64, 1 x[64] 2 y[64]
/// 3 z[64] (4 heads x 16).
inline AscendStep runtimeScalar(const sk::Options& options) {
  AscendStep s;
  s.name = "runtime";
  s.fused = true;
  s.options = options;
  s.type = KernelType::MixAiv1_0;
  s.blockDim = 4;
  s.buffers = {buffer("step", sk::DType::I64, 1, 0), buffer("x", sk::DType::F32, 64, 1),
               buffer("y", sk::DType::F32, 64, 2), buffer("z", sk::DType::F32, 64, 3)};
  s.runtimeValues = {AscendRuntimeValue{0, 0, sk::DType::I64}};
  s.objects = {
      object("increment.cpp", "sk_increment_i64", "sk_increment_i64__vt0", Pool::Vector,
             {{"SK_N", "1"}, {"SK_DELTA", "3"}}),
      object("rope.cpp", "sk_rope_f32", "sk_rope_f32__vt1", Pool::Vector,
             {{"SK_HEADS", "4"}, {"SK_DIM", "16"}, {"SK_POS", "SK_ASCEND_RUNTIME_I64_0"}, {"SK_THETA", "10000.0f"}}),
  };
  s.ops = {op("bump", 0, 1, Pool::Vector, {{0, 0}}), op("rope_x", 1, 4, Pool::Vector, {{1, 0}, {2, 0}}),
           op("bump2", 0, 1, Pool::Vector, {{0, 0}}), op("rope_y", 1, 4, Pool::Vector, {{2, 0}, {3, 0}})};
  s.ops[1].runtimeScalars = {{"pos", 0}};
  s.ops[3].runtimeScalars = {{"pos", 0}};
  s.syncBefore = syncPoints(s, {edge(0, 1, false, "rope_x <- bump (RAW on step)"), edge(1, 2, false, "bump2 <- rope_x (WAR on step)"),
             edge(2, 3, false, "rope_y <- bump2 (RAW on step)"), edge(1, 3, false, "rope_y <- rope_x (RAW on y)")});
  return s;
}

/// The unfused step of op i of `s`: its one sub-kernel, launched alone (AIV_ONLY / AIC_ONLY).
inline AscendStep unfused(const AscendStep& s, size_t i) {
  AscendStep u;
  u.name = s.ops[i].name;
  u.fused = false;
  u.options = s.options;
  u.buffers = s.buffers;
  u.runtimeValues = s.runtimeValues;  // the op's slots keep their numbers
  u.objects = {s.objects[s.ops[i].object]};
  u.ops = {s.ops[i]};
  u.ops[0].object = 0;
  u.ops[0].ownEarlyStart = false;
  u.type = u.ops[0].pool == Pool::Cube ? KernelType::AicOnly : KernelType::AivOnly;
  u.blockDim = u.ops[0].blockDim;
  return u;
}

}  // namespace sktest::ascend
