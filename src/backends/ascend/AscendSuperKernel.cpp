// The ascend SuperKernel printer, for both targets (see AscendSuperKernel.h for the shape and why).
#include "backends/ascend/AscendSuperKernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>

#include "superkernel/codegen/Emitter.h"
#include "support/Escape.h"
#include "backends/ascend/AscendBuild.h"
#include "backends/ascend/AscendMachine.h"

namespace sk::ascend {
namespace {

constexpr uint32_t kCube = 1u << 0, kVector = 1u << 1;
uint32_t bit(Pool p) { return p == Pool::Cube ? kCube : kVector; }

// The early-start device type of a set of pools: 0 cube, 1 vector, 2 both.
int devType(uint32_t pools) { return pools == kCube ? 0 : pools == kVector ? 1 : 2; }
const char* devTypeName(int t) { return t == 0 ? "cube" : t == 1 ? "vector" : "cube+vector"; }

const char* isPool(Pool p) { return p == Pool::Cube ? "ASCEND_IS_AIC" : "ASCEND_IS_AIV"; }
// A core's block index within its pool (cube: the AI Core; vector: among all vector cores).
const char* blockIdx(Pool p) { return p == Pool::Cube ? "get_block_idx()" : "AscendC::GetBlockIdx()"; }

class Writer {
 public:
  void line(int indent, const std::string& s) {
    text_.append(static_cast<size_t>(indent) * 2, ' ');
    text_ += s;
    text_ += '\n';
  }
  void blank() { text_ += '\n'; }
  void raw(const std::string& s) { text_ += s; }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

// The full barrier of the task type (early-start 0, debug-sync-all).
void fullSync(Writer& w, KernelType type, int indent) {
  if (type == KernelType::MixAic1_2 || type == KernelType::MixAic1_1) {
    w.line(indent, "AscendC::SyncAll<false>();");
  } else if (type == KernelType::MixAic1_0 || type == KernelType::AicOnly) {
    w.line(indent, "ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIC_FLAG));");
    w.line(indent, "wait_flag_dev(AscendC::SYNC_AIC_FLAG);");
  } else {
    w.line(indent, "ffts_cross_core_sync(PIPE_MTE3, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIV_ONLY_ALL));");
    w.line(indent, "wait_flag_dev(AscendC::SYNC_AIV_ONLY_ALL);");
  }
}

// feed-sync-all (AscendStep::coresToFeed says who feeds; validateAscendStep what a step to feed needs).
// The feeding calls of a kernel_sync op, on the vector cores that run no block of it.
void feedSyncAllCalls(Writer& w, int indent, const AscendOp& op) {
  w.line(indent, fmt::format("if (AscendC::GetBlockIdx() >= {}) {{", op.blockDim));
  w.line(indent + 1, fmt::format("// feed-sync-all: {} calls SyncAll {} time(s), a barrier over every vector core",
                                 escapeComment(op.name), op.syncAllCalls));
  if (op.syncAllCalls == 1) {
    w.line(indent + 1, "AscendC::SyncAll<true>();");
  } else {
    w.line(indent + 1, fmt::format("for (int32_t i = 0; i < {}; ++i) {{", op.syncAllCalls));
    w.line(indent + 2, "AscendC::SyncAll<true>();");
    w.line(indent + 1, "}");
  }
  w.line(indent, "}");
}

}  // namespace

std::string ascendEntryName(const std::string& stepName) { return "sk_ascend_" + sanitizeIdentifier(stepName); }

int64_t preloadUnits(PreloadCode mode, uint64_t codeBytes, Pool pool) {
  // Instruction cache: 16 x 2 KiB on a cube core, 8 x 2 KiB on a vector core.
  const int64_t cap = pool == Pool::Cube ? 16 : 8;
  switch (mode) {
    case PreloadCode::None: return 0;
    case PreloadCode::Max: return cap;
    case PreloadCode::Auto:  // the planner resolves auto (plan/Bind.cpp); a hand-built step reads as per-func
    case PreloadCode::PerFunc: {
      const int64_t units = static_cast<int64_t>((codeBytes + 2047) / 2048);
      return std::clamp<int64_t>(units, 1, cap);
    }
  }
  return 0;
}

namespace {

// The printer of one fused step: one method per section of the generated file, in its order (prologue,
// declarations, profiling, side launches, buffer table; then, per op, its sync point, its side-launch
// waits and its call; the early-start drain; the entry). It stays code rather than a fixed frame under
// templates/ascend/: almost every line depends on the step (pools, split copies, stream-fusion's
// per-pool programs), so a template would be a frame of placeholders around this same logic.
class SuperKernelPrinter {
 public:
  SuperKernelPrinter(const AscendStep& step, int splitMode)
      : s(step), opt(step.options), split(splitMode), n(step.ops.size()) {}

