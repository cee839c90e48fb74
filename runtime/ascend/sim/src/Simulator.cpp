// The Ascend simulator's host runtime (see Simulator.h and kernel_operator.h).
//
// One mutex and one condition variable per launch guard every flag counter:
// simulated kernels synchronize rarely (at op boundaries), so simplicity wins
// over lock-free counters, and a single lock makes the deadlock check exact —
// when a core blocks and every other unfinished core is blocked on a flag
// whose counter is zero, no core can ever set one: that is a deadlock, found
// at once instead of after a timeout. Cores polling GM (notify/wait words)
// are visible only through dcci; the watchdog covers them.
//
// A failed launch must stop every core: waits and dcci throw Abort into the
// kernel code (compiled with exceptions), which unwinds to the core's thread.
#include "superkernel/ascend/Simulator.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace sk::ascend_sim {
namespace {

// Thrown into kernel code to unwind a core once the launch has failed.
struct Abort {};

enum class State { Running, Waiting, Spinning, Done };

struct Launch;

struct Core {
  sk_ascend_sim_core abi{};
  Launch* launch = nullptr;
  uint32_t index = 0;  // AICs first, then AIVs
  bool aic = false;
  uint32_t group = 0;  // the AI Core (AIC and its AIVs share it)
  uint8_t count[kFlagIds] = {};
  uint32_t pend0[kFlagIds] = {};  // mode-0 sets not yet matched by every core of the pool
  uint32_t pend1[kFlagIds] = {};  // mode-1 sets not yet matched by the other AIV
  uint32_t pend2[kFlagIds] = {};  // mode-2 sets (AIV -> AIC) not yet matched by the group's AIVs
  State state = State::Running;
  int64_t waitingOn = -1;
  bool inHccl = false;  // running an Hccl task (state Running: the communicator bounds its wait)
  std::string label;
};

struct Launch {
  const LaunchSpec* spec = nullptr;
  std::mutex m;
  std::condition_variable cv;
  std::vector<Core> cores;
  uint32_t nAic = 0, nAiv = 0, aivPerGroup = 0;  // aivPerGroup 0: no cube cores
  bool partialWave = false;  // the launch's blocks run in waves and this is one (LaunchSpec::residentBlocks)
  uint32_t waveWidth = 0;    // blocks per wave
  uint32_t finished = 0;
  uint64_t progress = 0;
  bool failed = false;
  std::string error;
  LaunchStats stats;
  std::chrono::steady_clock::time_point start;
};

// The library's all-core and cross-core flags (kernel_operator.h: SYNC_AIC_FLAG 11 .. SYNC_AIV_ONLY_ALL 14).
bool isLibraryFlag(int64_t flag) { return flag >= 11 && flag <= 14; }

const char* flagName(int64_t flag) {
  switch (flag) {
    case 11: return " (SYNC_AIC_FLAG)";
    case 12: return " (SYNC_AIV_FLAG)";
    case 13: return " (SYNC_AIC_AIV_FLAG)";
    case 14: return " (SYNC_AIV_ONLY_ALL)";
    default: return "";
  }
}

const char* pipeName(uint32_t p) {
  static const char* names[] = {"PIPE_S",   "PIPE_V",   "PIPE_M",    "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3",
                                "PIPE_ALL", "PIPE_MTE4", "PIPE_MTE5", "PIPE_V2",   "PIPE_FIX"};
  return p < sizeof names / sizeof names[0] ? names[p] : "unknown pipe";
}

Core& self(const sk_ascend_sim_core* c) { return *static_cast<Core*>(c->runtime); }

// Lock held. Records the first failure and wakes everyone; the caller throws.
void fail(Launch& L, std::string what) {
  if (!L.failed) {
    L.failed = true;
    L.error = std::move(what);
  }
  L.cv.notify_all();
}

[[noreturn]] void failAndAbort(Launch& L, std::string what) {
  fail(L, std::move(what));
  throw Abort{};
}

void checkAbort(Launch& L) {
  if (L.failed) throw Abort{};
}

std::string describeStates(const Launch& L) {
  std::string s;
  for (const Core& c : L.cores) {
    if (!s.empty()) s += "; ";
    s += c.label;
    switch (c.state) {
      case State::Running: s += c.inHccl ? " runs an Hccl task (waiting for the other ranks)" : " running"; break;
      case State::Done: s += " finished"; break;
      case State::Spinning: s += " polling GM (dcci)"; break;
      case State::Waiting: s += fmt::format(" waits flag {}{}", c.waitingOn, flagName(c.waitingOn)); break;
    }
  }
  return s;
}

// Lock held. Every unfinished core blocked on a zero counter: nobody can set one.
void checkDeadlock(Launch& L) {
  if (L.failed) return;
  bool anyWaiting = false;
  for (const Core& c : L.cores) {
    if (c.state == State::Done) continue;
    if (c.state != State::Waiting || c.count[c.waitingOn] != 0) return;
    anyWaiting = true;
  }
  if (!anyWaiting) return;
  std::string hint;
  // A wait on a library all-core flag (SyncAll's, or a sync point's) while some cores already left the
  // kernel: a barrier over every core of the launch that not every core calls, the way a sub-kernel's
  // SyncAll hangs in a SuperKernel wider than its blocks when nothing feeds it.
  uint32_t done = 0;
  bool allCoreFlag = false;
  for (const Core& c : L.cores) {
    done += c.state == State::Done;
    allCoreFlag = allCoreFlag || (c.state == State::Waiting && isLibraryFlag(c.waitingOn));
  }
  if (done > 0 && allCoreFlag) {
    hint = fmt::format(" (an all-core sync that {} finished core(s) never took part in: SyncAll is a barrier over "
                       "every core of the launch, so a sub-kernel calling it on fewer blocks than the SuperKernel "
                       "has cores needs the other cores to call it too, feed-sync-all)",
                       done);
  }
  fail(L, "deadlock: every unfinished core waits on a flag no core can set any more" + hint + ": " +
              describeStates(L));
}

// Which pipes each core type has (a cube core has no vector unit; a vector core no cube, L1 or fixpipe).
void checkPipe(Launch& L, const Core& me, uint32_t pipe, const char* op) {
  bool ok = pipe <= 10;
  if (ok && me.aic) ok = pipe != 1 && pipe != 9;  // PIPE_V, PIPE_V2
  if (ok && !me.aic) ok = pipe != 2 && pipe != 3 && pipe != 10;  // PIPE_M, PIPE_MTE1, PIPE_FIX
  if (!ok) failAndAbort(L, fmt::format("{} on {} with {} ({}): that pipe does not exist on a {} core", op, me.label,
                                       pipeName(pipe), pipe, me.aic ? "cube" : "vector"));
}

void bump(Launch& L, Core& target, uint32_t flag, const Core& from) {
  if (target.count[flag] >= kFlagCounterMax) {
    failAndAbort(L, fmt::format("flag {}{} of {} overflows its 4-bit counter: a 16th pending set (from {}) "
                                "before any wait consumed one",
                                flag, flagName(flag), target.label, from.label));
  }
  ++target.count[flag];
}

Core* aicOfGroup(Launch& L, uint32_t g) { return g < L.nAic ? &L.cores[g] : nullptr; }

void opSet(const sk_ascend_sim_core* c, uint32_t pipe, uint64_t config) {
  Core& me = self(c);
  Launch& L = *me.launch;
  std::unique_lock<std::mutex> lk(L.m);
  checkAbort(L);
  ++L.stats.sets;
  me.state = State::Running;
  checkPipe(L, me, pipe, "ffts_cross_core_sync");
  if ((config & 1) == 0 || (config & ~uint64_t{0xf31}) != 0) {
    failAndAbort(L, fmt::format("ffts_cross_core_sync on {}: config {:#x} is not 1 | mode << 4 | flag << 8 "
                                "(use AscendC::GetffstMsg)", me.label, config));
  }
  const uint32_t mode = (config >> 4) & 3, flag = (config >> 8) & 0xf;
  switch (mode) {
    case 0: {
      // All cores of the caller's type meet: each round needs one set from every one of them. On a device,
      // blocks of a later wave only start when earlier ones finished: a meeting of all of them never completes.
      if (L.partialWave) {
        failAndAbort(L, fmt::format("ffts_cross_core_sync mode 0 (flag {}{}) on {}: a sync of every core of the "
                                    "launch, whose {} blocks run in waves of {} on this device's cores (on a "
                                    "device it would never complete): a kernel that syncs its blocks "
                                    "(kernel_sync) needs block_dim <= the cores",
                                    flag, flagName(flag), me.label, L.spec->blockDim, L.waveWidth));
      }
      me.pend0[flag]++;
      const uint32_t first = me.aic ? 0 : L.nAic, end = me.aic ? L.nAic : L.nAic + L.nAiv;
      bool all = true;
      for (uint32_t i = first; i < end; ++i) all = all && L.cores[i].pend0[flag] > 0;
      if (all) {
        for (uint32_t i = first; i < end; ++i) L.cores[i].pend0[flag]--;
        for (uint32_t i = first; i < end; ++i) bump(L, L.cores[i], flag, me);
      }
      break;
    }
    case 1: {
      if (me.aic || L.aivPerGroup != 2) {
        failAndAbort(L, fmt::format("ffts_cross_core_sync mode 1 (flag {}) on {}: mode 1 pairs the two vector "
                                    "cores of one AI Core, which only a MIX_AIC_1_2 launch has",
                                    flag, me.label));
      }
      Core& other = L.cores[L.nAic + ((me.index - L.nAic) ^ 1u)];
      me.pend1[flag]++;
      if (other.pend1[flag] > 0) {
        me.pend1[flag]--;
        other.pend1[flag]--;
        bump(L, me, flag, me);
        bump(L, other, flag, me);
      }
      break;
    }
    case 2: {
      if (L.aivPerGroup == 0) {
        failAndAbort(L, fmt::format("ffts_cross_core_sync mode 2 (flag {}) on {}: mode 2 links a cube core and its "
                                    "vector cores, and a {} launch has only {} cores",
                                    flag, me.label, taskTypeName(L.spec->type), me.aic ? "cube" : "vector"));
      }
      const uint32_t firstAiv = L.nAic + me.group * L.aivPerGroup;
      if (me.aic) {
        for (uint32_t i = 0; i < L.aivPerGroup; ++i) bump(L, L.cores[firstAiv + i], flag, me);
      } else {
        me.pend2[flag]++;
        bool all = true;
        for (uint32_t i = 0; i < L.aivPerGroup; ++i) all = all && L.cores[firstAiv + i].pend2[flag] > 0;
        if (all) {
          for (uint32_t i = 0; i < L.aivPerGroup; ++i) L.cores[firstAiv + i].pend2[flag]--;
          bump(L, *aicOfGroup(L, me.group), flag, me);
        }
      }
      break;
    }
    default:
      failAndAbort(L, fmt::format("ffts_cross_core_sync on {}: mode 3 does not exist (config {:#x})", me.label, config));
  }
  ++L.progress;
  L.cv.notify_all();
}

void skew(const Core& me) {
  const uint32_t us = me.launch->spec->skewMicros;
  if (us) std::this_thread::sleep_for(std::chrono::microseconds(us * ((me.index * 7u + 3u) % 4u)));
}

void opWait(const sk_ascend_sim_core* c, uint32_t pipe, int64_t flag) {
  Core& me = self(c);
  Launch& L = *me.launch;
  {
    std::unique_lock<std::mutex> lk(L.m);
    checkAbort(L);
    ++L.stats.waits;
    me.state = State::Running;
    checkPipe(L, me, pipe, "wait_flag_dev");
    if (flag < 0 || flag >= static_cast<int64_t>(kFlagIds)) {
      failAndAbort(L, fmt::format("wait_flag_dev({}) on {}: flag ids are 0..15", flag, me.label));
    }
    while (me.count[flag] == 0) {
      me.state = State::Waiting;
      me.waitingOn = flag;
      checkDeadlock(L);
      checkAbort(L);
      L.cv.wait(lk);
      checkAbort(L);
    }
    me.count[flag]--;
    me.state = State::Running;
    me.waitingOn = -1;
    ++L.progress;
  }
  skew(me);
}

// A full memory barrier as a sequentially consistent read-modify-write of a
// shared word rather than atomic_thread_fence: the same ordering (a locked
// instruction on x86), and one that ThreadSanitizer models (g++ refuses a
// fence under -fsanitize=thread).
std::atomic<uint32_t> gFenceWord{0};
void fullFence() { gFenceWord.fetch_add(0, std::memory_order_seq_cst); }

void opPipeBarrier(const sk_ascend_sim_core* c, uint32_t pipe) {
  Core& me = self(c);
  Launch& L = *me.launch;
  std::unique_lock<std::mutex> lk(L.m);
  checkAbort(L);
  me.state = State::Running;
  checkPipe(L, me, pipe, "pipe_barrier");
  fullFence();
}

void opDcci(const sk_ascend_sim_core* c, const volatile void*, uint64_t entire, uint64_t dst) {
  Core& me = self(c);
  Launch& L = *me.launch;
  {
    std::unique_lock<std::mutex> lk(L.m);
    checkAbort(L);
    ++L.stats.dccis;
    if (entire > 1 || dst > 3) {
      failAndAbort(L, fmt::format("dcci on {}: cache_line {} / dst {} out of range", me.label, entire, dst));
    }
    me.state = State::Spinning;
  }
  fullFence();
  // A GM poll loop calls dcci per iteration: let the writer run (there may be fewer host cores than simulated ones).
  std::this_thread::yield();
}

void opPreload(const sk_ascend_sim_core* c, const void* addr, int64_t units) {
  Core& me = self(c);
  Launch& L = *me.launch;
  std::unique_lock<std::mutex> lk(L.m);
  checkAbort(L);
  ++L.stats.preloads;
  me.state = State::Running;
  const int64_t limit = me.aic ? kPreloadUnitsAic : kPreloadUnitsAiv;
  if (units < 1 || units > limit) {
    failAndAbort(L, fmt::format("preload({}, {}) on {}: the {} core's instruction cache holds 1..{} units of 2 KiB",
                                addr, units, me.label, me.aic ? "cube" : "vector", limit));
  }
  Dl_info info{};
  if (addr == nullptr || dladdr(addr, &info) == 0) {
    failAndAbort(L, fmt::format("preload({}, {}) on {}: not an address inside any loaded code", addr, units, me.label));
  }
  // Preload targets are sub-kernel entries: exported functions of the kernel's shared object.
  if (info.dli_sname == nullptr || info.dli_saddr != addr) {
    failAndAbort(L, fmt::format("preload({}, {}) on {}: not the start of a function (nearest symbol: {})", addr, units,
                                me.label, info.dli_sname ? info.dli_sname : "none"));
  }
}

void opDeclare(const sk_ascend_sim_core* c, uint32_t type) {
  Core& me = self(c);
  Launch& L = *me.launch;
  std::unique_lock<std::mutex> lk(L.m);
  checkAbort(L);
  L.stats.declaredType = type;
  if (L.spec->checkDeclaredType && type != static_cast<uint32_t>(L.spec->type)) {
    const char* declared = type <= 5 ? taskTypeName(static_cast<TaskType>(type)) : "an unknown type";
    failAndAbort(L, fmt::format("{} declares KERNEL_TASK_TYPE_DEFAULT({}) but was launched as {}", L.spec->name,
                                declared, taskTypeName(L.spec->type)));
  }
}

void opTrap(const sk_ascend_sim_core* c, const char* what) {
  Core& me = self(c);
  Launch& L = *me.launch;
  std::unique_lock<std::mutex> lk(L.m);
  failAndAbort(L, fmt::format("{} on {}", what ? what : "trap", me.label));
}

uint64_t opCycle(const sk_ascend_sim_core* c) {
  const Launch& L = *self(c).launch;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - L.start).count());
}