  Expected<AscendSource> print() {
    SK_RETURN_IF_ERROR(layout());
    prologue();
    declarations();
    if (opt.profiling) profiling();
    if (!s.sides.empty()) sideLaunches();
    if (out.launch.bufferTable) bufferTable();
    separate = opt.streamFusion;
    present = (aicCores ? kCube : 0) | (s.poolCores(Pool::Vector) ? kVector : 0);
    for (size_t c = 0; c < n; ++c) {
      if (s.syncBefore[c].pools != 0) syncPoint(c);
      sideWaits(c);
      op(c);
    }
    if (n > 0 && s.ops[n - 1].ownEarlyStart) drainEarlyStart();
    entry();
    out.text = w.take();
    return std::move(out);
  }

 private:
  // What the text depends on besides the step: the entry, the buffer table, the sync points, the side
  // launches' words and the profile buffer's size. All but the sync points and the profile slots are
  // launch descriptor keys, set here and nowhere else: the device builds the entry's arguments from them,
  // so they must be the ones the text was printed with.
  Status layout() {
    out.launch.fused = true;
    out.launch.entry = ascendEntryName(s.name);
    out.launch.bufferTable = s.buffers.size() > kMaxDirectBuffers;
    out.launch.split = split;
    out.launch.hccl = s.hcclGroups;
    aicCores = s.poolCores(Pool::Cube);
    allCores = aicCores + s.poolCores(Pool::Vector);

    // The sync points are the planner's (AscendStep::syncBefore); their count sizes the profile buffer.
    if (s.syncBefore.size() != n) {
      return internalError(fmt::format("step {}: {} sync points for {} ops", s.name, s.syncBefore.size(), n));
    }
    for (size_t c = 0; c < n; ++c) {
      if (s.syncBefore[c].pools & ~(kCube | kVector)) {
        return internalError(fmt::format("op {}: a sync point names pools {:#x} (ascend has cube and vector)",
                                         s.ops[c].name, s.syncBefore[c].pools));
      }
      if (s.syncBefore[c].pools != 0) ++out.syncPoints;
    }
    // Side launches' words: per side launch, one notify word per core of each pool it waits for, then its
    // done word. The cube cores' words come first (word first + block index), then the vector cores'.
    uint32_t gmWaits = 0;  // wait points before ops (sizes the profile buffer)
    notifyBase.assign(s.sides.size(), {0, 0});
    for (size_t k = 0; k < s.sides.size(); ++k) {
      const AscendSide& side = s.sides[k];
      SideWords words;
      words.first = out.launch.notifyWords;
      for (Pool p : {Pool::Cube, Pool::Vector}) {
        const int i = static_cast<int>(p);
        if (side.notifyAfter[i] >= 0) {
          notifyBase[k][i] = out.launch.notifyWords;
          out.launch.notifyWords += s.poolCores(p);
        }
        if (side.waitBefore[i] >= 0) ++gmWaits;
        for (int o : {side.notifyAfter[i], side.waitBefore[i]}) {
          if (o >= static_cast<int>(n) || (o >= 0 && s.ops[static_cast<size_t>(o)].pool != p)) {
            return internalError(
                fmt::format("side launch {}: op {} is not an op of the {} pool", side.name, o, poolName(p)));
          }
        }
      }
      words.count = out.launch.notifyWords - words.first;
      words.done = out.launch.notifyWords++;
      out.launch.sides.push_back(words);
    }
    if (opt.profiling) {
      out.profileSlots = 2 * static_cast<uint32_t>(n) + 2 * out.syncPoints + 2 * gmWaits;
      out.launch.profileBytes = static_cast<uint64_t>(allCores) * out.profileSlots * 16;
    }
    return Status::success();
  }