// An Hccl task (lib/hccl/hccl.h's Wait): run on this core's thread, outside the launch's lock, while the other
// cores go on; the core stays Running (the watchdog and the deadlock check leave it alone: the communicator's
// own wait limit bounds it). A failure fails the launch with the runner's message.
void opHccl(const sk_ascend_sim_core* c, const sk_ascend_sim_hccl_task* task) {
  Core& me = self(c);
  Launch& L = *me.launch;
  {
    std::unique_lock<std::mutex> lk(L.m);
    checkAbort(L);
    if (!L.spec->hccl) failAndAbort(L, fmt::format("Hccl task on {}: this launch has no communicator", me.label));
    me.inHccl = true;
  }
  std::string error;
  try {
    error = L.spec->hccl(*task, [&L] {
      std::lock_guard<std::mutex> g(L.m);
      return L.failed;
    });
  } catch (const std::exception& e) {
    error = fmt::format("Hccl task on {}: {}", me.label, e.what());
  }
  std::unique_lock<std::mutex> lk(L.m);
  me.inHccl = false;
  ++L.progress;
  L.cv.notify_all();
  if (!error.empty()) failAndAbort(L, error);
  checkAbort(L);
}

const sk_ascend_sim_ops kOps = {SK_ASCEND_SIM_ABI, opSet,   opWait,  opPipeBarrier, opDcci,
                                opPreload,         opDeclare, opTrap, opCycle,       vectorChecker(), opHccl};