  void prologue() {
    w.line(0, "// Generated by superkernel (target ascend) from a FusionPlan. Do not edit.");
    w.line(0, fmt::format("// SuperKernel \"{}\": {} op(s), {} on {} {}.", escapeComment(s.name), n,
                          kernelTypeName(s.type), s.blockDim,
                          s.type == KernelType::MixAiv1_0 ? "vector core(s)"
                                                          : fmt::format("AI Core(s) ({} cube, {} vector core(s))",
                                                                        aicCores, s.poolCores(Pool::Vector))));
    if (split > 1) {
      w.line(0,
             fmt::format("// split-mode {}: every sub-kernel has {} code copies; a core runs copy get_coreid() % {}.",
                         split, split, split));
    }
    if (!s.runtimeValues.empty()) {
      w.line(0,
             "// Runtime values: every launch passes the address of each slot's source (launch descriptor runtime=),");
      w.line(0,
             "// and a sub-kernel reads slot k as its SK_<NAME> (SK_ASCEND_RUNTIME_<T>_<k>) when it runs, after the");
      w.line(0, "// op's waits: the values are never compiled in.");
      for (size_t k = 0; k < s.runtimeValues.size(); ++k) {
        const AscendRuntimeValue& rv = s.runtimeValues[k];
        const PlanBuffer& b = s.buffers.at(static_cast<size_t>(rv.buffer));
        w.line(0, fmt::format("//   slot {}: {}[{}] ({})", k, escapeComment(b.name),
                              rv.byteOffset / dtypeSize(rv.dtype), dtypeName(rv.dtype)));
      }
    }
    w.line(0, "#include \"kernel_operator.h\"");
    w.blank();
  }

  // Each object, and its split copies.
  void declarations() {
    std::vector<bool> used(s.objects.size(), false);
    for (const AscendOp& op : s.ops) used[op.object] = true;
    for (size_t i = 0; i < s.objects.size(); ++i) {
      if (!used[i]) continue;
      const AscendObject& o = s.objects[i];
      size_t nargs = 0;
      for (const AscendOp& op : s.ops)
        if (op.object == i) nargs = op.args.size() + (passesHccl(op) ? 1 : 0);
      std::string params;
      for (size_t a = 0; a < nargs; ++a) params += a ? ", GM_ADDR" : "GM_ADDR";
      for (int k = 0; k < split; ++k)
        w.line(0, fmt::format("extern \"C\" __global__ __aicore__ void {}({});", splitSymbol(o.symbol, k), params));
    }
  }

  void profiling() {
    w.blank();
    w.line(0, "// Profiling: per core, 16-byte records {op index (of a wait: the op about to wait), kind (0 op begin,");
    w.line(0, "// 1 op end, 2 wait begin, 3 wait end), cycle}; cube cores first, then vector cores, each a slice of");
    w.line(0, "// sk_profile.");
    w.line(0, "__BLOCK_LOCAL__ __gm__ uint8_t* sk_prof_base;");
    w.line(0, "__BLOCK_LOCAL__ uint32_t sk_prof_next;");
    w.line(0, "__aicore__ inline void SkProfInit(GM_ADDR profile) {");
    w.line(1, fmt::format("const int64_t core = ASCEND_IS_AIC ? get_block_idx() : {} + AscendC::GetBlockIdx();",
                          aicCores));
    w.line(1, fmt::format("sk_prof_base = profile + core * {};", static_cast<uint64_t>(out.profileSlots) * 16));
    w.line(1, "sk_prof_next = 0;");
    w.line(0, "}");
    w.line(0, "__aicore__ inline void SkProf(uint32_t id, uint32_t kind) {");
    w.line(1, fmt::format("if (sk_prof_next >= {}) return;", out.profileSlots));
    w.line(1, "__gm__ uint32_t* r = reinterpret_cast<__gm__ uint32_t*>(sk_prof_base + sk_prof_next * 16);");
    w.line(1, "r[0] = id;");
    w.line(1, "r[1] = kind;");
    w.line(1, "*reinterpret_cast<__gm__ uint64_t*>(r + 2) = static_cast<uint64_t>(AscendC::GetSystemCycle());");
    w.line(1, "++sk_prof_next;");
    w.line(0, "}");
  }