// Calls entry with n GM_ADDR arguments, for every n up to kMaxArgs.
using Invoker = void (*)(void* entry, void* const* args);
template <size_t... I>
void invokeN(void* entry, void* const* args, std::index_sequence<I...>) {
  using Fn = void (*)(decltype((void)I, static_cast<uint8_t*>(nullptr))...);
  reinterpret_cast<Fn>(entry)(static_cast<uint8_t*>(args[I])...);
}
template <size_t N>
void invoke(void* entry, void* const* args) {
  invokeN(entry, args, std::make_index_sequence<N>{});
}
template <size_t... N>
constexpr std::array<Invoker, sizeof...(N)> makeInvokers(std::index_sequence<N...>) {
  return {&invoke<N>...};
}
const auto kInvokers = makeInvokers(std::make_index_sequence<kMaxArgs + 1>{});

void runCore(Launch& L, Core& me) {
  const LaunchSpec& spec = *L.spec;
  spec.enter(&me.abi);
  skew(me);
  try {
    kInvokers[spec.args.size()](spec.entry, spec.args.data());
  } catch (const Abort&) {
    // the launch already failed; this core just stops
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lk(L.m);
    fail(L, fmt::format("{} on {}: exception escaped the kernel: {}", spec.name, me.label, e.what()));
  } catch (...) {
    std::lock_guard<std::mutex> lk(L.m);
    fail(L, fmt::format("{} on {}: exception escaped the kernel", spec.name, me.label));
  }
  spec.enter(nullptr);
  std::lock_guard<std::mutex> lk(L.m);
  me.state = State::Done;
  ++L.finished;
  ++L.progress;
  checkDeadlock(L);
  L.cv.notify_all();
}

// What is left on the counters after every core returned: a set nobody waited
// for, or a set only some cores of a pool made.
std::string leftovers(const Launch& L) {
  std::string s;
  auto add = [&](std::string item) {
    if (!s.empty()) s += "; ";
    s += std::move(item);
  };
  for (const Core& c : L.cores) {
    for (uint32_t f = 0; f < kFlagIds; ++f) {
      if (c.count[f]) add(fmt::format("{} holds {} unconsumed set(s) of flag {}{}", c.label, c.count[f], f, flagName(f)));
      if (c.pend0[f]) add(fmt::format("{} made {} mode-0 set(s) of flag {}{} that not every {} core matched", c.label,
                                      c.pend0[f], f, flagName(f), c.aic ? "cube" : "vector"));
      if (c.pend1[f]) add(fmt::format("{} made {} mode-1 set(s) of flag {} its partner vector core never matched",
                                      c.label, c.pend1[f], f));
      if (c.pend2[f]) add(fmt::format("{} made {} mode-2 set(s) of flag {}{} the other vector core(s) of its AI Core "
                                      "never matched",
                                      c.label, c.pend2[f], f, flagName(f)));
    }
  }
  return s;
}

}  // namespace

const char* taskTypeName(TaskType t) {
  switch (t) {
    case TaskType::AivOnly: return "KERNEL_TYPE_AIV_ONLY";
    case TaskType::AicOnly: return "KERNEL_TYPE_AIC_ONLY";
    case TaskType::MixAiv1_0: return "KERNEL_TYPE_MIX_AIV_1_0";
    case TaskType::MixAic1_0: return "KERNEL_TYPE_MIX_AIC_1_0";
    case TaskType::MixAic1_1: return "KERNEL_TYPE_MIX_AIC_1_1";
    case TaskType::MixAic1_2: return "KERNEL_TYPE_MIX_AIC_1_2";
  }
  return "KERNEL_TYPE_?";
}