  void sideLaunches() {
    w.blank();
    w.line(0, "// Launches of other streams beside this SuperKernel, ordered with it by 64-byte words of sk_notify");
    w.line(0,
           "// (zeroed before the launch): a core sets its notify word once the ops a side launch needs are done on");
    w.line(0, "// it, the side launch starts when all of its notify words are set, and its done word is set when it");
    w.line(0, "// completed (1; 2: it failed), which every core of the ops that need it polls first.");
    for (size_t k = 0; k < s.sides.size(); ++k) {
      w.line(0, fmt::format("//   side launch {}: {} on stream {}: notify words [{}, {}), done word {}", k,
                            escapeComment(s.sides[k].name), s.sides[k].stream, out.launch.sides[k].first,
                            out.launch.sides[k].first + out.launch.sides[k].count, out.launch.sides[k].done));
    }
    w.line(0, "__aicore__ inline void SkNotify(GM_ADDR words, uint32_t w) {");
    w.line(1, "pipe_barrier(PIPE_ALL);");
    w.line(1, fmt::format("__gm__ volatile uint64_t* p = reinterpret_cast<__gm__ volatile uint64_t*>(words + w * {});",
                          kNotifyWordBytes));
    w.line(1, "*p = 1;");
    w.line(1, "dcci(p, SINGLE_CACHE_LINE, CACHELINE_OUT);");
    w.line(0, "}");
    w.line(0, "__aicore__ inline void SkWaitDone(GM_ADDR words, uint32_t w) {");
    w.line(1, fmt::format("__gm__ volatile uint64_t* p = reinterpret_cast<__gm__ volatile uint64_t*>(words + w * {});",
                          kNotifyWordBytes));
    w.line(1, "dcci(p, SINGLE_CACHE_LINE, CACHELINE_OUT);");
    w.line(1, "while (*p == 0) {");
    w.line(2, "dcci(p, SINGLE_CACHE_LINE, CACHELINE_OUT);");
    w.line(1, "}");
    w.line(0, "}");
  }

  void bufferTable() {
    w.blank();
    w.line(0, fmt::format("// The step's {} buffers come as one GM table of 64-bit addresses (manifest order): more",
                          s.buffers.size()));
    w.line(0, fmt::format("// than {} would not fit a launch's parameters.", kMaxDirectBuffers));
    w.line(0, "__aicore__ inline GM_ADDR SkBuffer(GM_ADDR table, uint32_t b) {");
    w.line(1, "return reinterpret_cast<GM_ADDR>(reinterpret_cast<__gm__ uint64_t*>(table)[b]);");
    w.line(0, "}");
  }

  // The sync point before op c.
  void syncPoint(size_t c) {
    const AscendOp& cur = s.ops[c];
    const PoolSyncPoint& sp = s.syncBefore[c];
    const int cfg = (devType(sp.pools) << 2) | devType(bit(cur.pool));
    blankAll();
    common(1, fmt::format("// sync before {}: {} -> {} (early-start config {})", escapeComment(cur.name),
                          devTypeName(devType(sp.pools)), devTypeName(devType(bit(cur.pool))), cfg));
    for (const std::string& why : sp.why) common(1, "//   " + escapeComment(why));
    // A wait's records carry the op about to wait (as the cpu target's do).
    if (opt.profiling) common(1, fmt::format("SkProf({}, 2);", c));
    if (opt.earlyStart == 0) {
      fullSyncAll();
    } else {
      for (Pool p : {Pool::Cube, Pool::Vector}) {
        if (!(sp.pools & bit(p))) continue;
        const AscendOp* prev = c > 0 ? &s.ops[c - 1] : nullptr;
        forPool(p, [&](Writer& pw, int indent) {
          if (prev && prev->ownEarlyStart && prev->pool == p) {
            // The previous op's blocks signalled themselves; the pool's other cores complete it.
            pw.line(indent, fmt::format("if ({} >= {}) {{", blockIdx(p), prev->blockDim));
            pw.line(indent + 1, "AscendC::SetNextTaskStartImpl();");
            pw.line(indent, "}");
          } else {
            pw.line(indent, "AscendC::SetNextTaskStartImpl();");
          }
        });
      }
      common(1, fmt::format("g_super_kernel_early_start_config = {};", cfg));
      for (Pool p : {Pool::Cube, Pool::Vector}) {
        if (!((sp.pools | bit(cur.pool)) & bit(p))) continue;
        forPool(p, [&](Writer& pw, int indent) {
          if (cur.ownEarlyStart && cur.pool == p) {
            // The op's own blocks wait inside the kernel (WaitPreTaskEnd reads the config above).
            pw.line(indent, fmt::format("if ({} >= {}) {{", blockIdx(p), cur.blockDim));
            pw.line(indent + 1, fmt::format("AscendC::WaitPreTaskEndImpl<{}>();", cfg));
            pw.line(indent, "}");
          } else {
            pw.line(indent, fmt::format("AscendC::WaitPreTaskEndImpl<{}>();", cfg));
          }
        });
      }
    }
    if (opt.profiling) common(1, fmt::format("SkProf({}, 3);", c));
  }