bool parseTaskType(std::string_view name, TaskType* out) {
  for (uint32_t i = 0; i <= 5; ++i) {
    const std::string_view full = taskTypeName(static_cast<TaskType>(i));
    if (name == full || name == full.substr(sizeof("KERNEL_TYPE_") - 1)) {
      *out = static_cast<TaskType>(i);
      return true;
    }
  }
  return false;
}

uint32_t aicCount(TaskType t, uint32_t blockDim) {
  return (t == TaskType::AivOnly || t == TaskType::MixAiv1_0) ? 0 : blockDim;
}

uint32_t aivCount(TaskType t, uint32_t blockDim) {
  switch (t) {
    case TaskType::AivOnly:
    case TaskType::MixAiv1_0:
    case TaskType::MixAic1_1: return blockDim;
    case TaskType::MixAic1_2: return 2 * blockDim;
    default: return 0;
  }
}

namespace {

// Blocks [first, first + count) of the launch, each on a core of its own, all at once (a mix launch: every
// block). The cores' block indices are first + their index in the wave.
Status runWave(const LaunchSpec& spec, uint32_t first, uint32_t count, uint32_t width, LaunchStats* stats) {
  Launch L;
  L.spec = &spec;
  L.start = std::chrono::steady_clock::now();
  L.nAic = aicCount(spec.type, count);
  L.nAiv = aivCount(spec.type, count);
  L.partialWave = count < spec.blockDim;
  L.waveWidth = width;
  L.aivPerGroup = L.nAic == 0 || L.nAiv == 0 ? 0 : L.nAiv / L.nAic;
  L.cores.resize(L.nAic + L.nAiv);
  const uint32_t subDim = L.aivPerGroup == 0 ? 1 : L.aivPerGroup;
  for (uint32_t i = 0; i < L.cores.size(); ++i) {
    Core& c = L.cores[i];
    c.launch = &L;
    c.index = i;
    c.aic = i < L.nAic;
    c.abi.ops = &kOps;
    c.abi.runtime = &c;
    c.abi.block_num = spec.blockDim;
    c.abi.runtime_values = spec.runtimeValues.data();
    c.abi.runtime_count = spec.numRuntimeValues;
    if (c.aic) {
      c.group = i;
      c.abi.core_type = SK_ASCEND_SIM_AIC;
      c.abi.block_idx = first + i;
      c.abi.subblock_id = 0;
      c.abi.subblock_dim = subDim;
      c.abi.core_id = i;
      c.label = fmt::format("AIC {}", first + i);
    } else {
      const uint32_t j = i - L.nAic;
      c.abi.core_type = SK_ASCEND_SIM_AIV;
      c.group = L.aivPerGroup ? j / L.aivPerGroup : j;
      c.abi.block_idx = first + c.group;
      c.abi.subblock_id = L.aivPerGroup ? j % L.aivPerGroup : 0;
      c.abi.subblock_dim = subDim;
      c.abi.core_id = j;
      c.label = L.aivPerGroup == 2 ? fmt::format("AIV {} (AI Core {}.{})", j, c.group, c.abi.subblock_id)
                                   : fmt::format("AIV {}", first + j);
    }
  }

  std::vector<std::thread> threads;
  threads.reserve(L.cores.size());
  for (Core& c : L.cores) threads.emplace_back([&L, &c] { runCore(L, c); });
  {
    std::unique_lock<std::mutex> lk(L.m);
    uint64_t seen = L.progress;
    auto last = std::chrono::steady_clock::now();
    while (L.finished < L.cores.size()) {
      L.cv.wait_for(lk, std::chrono::milliseconds(20));
      const auto now = std::chrono::steady_clock::now();
      if (L.progress != seen) {
        seen = L.progress;
        last = now;
        continue;
      }
      const bool anyRunning = std::any_of(L.cores.begin(), L.cores.end(),
                                          [](const Core& c) { return c.state == State::Running; });
      if (!L.failed && !anyRunning && now - last > spec.watchdog) {
        fail(L, fmt::format("watchdog: no core made progress for {} ms: {}", spec.watchdog.count(), describeStates(L)));
      }
    }
  }
  for (std::thread& t : threads) t.join();
  if (stats) *stats = L.stats;
  if (L.failed) return runtimeError(fmt::format("{} ({}, block dim {}): {}", spec.name, taskTypeName(spec.type),
                                                spec.blockDim, L.error));
  std::string left = leftovers(L);
  if (!left.empty()) {
    return runtimeError(fmt::format("{} ({}, block dim {}): flags left pending at the end of the launch (a set with no "
                                    "matching wait, or a set on only some cores): {}",
                                    spec.name, taskTypeName(spec.type), spec.blockDim, left));
  }
  return Status::success();
}

}  // namespace