  // Side launches op c needs: every core of its pool polls their done words first.
  void sideWaits(size_t c) {
    const AscendOp& cur = s.ops[c];
    std::vector<size_t> waitsHere;
    for (size_t k = 0; k < s.sides.size(); ++k)
      if (s.sides[k].waitBefore[static_cast<int>(cur.pool)] == static_cast<int>(c)) waitsHere.push_back(k);
    if (!waitsHere.empty()) {
      blankAll();
      forPool(cur.pool, [&](Writer& pw, int indent) {
        if (opt.profiling) pw.line(indent, fmt::format("SkProf({}, 2);", c));
        for (size_t k : waitsHere) {
          pw.line(indent, fmt::format("SkWaitDone(sk_notify, {});  // {} needs side launch {} ({})",
                                      out.launch.sides[k].done, escapeComment(cur.name), k,
                                      escapeComment(s.sides[k].name)));
        }
        if (opt.profiling) pw.line(indent, fmt::format("SkProf({}, 3);", c));
      });
    }
  }

  // Op c's call on its cores, its feed-sync-all calls, its profile records and the notifies of the side
  // launches that need it.
  void op(size_t c) {
    const AscendOp& cur = s.ops[c];
    blankAll();
    common(1, fmt::format("// op {}: {} = {} x {} block(s) on {} cores{}", c, escapeComment(cur.name),
                          s.objects[cur.object].symbol, cur.blockDim, poolName(cur.pool),
                          cur.ownEarlyStart ? "; signals and waits early start itself" : ""));
    if (!cur.runtimeScalars.empty()) {
      std::string reads;
      for (const auto& [param, slot] : cur.runtimeScalars)
        reads += fmt::format("{}{} (slot {})", reads.empty() ? "" : ", ", escapeComment(param), slot);
      common(1, "//   reads runtime " + reads);
    }
    if (c == 0 && opt.preloadCode != PreloadCode::None) preloadOf(cur);
    if (c + 1 < n && opt.preloadCode != PreloadCode::None) preloadOf(s.ops[c + 1]);
    if (opt.profiling) common(1, fmt::format("SkProf({}, 0);", c));
    onCores(cur, [&](const std::string& sym) {
      std::string args;
      for (size_t a = 0; a < cur.args.size(); ++a) {
        if (a) args += ", ";
        args += cur.args[a].byteOffset ? fmt::format("{} + {}", buf(cur.args[a].buffer), cur.args[a].byteOffset)
                                       : buf(cur.args[a].buffer);
      }
      if (passesHccl(cur)) args += std::string(args.empty() ? "" : ", ") + "sk_hccl";
      return fmt::format("{}({});", sym, args);
    });
    if (s.coresToFeed(cur) > 0) forPool(cur.pool, [&](Writer& pw, int indent) { feedSyncAllCalls(pw, indent, cur); });
    if (opt.profiling) common(1, fmt::format("SkProf({}, 1);", c));
    // Side launches that need this op (their last need in its pool): every core of the pool says it is done.
    for (size_t k = 0; k < s.sides.size(); ++k) {
      const int i = static_cast<int>(cur.pool);
      if (s.sides[k].notifyAfter[i] != static_cast<int>(c)) continue;
      forPool(cur.pool, [&](Writer& pw, int indent) {
        pw.line(indent, fmt::format("SkNotify(sk_notify, {} + {});  // side launch {} ({}) needs {}", notifyBase[k][i],
                                    blockIdx(cur.pool), k, escapeComment(s.sides[k].name), escapeComment(cur.name)));
      });
    }
    if (opt.debugSyncAll && c + 1 < n) {
      common(1, "// debug-sync-all");
      fullSyncAll();
    }
  }

  // A kernel that signals early start itself, last in the SuperKernel: its pool's other cores complete the
  // round and every core of the pool consumes it, so no flag outlives the launch.
  void drainEarlyStart() {
    const AscendOp& last = s.ops[n - 1];
    const int cfg = (devType(bit(last.pool)) << 2) | devType(bit(last.pool));
    blankAll();
    common(1, fmt::format("// drain the early-start signal of {}", escapeComment(last.name)));
    forPool(last.pool, [&](Writer& pw, int indent) {
      pw.line(indent, fmt::format("if ({} >= {}) {{", blockIdx(last.pool), last.blockDim));
      pw.line(indent + 1, "AscendC::SetNextTaskStartImpl();");
      pw.line(indent, "}");
      pw.line(indent, fmt::format("AscendC::WaitPreTaskEndImpl<{}>();", cfg));
    });
  }

  // The entry: one GM_ADDR per buffer of the step (manifest order) or the table of them, then the notify
  // words and the profile buffer; with stream-fusion=1 it calls each pool's program.
  void entry() {
    std::string params;
    if (out.launch.bufferTable) {
      params = "GM_ADDR sk_buffers";
    } else {
      for (size_t b = 0; b < s.buffers.size(); ++b) {
        if (b) params += ", ";
        params += fmt::format("GM_ADDR b{}", b);
      }
    }
    if (!s.sides.empty()) params += std::string(params.empty() ? "" : ", ") + "GM_ADDR sk_notify";
    if (!s.hcclGroups.empty()) params += std::string(params.empty() ? "" : ", ") + "GM_ADDR sk_hccl";
    if (opt.profiling) params += std::string(params.empty() ? "" : ", ") + "GM_ADDR sk_profile";
    if (params.empty()) params = "void";
    std::string callArgs, progParams;
    if (out.launch.bufferTable) {
      callArgs = "sk_buffers";
      progParams = "GM_ADDR sk_buffers";
    } else {
      for (size_t b = 0; b < s.buffers.size(); ++b) callArgs += fmt::format("{}b{}", b ? ", " : "", b);
      for (size_t b = 0; b < s.buffers.size(); ++b) progParams += fmt::format("{}GM_ADDR b{}", b ? ", " : "", b);
    }
    if (!s.sides.empty()) {
      callArgs += std::string(callArgs.empty() ? "" : ", ") + "sk_notify";
      progParams += std::string(progParams.empty() ? "" : ", ") + "GM_ADDR sk_notify";
    }
    if (!s.hcclGroups.empty()) {
      callArgs += std::string(callArgs.empty() ? "" : ", ") + "sk_hccl";
      progParams += std::string(progParams.empty() ? "" : ", ") + "GM_ADDR sk_hccl";
    }
    if (separate) {
      for (Pool p : {Pool::Cube, Pool::Vector}) {
        if (!(present & bit(p))) continue;
        w.blank();
        w.line(0, fmt::format("// The {} cores' program (stream-fusion=1).", poolName(p)));
        w.line(0, fmt::format("__aicore__ inline void {}_{}({}) {{", out.launch.entry, p == Pool::Cube ? "aic" : "aiv",
                              progParams.empty() ? "void" : progParams));
        std::string body = (p == Pool::Cube ? cubeProg : vecProg).take();
        // The program's first line is the blank that separated its first op.
        if (!body.empty() && body[0] == '\n') body.erase(0, 1);
        w.raw(body);
        w.line(0, "}");
      }
    }
    w.blank();
    const std::string align = opt.funcAlign > 0 ? fmt::format("__attribute__((aligned({}))) ", opt.funcAlign) : "";
    w.line(0, fmt::format("extern \"C\" __global__ {}__aicore__ void {}({}) {{", align, out.launch.entry, params));
    w.line(1, fmt::format("KERNEL_TASK_TYPE_DEFAULT({});", kernelTypeName(s.type)));
    if (opt.profiling) w.line(1, "SkProfInit(sk_profile);");
    if (separate) {
      for (Pool p : {Pool::Cube, Pool::Vector}) {
        if (!(present & bit(p))) continue;
        w.line(1, fmt::format("if {} {{", isPool(p)));
        w.line(2, fmt::format("{}_{}({});", out.launch.entry, p == Pool::Cube ? "aic" : "aiv", callArgs));
        w.line(1, "}");
      }
    } else {
      w.raw(single.take());
    }
    w.line(0, "}");
  }