Status launch(const LaunchSpec& spec, LaunchStats* stats) {
  if (spec.entry == nullptr || spec.enter == nullptr) return badInput(spec.name + ": no kernel entry or enter hook");
  if (spec.args.size() > kMaxArgs) {
    return badInput(fmt::format("{}: {} arguments; the simulator passes at most {}", spec.name, spec.args.size(),
                                kMaxArgs));
  }
  if (static_cast<uint32_t>(spec.type) > 5) return badInput(spec.name + ": unknown task type");
  if (spec.blockDim == 0 || spec.blockDim > 65535) {
    return badInput(fmt::format("{}: block dim {} (a launch has 1..65535 blocks)", spec.name, spec.blockDim));
  }
  if (spec.numRuntimeValues > spec.runtimeValues.size()) {
    return badInput(fmt::format("{}: {} runtime values; a launch passes at most {}", spec.name,
                                spec.numRuntimeValues, spec.runtimeValues.size()));
  }
  // A single-core-type launch runs its blocks in waves on the device's cores, as the hardware does; a mix
  // launch (a SuperKernel: cube and vector cores working together) needs every block at once.
  const bool single = spec.type == TaskType::AivOnly || spec.type == TaskType::AicOnly;
  const uint32_t resident = spec.residentBlocks ? spec.residentBlocks : spec.blockDim;
  if (!single && spec.blockDim > resident) {
    return badInput(fmt::format("{}: {} with block dim {}, but the device runs {} at once: a mix launch needs all "
                                "its blocks resident (plan it for this device's cores)",
                                spec.name, taskTypeName(spec.type), spec.blockDim, resident));
  }
  if (!single && spec.blockDim > 128) {
    return badInput(fmt::format("{}: {} blocks at once (the simulator runs 1..128 AI Cores)", spec.name, spec.blockDim));
  }
  // At most 128 cores at once: a wider device's single-core-type launch runs in waves of 128.
  const uint32_t wave = std::min({spec.blockDim, resident, 128u});
  LaunchStats total;
  for (uint32_t first = 0; first < spec.blockDim; first += wave) {
    LaunchStats s;
    Status st = runWave(spec, first, std::min(wave, spec.blockDim - first), wave, &s);
    total.sets += s.sets;
    total.waits += s.waits;
    total.preloads += s.preloads;
    total.dccis += s.dccis;
    if (s.declaredType != UINT32_MAX) total.declaredType = s.declaredType;
    if (!st) {
      if (stats) *stats = total;
      return st;
    }
  }
  if (stats) *stats = total;
  return Status::success();
}

}  // namespace sk::ascend_sim

namespace sk::ascend_sim {

Expected<Module> Module::load(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    return runtimeError(fmt::format("cannot load simulated kernels {}: {}", path, e ? e : "dlopen failed"));
  }
  void* enter = dlsym(h, "sk_ascend_sim_enter");
  if (enter == nullptr) {
    dlclose(h);
    return runtimeError(fmt::format("{} has no sk_ascend_sim_enter: not built against the simulator's "
                                    "kernel_operator.h",
                                    path));
  }
  return Module(h, reinterpret_cast<sk_ascend_sim_enter_fn>(enter), path);
}

Module::~Module() {
  if (handle_) dlclose(handle_);
}

Expected<void*> Module::entry(const std::string& symbol) const {
  void* f = dlsym(handle_, symbol.c_str());
  if (f == nullptr) return runtimeError(fmt::format("{} has no kernel entry {}", path_, symbol));
  return f;
}

}  // namespace sk::ascend_sim