  // ---- the programs the statements go into --------------------------------------------------------------
  // One program run by every core (each pool's part under `if ASCEND_IS_X`), or, with stream-fusion=1, one
  // program per pool holding only that pool's parts: the cube and the vector cores then each walk their own
  // op sequence, meeting only at the sync points data edges need.
  std::vector<Writer*> programs() {
    std::vector<Writer*> ws;
    if (!separate) return std::vector<Writer*>{&single};
    if (present & kCube) ws.push_back(&cubeProg);
    if (present & kVector) ws.push_back(&vecProg);
    return ws;
  }
  void common(int indent, const std::string& l) {
    for (Writer* pw : programs()) pw->line(indent, l);
  }
  void blankAll() {
    for (Writer* pw : programs()) pw->blank();
  }
  void forPool(Pool p, const std::function<void(Writer&, int)>& body) {
    if (!separate) {
      single.line(1, fmt::format("if {} {{", isPool(p)));
      body(single, 2);
      single.line(1, "}");
    } else if (present & bit(p)) {
      body(p == Pool::Cube ? cubeProg : vecProg, 1);
    }
  }
  // A call (or preload) of op's object on its cores, through its split copy.
  void onCores(const AscendOp& op, const std::function<std::string(const std::string& symbol)>& body) {
    const AscendObject& o = s.objects[op.object];
    forPool(op.pool, [&](Writer& pw, int indent) {
      pw.line(indent, fmt::format("if ({} < {}) {{", blockIdx(op.pool), op.blockDim));
      if (split == 1) {
        pw.line(indent + 1, body(o.symbol));
      } else {
        pw.line(indent + 1, "const uint8_t coreid = static_cast<uint8_t>(get_coreid());");
        for (int k = 0; k < split; ++k) {
          const std::string head = k == 0          ? fmt::format("if ((coreid % {}) == 0) {{", split)
                                   : k + 1 < split ? fmt::format("}} else if ((coreid % {}) == {}) {{", split, k)
                                                   : std::string("} else {");
          pw.line(indent + 1, head);
          pw.line(indent + 2, body(splitSymbol(o.symbol, k)));
        }
        pw.line(indent + 1, "}");
      }
      pw.line(indent, "}");
    });
  }
  void preloadOf(const AscendOp& op) {
    const int64_t units = preloadUnits(opt.preloadCode, s.objects[op.object].codeBytes, op.pool);
    if (units == 0) return;
    onCores(op, [&](const std::string& sym) { return fmt::format("preload((const void*){}, {});", sym, units); });
  }
  void fullSyncAll() {
    for (Writer* pw : programs()) fullSync(*pw, s.type, 1);
  }
  // How the code names buffer b: a parameter, or its entry of the GM table.
  // Target ascend: a collective sub-kernel takes the launch's HCCL context table (sk_hccl) after its buffers.
  bool passesHccl(const AscendOp& op) const { return op.hcclGroup != 0 && !s.hcclGroups.empty(); }

  std::string buf(size_t b) const {
    return out.launch.bufferTable ? fmt::format("SkBuffer(sk_buffers, {})", b) : fmt::format("b{}", b);
  }

  const AscendStep& s;
  const Options& opt;
  const int split;
  const size_t n;
  AscendSource out;
  uint32_t aicCores = 0, allCores = 0;
  std::vector<std::array<uint32_t, 2>> notifyBase;  // per side launch, its first notify word per pool
  bool separate = false;                            // stream-fusion=1: one program per pool
  uint32_t present = 0;                             // the pools the launch has cores of
  Writer w, single, cubeProg, vecProg;
};

}  // namespace

Expected<AscendSource> emitAscend(const AscendStep& s) {
  if (!s.fused) return internalError("emitAscend: an unfused step runs its sub-kernel directly");
  const int split = s.options.effectiveSplitMode(defaultSplitMode());
  if (split < 1 || split > 64) return badInput(fmt::format("split-mode {} (1..64)", split));
  SK_RETURN_IF_ERROR(validateAscendStep(s));
  return SuperKernelPrinter(s, split).print();
}

}  // namespace sk::ascend
