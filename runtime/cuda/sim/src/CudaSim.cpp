// The cuda simulator's engine (CudaSim.h). One launch at a time per calling
// thread; a launch runs to completion before ops()->launch returns.
//
// Shape, and why:
//  - a worker host thread per simultaneously resident CTA (min(grid, SMs));
//    workers take CTAs in blockIdx order as they free up, like a GPU's block
//    scheduler. CTAs of a persistent SuperKernel wait for each other, so they
//    must all be resident: the generated run() checks that (through
//    multiprocessors / ctas_per_sm) before launching, as on a GPU;
//  - each CUDA thread of a CTA is a fiber on its worker (a hand-written
//    switch on x86-64, ucontext elsewhere; see below). Fibers
//    switch only at __syncthreads, warp shuffles / __syncwarp and
//    __nanosleep, so everything between is sequential within a CTA and
//    every thread-local of the worker is CTA-local (__shared__ is
//    `static __thread`, sim_device.h);
//  - a scheduler per CTA runs every runnable fiber once per pass; a pass that
//    runs none while fibers are unfinished is a stuck barrier (threads of one
//    CTA waiting at different barriers, or some at a barrier the others
//    exited without reaching), an error naming where each thread is;
//  - sync-area waits (sk_wait_ge, sk_cta_sync) poll here, one thread per CTA
//    while the others wait at a barrier, yielding the host CPU: the watchdog
//    sees which word each CTA waits on when a launch hangs;
//  - a failed launch abandons its fibers where they are (their stacks are
//    reused, nothing on them is destroyed: the code on them is plain C);
//  - the launching thread is the watchdog (watch()): no progress for the
//    configured time fails the launch with what each CTA waits on;
//  - a collective (ops->collective, called by one thread of a CTA) runs on
//    the CTA's host thread, off the fiber's small stack: the fiber yields to
//    the scheduler, which calls the launching device's Collectives (its
//    communicator) and resumes the fiber when the exchange is done. The other
//    CTAs are other host threads and go on meanwhile (early start); the
//    CTA's other threads wait at the __syncthreads after the call.
#include "superkernel/cuda/CudaSim.h"

#include <sched.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#if defined(__SANITIZE_ADDRESS__)
#define SK_SIM_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define SK_SIM_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SK_SIM_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define SK_SIM_TSAN 1
#endif
#endif
#ifdef SK_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
// Fiber switches: ucontext's swapcontext saves the signal mask with a system
// call on every switch, which dominated the simulator's time (a decode-stack
// launch switches tens of millions of times). On x86-64 a switch is the six
// callee-saved registers and the stack pointer (sk_cuda_sim_switch below);
// the sanitizers' fiber annotations (toFiber / toScheduler) do not depend on
// how the switch is made. Other architectures, and CET shadow stacks
// (-fcf-protection=return, where a hand-made return would fault), keep
// ucontext.
#if defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2))
#define SK_SIM_FAST_SWITCH 1
extern "C" void sk_cuda_sim_switch(void** saveSp, void* newSp);
asm(R"(
  .text
  .globl sk_cuda_sim_switch
  .hidden sk_cuda_sim_switch
  .type sk_cuda_sim_switch,@function
sk_cuda_sim_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size sk_cuda_sim_switch, .-sk_cuda_sim_switch
)");
#endif
#ifdef SK_SIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace sk::cuda_sim {
namespace {

using Clock = std::chrono::steady_clock;

// Fiber stacks: 128 KiB of kernel frames is plenty for the decode kernels;
// the sanitizers' frames are larger. No guard pages (each would split the
// mapping, and a grid of 100k threads would exceed vm.max_map_count): a
// canary at the bottom of each stack, checked when its CTA ends, reports an
// overflow as an error of the launch.
#if defined(SK_SIM_ASAN) || defined(SK_SIM_TSAN)
constexpr size_t kStackBytes = 512 * 1024;
#else
constexpr size_t kStackBytes = 128 * 1024;
#endif

std::mutex gConfigMu;
Config gConfig;

thread_local std::string tLastError;

constexpr uint64_t kCanary = 0x5343414e41525953ull;  // "SCANARYS"
constexpr size_t kCanaryWords = 8;

// Reused fiber stacks (mmap with a guard page), process-wide.
class StackPool {
 public:
  void* take() {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!free_.empty()) {
        void* s = free_.back();
        free_.pop_back();
        return s;
      }
    }
    void* m = ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? nullptr : m;
  }
  void give(void* s) {
    std::lock_guard<std::mutex> g(mu_);
    free_.push_back(s);
  }

 private:
  std::mutex mu_;
  std::vector<void*> free_;
};

StackPool& stacks() {
  static StackPool* p = new StackPool();  // never destroyed: stacks may be in use at exit
  return *p;
}

struct Launch;

enum class FiberState { Ready, AtBarrier, AtWarp, Done };

struct Fiber {
#ifdef SK_SIM_FAST_SWITCH
  void* sp = nullptr;
#else
  ucontext_t ctx{};
#endif
  void* stack = nullptr;
  sk_cuda_sim_thread t{};
  FiberState state = FiberState::Ready;
  uint64_t waitGen = 0;
  bool started = false;
#ifdef SK_SIM_TSAN
  void* tsan = nullptr;
#endif
};

// One CTA being run by a worker. `abi` is what the code sees; abi.engine points back here.
struct Cta {
  sk_cuda_sim_cta abi{};
  Launch* launch = nullptr;
  std::vector<Fiber> fibers;
#ifdef SK_SIM_FAST_SWITCH
  void* schedSp = nullptr;
#else
  ucontext_t sched{};
#endif
  size_t cur = 0;
  uint32_t live = 0;
  uint32_t blockArrived = 0;
  uint64_t blockGen = 0;
  std::vector<uint32_t> warpArrived, warpLive;
  std::vector<const char*> warpOp;  // what the first lane of the current warp generation called
  std::vector<uint64_t> warpGen;
  std::vector<uint64_t> shfl;  // [warp][parity][32]
  std::vector<unsigned char> smem;
  uint32_t waits = 0;          // satisfied waits so far (skew factor)
  uint64_t linearIdx = 0;
  const sk_cuda_sim_collective_args* hostCall = nullptr;  // a collective the running fiber handed the scheduler
#ifdef SK_SIM_ASAN
  const void* schedBottom = nullptr;
  size_t schedSize = 0;
#endif
#ifdef SK_SIM_TSAN
  void* schedTsan = nullptr;
#endif
};

// What one CTA is waiting on, for the watchdog's report (written by its worker).
struct WaitRecord {
  std::atomic<const void*> addr{nullptr};
  std::atomic<uint64_t> target{0};
  std::atomic<int> kind{0};  // 0: none, 1: >= (u64), 2: != (u32), 3: in a collective
  std::atomic<int> state{0}; // 0: not started, 1: running, 2: done
  std::string collective;    // kind 3: what it runs (guarded by Launch::mu)
};

struct Launch {
  sk_cuda_sim_enter_fn enter = nullptr;
  void (*kernel)(void*) = nullptr;
  void* arg = nullptr;
  sk_cuda_sim_dim3 grid{}, block{};
  size_t smem = 0;
  uint64_t ctas = 0;
  uint32_t threads = 0;
  Config cfg;
  std::atomic<int64_t> lastProgressNs{0};  // a satisfied wait, a CTA that starts or finishes (the watchdog's clock)
  // Workers not yet running a CTA's threads: starting a host thread and setting up a CTA's fibers is finite work
  // that a loaded host (TSan, two cores) can stretch past the watchdog's limit; it is slowness, never a hang, so
  // the watchdog waits while any worker is in it. Starts at the worker count (a thread not yet scheduled).
  std::atomic<uint64_t> settingUp{0};
  std::atomic<uint64_t> next{0};
  std::mutex doneMu;
  std::condition_variable doneCv;
  uint64_t workersLeft = 0;
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string error;
  std::unique_ptr<WaitRecord[]> waitRecords;  // one per CTA (by linear index)
  const Collectives* collectives = nullptr;   // the launching thread's (CollectivesScope)
};

thread_local Cta* tCta = nullptr;  // the CTA this worker runs now
thread_local const Collectives* tCollectives = nullptr;  // CollectivesScope's, read by opLaunch

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

sk_cuda_sim_dim3 unflatten(uint64_t i, sk_cuda_sim_dim3 d) {
  return sk_cuda_sim_dim3{static_cast<unsigned>(i % d.x), static_cast<unsigned>((i / d.x) % d.y),
                          static_cast<unsigned>(i / (uint64_t(d.x) * d.y))};
}

std::string ctaName(const Cta& c) {
  const auto& b = c.abi.block_idx;
  if (c.abi.grid_dim.y == 1 && c.abi.grid_dim.z == 1) return fmt::format("CTA {}", b.x);
  return fmt::format("CTA ({}, {}, {})", b.x, b.y, b.z);
}

void fail(Launch& L, const std::string& what) {
  std::lock_guard<std::mutex> g(L.mu);
  if (L.error.empty()) L.error = what;
  L.failed.store(true, std::memory_order_release);
}

Cta& ctaOf(sk_cuda_sim_cta* c) { return *static_cast<Cta*>(c->engine); }

// ---- fiber switching ---------------------------------------------------------

// From the running fiber to the scheduler. `dying`: this fiber never resumes.
void toScheduler(Cta& c, bool dying) {
  Fiber& f = c.fibers[c.cur];
#ifdef SK_SIM_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(dying ? nullptr : &fake, c.schedBottom, c.schedSize);
#endif
#ifdef SK_SIM_TSAN
  __tsan_switch_to_fiber(c.schedTsan, 0);
#endif
  (void)dying;
#ifdef SK_SIM_FAST_SWITCH
  sk_cuda_sim_switch(&f.sp, c.schedSp);
#else
  ::swapcontext(&f.ctx, &c.sched);
#endif
#ifdef SK_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void toFiber(Cta& c, Fiber& f) {
#ifdef SK_SIM_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack, kStackBytes);
#endif
#ifdef SK_SIM_TSAN
  __tsan_switch_to_fiber(f.tsan, 0);
#endif
#ifdef SK_SIM_FAST_SWITCH
  sk_cuda_sim_switch(&c.schedSp, f.sp);
#else
  ::swapcontext(&c.sched, &f.ctx);
#endif
#ifdef SK_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

// A failed launch: leave this fiber where it is; the scheduler stops and
// never resumes it. Not [[noreturn]]: ASan would unpoison "the stack" before
// the call (__asan_handle_no_return), which on a fiber stack it does not
// know the bounds of fails its own check.
volatile bool gResumedAbandoned = false;  // never set: keeps the compiler from inferring noreturn

void abandon(Cta& c) {
  toScheduler(c, true);
  if (!gResumedAbandoned) std::abort();  // never resumed
}

void releaseBarriersAfterExit(Cta& c, const Fiber& f) {
  const uint32_t w = f.t.linear / 32;
  --c.warpLive[w];
  if (c.warpLive[w] > 0 && c.warpArrived[w] == c.warpLive[w]) {
    c.warpArrived[w] = 0;
    ++c.warpGen[w];
  }
  if (c.live > 0 && c.blockArrived == c.live) {
    c.blockArrived = 0;
    ++c.blockGen;
  }
}

void fiberMain() {
  Cta& c = *tCta;
#ifdef SK_SIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &c.schedBottom, &c.schedSize);
#endif
  c.launch->kernel(c.launch->arg);
  Fiber& f = c.fibers[c.cur];
  f.state = FiberState::Done;
  --c.live;
  releaseBarriersAfterExit(c, f);
  toScheduler(c, true);
  std::abort();  // a finished fiber is never resumed
}

bool runnable(const Cta& c, const Fiber& f) {
  switch (f.state) {
    case FiberState::Ready: return true;
    case FiberState::AtBarrier: return c.blockGen != f.waitGen;
    case FiberState::AtWarp: return c.warpGen[f.t.linear / 32] != f.waitGen;
    case FiberState::Done: return false;
  }
  return false;
}

std::string stuckReport(const Cta& c) {
  uint32_t atBarrier = 0, atWarp = 0, done = 0;
  for (const Fiber& f : c.fibers) {
    atBarrier += f.state == FiberState::AtBarrier;
    atWarp += f.state == FiberState::AtWarp;
    done += f.state == FiberState::Done;
  }
  return fmt::format(
      "{}: its threads cannot go on: {} wait at __syncthreads, {} at a warp shuffle or __syncwarp, {} have "
      "returned (every live thread of the CTA must reach the same barrier; kernels must not return early or sync "
      "in divergent code)",
      ctaName(c), atBarrier, atWarp, done);
}

void skew(Cta& c);

// The collective the running fiber handed over (opCollective), on this host thread's own stack: through the
// launching device's Collectives, recorded for the watchdog's report while it runs. A failure fails the launch.
void runCollective(Cta& c) {
  Launch& L = *c.launch;
  const sk_cuda_sim_collective_args* args = c.hostCall;
  c.hostCall = nullptr;
  if (L.failed.load(std::memory_order_acquire)) return;
  if (!L.collectives || !L.collectives->run) {
    fail(L, fmt::format("{}: a collective op ran in a launch made without a communicator (the cuda-sim device runs "
                        "collectives over its Session's communicator: docs/COLLECTIVES.md)",
                        ctaName(c)));
    return;
  }
  WaitRecord& rec = L.waitRecords[c.linearIdx];
  {
    std::string what = L.collectives->name ? L.collectives->name(*args) : std::string("a collective op");
    std::lock_guard<std::mutex> g(L.mu);
    rec.collective = std::move(what);
  }
  rec.kind.store(3, std::memory_order_release);
  const std::string error = L.collectives->run(*args, [&L] { return L.failed.load(std::memory_order_acquire); });
  rec.kind.store(0, std::memory_order_release);
  L.lastProgressNs.store(nowNs(), std::memory_order_relaxed);
  if (!error.empty()) fail(L, error);
  ++c.waits;
  skew(c);
}

// Runs the CTA's fibers to completion (or until the launch fails). Passes
// alternate direction, so which thread runs first after a barrier changes:
// a shared-memory read that lacks its __syncthreads sees the write on one
// pass and not on the next, instead of always being lucky.
void schedule(Cta& c) {
  bool down = false;
  const size_t n = c.fibers.size();
  while (c.live > 0) {
    if (c.launch->failed.load(std::memory_order_acquire)) return;
    bool ran = false;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = down ? n - 1 - k : k;
      Fiber& f = c.fibers[i];
      if (!runnable(c, f)) continue;
      f.state = FiberState::Ready;
      c.cur = i;
      c.abi.current = &f.t;
      toFiber(c, f);
      ran = true;
      if (c.hostCall) runCollective(c);
      if (c.launch->failed.load(std::memory_order_acquire)) return;
    }
    down = !down;
    if (!ran) {
      fail(*c.launch, stuckReport(c));
      return;
    }
  }
}

void skew(Cta& c) {
  const uint32_t us = c.launch->cfg.skewMicros;
  if (!us) return;
  const uint64_t factor = (c.linearIdx * 7 + c.waits) % 4;
  if (factor) std::this_thread::sleep_for(std::chrono::microseconds(us * factor));
}

// ---- ops ---------------------------------------------------------------------

void opSyncThreads(sk_cuda_sim_cta* a) {
  Cta& c = ctaOf(a);
  Fiber& f = c.fibers[c.cur];
  if (++c.blockArrived == c.live) {  // the last one: everybody goes on
    c.blockArrived = 0;
    ++c.blockGen;
    return;
  }
  f.waitGen = c.blockGen;
  f.state = FiberState::AtBarrier;
  toScheduler(c, false);
  if (c.launch->failed.load(std::memory_order_acquire)) abandon(c);
}

uint32_t warpLanes(const Cta& c, uint32_t w) {
  const uint32_t t = c.launch->threads;
  return std::min<uint32_t>(32, t - 32 * w);
}

void checkMask(Cta& c, uint32_t mask, const char* what) {
  const uint32_t w = c.fibers[c.cur].t.linear / 32;
  const uint32_t lanes = warpLanes(c, w);
  const uint32_t all = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
  if ((mask & all) == all) return;
  fail(*c.launch, fmt::format("{} thread {}: {} with mask {:#x}: the simulator runs warp operations only with every "
                              "lane of the warp ({:#x})",
                              ctaName(c), c.fibers[c.cur].t.linear, what, mask, all));
  abandon(c);
}

// Arrive at the warp barrier for `op` (every lane of one generation must call the same kind of operation:
// lanes split between a shuffle and __syncwarp would otherwise release together and read stale slots).
void warpArrive(Cta& c, const char* op) {
  Fiber& f = c.fibers[c.cur];
  const uint32_t w = f.t.linear / 32;
  if (c.warpArrived[w] == 0) {
    c.warpOp[w] = op;
  } else if (c.warpOp[w] != op) {
    fail(*c.launch, fmt::format("{} warp {}: lanes wait at different warp operations ({} and {}): every lane of a "
                                "warp must reach the same one",
                                ctaName(c), w, c.warpOp[w], op));
    abandon(c);
  }
  const uint64_t gen = c.warpGen[w];
  if (++c.warpArrived[w] == c.warpLive[w]) {
    c.warpArrived[w] = 0;
    ++c.warpGen[w];
    return;
  }
  f.waitGen = gen;
  f.state = FiberState::AtWarp;
  toScheduler(c, false);
  if (c.launch->failed.load(std::memory_order_acquire)) abandon(c);
}

void opSyncWarp(sk_cuda_sim_cta* a, uint32_t mask) {
  Cta& c = ctaOf(a);
  checkMask(c, mask, "__syncwarp");
  warpArrive(c, "__syncwarp");
}

// Slots alternate by generation parity: a lane can write the next shuffle's
// slot only after every lane passed this one's barrier, i.e. after all read.
uint64_t opShfl(sk_cuda_sim_cta* a, uint32_t mask, uint64_t value, uint32_t src) {
  Cta& c = ctaOf(a);
  checkMask(c, mask, "a warp shuffle");
  const Fiber& f = c.fibers[c.cur];
  const uint32_t w = f.t.linear / 32, lane = f.t.linear % 32;
  uint64_t* slots = &c.shfl[(w * 2 + (c.warpGen[w] & 1)) * 32];
  slots[lane] = value;
  warpArrive(c, "a warp shuffle");
  return src < warpLanes(c, w) ? slots[src] : value;
}

// What every unfinished CTA is doing (the watchdog's report).
std::string hangReport(Launch& L) {
  std::string report = fmt::format(
      "the launch made no progress for {} ms (no wait satisfied, no CTA finished: a wait that is never satisfied, "
      "CTAs that are not all resident, or a thread spinning without __nanosleep)",
      L.cfg.watchdog.count());
  uint64_t notStarted = 0;
  for (uint64_t i = 0; i < L.ctas; ++i) {
    const WaitRecord& r = L.waitRecords[i];
    const int st = r.state.load(std::memory_order_acquire), k = r.kind.load(std::memory_order_acquire);
    notStarted += st == 0;
    if (st != 1) continue;
    if (k == 0) {
      report += fmt::format("; CTA {} is running (not in a sync-area wait)", i);
    } else if (k == 3) {
      std::lock_guard<std::mutex> g(L.mu);
      report += fmt::format("; CTA {} runs {} (waiting for the other ranks)", i, r.collective);
    } else {
      const void* p = r.addr.load(std::memory_order_relaxed);
      const uint64_t now = k == 1 ? __atomic_load_n(static_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE)
                                  : __atomic_load_n(static_cast<const uint32_t*>(p), __ATOMIC_ACQUIRE);
      report += fmt::format("; CTA {} waits for the word at {} to be {} {} (it is {})", i, p, k == 1 ? ">=" : "!=",
                            r.target.load(std::memory_order_relaxed), now);
    }
  }
  // Counted, not listed: a grid of thousands would otherwise bury the CTAs that do wait.
  if (notStarted)
    report += fmt::format("; {} of {} CTAs have not started (every simulated multiprocessor is busy)", notStarted,
                          L.ctas);
  return report;
}

template <class Ready>
void poll(Cta& c, const void* addr, uint64_t target, int kind, Ready ready) {
  if (!ready()) {
    Launch& L = *c.launch;
    WaitRecord& rec = L.waitRecords[c.linearIdx];
    rec.addr.store(addr, std::memory_order_relaxed);
    rec.target.store(target, std::memory_order_relaxed);
    rec.kind.store(kind, std::memory_order_release);
    uint64_t spins = 0;
    while (!ready()) {
      if (L.failed.load(std::memory_order_acquire)) abandon(c);
      ++spins;
      if (spins < 64) {
        ::sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    rec.kind.store(0, std::memory_order_release);
    L.lastProgressNs.store(nowNs(), std::memory_order_relaxed);
  }
  ++c.waits;
  skew(c);
}

void opWaitGe(sk_cuda_sim_cta* a, const unsigned long long* p, unsigned long long target) {
  Cta& c = ctaOf(a);
  poll(c, p, target, 1, [&] { return __atomic_load_n(p, __ATOMIC_ACQUIRE) >= target; });
}

void opWaitNe(sk_cuda_sim_cta* a, const unsigned int* p, unsigned int value) {
  Cta& c = ctaOf(a);
  poll(c, p, value, 2, [&] { return __atomic_load_n(p, __ATOMIC_ACQUIRE) != value; });
}

// Other threads of the CTA run first (the sleeper stays runnable), then the host CPU is offered to other CTAs.
void opNanosleep(sk_cuda_sim_cta* a, unsigned) {
  Cta& c = ctaOf(a);
  Launch& L = *c.launch;
  if (L.failed.load(std::memory_order_acquire)) abandon(c);
  c.fibers[c.cur].state = FiberState::Ready;
  toScheduler(c, false);
  if (L.failed.load(std::memory_order_acquire)) abandon(c);
  ::sched_yield();
}

uint64_t opGlobaltimer(sk_cuda_sim_cta*) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

void opTrap(sk_cuda_sim_cta* a, const char* what) {
  Cta& c = ctaOf(a);
  fail(*c.launch, fmt::format("{} thread {}: {}", ctaName(c), c.fibers[c.cur].t.linear, what ? what : "trap"));
  abandon(c);
}

// One thread of the CTA hands the collective to the scheduler (runCollective) and resumes when it is done.
int opCollective(sk_cuda_sim_cta* a, const sk_cuda_sim_collective_args* args) {
  Cta& c = ctaOf(a);
  Launch& L = *c.launch;
  if (L.failed.load(std::memory_order_acquire)) abandon(c);
  c.hostCall = args;
  c.fibers[c.cur].state = FiberState::Ready;
  toScheduler(c, false);
  if (L.failed.load(std::memory_order_acquire)) abandon(c);
  return 0;
}

int opMultiprocessors() { return static_cast<int>(config().multiprocessors); }

int opCtasPerSm(unsigned threads, size_t smem) {
  return threads >= 1 && threads <= kMaxThreads && smem <= kMaxDynamicSmem ? 1 : 0;
}

// A fresh fiber that starts in fiberMain. Its own frame: getcontext returns
// twice, which must not clobber the caller's locals.
__attribute__((noinline)) void initFiber(Fiber& f) {
#ifdef SK_SIM_ASAN
  // A reused stack keeps the shadow of the frames an abandoned fiber left on it (ucontext's interceptors clear
  // it; a hand-made switch must).
  __asan_unpoison_memory_region(f.stack, kStackBytes);
#endif
#ifdef SK_SIM_FAST_SWITCH
  // The first switch pops six zero registers and returns into fiberMain as
  // if called (the stack 16-byte aligned before the call's return address).
  auto* top = reinterpret_cast<void**>(static_cast<char*>(f.stack) + kStackBytes - 64);
  for (int r = 0; r < 6; ++r) top[r] = nullptr;
  top[6] = reinterpret_cast<void*>(&fiberMain);
  top[7] = nullptr;
  f.sp = top;
#else
  ::getcontext(&f.ctx);
  f.ctx.uc_stack.ss_sp = f.stack;
  f.ctx.uc_stack.ss_size = kStackBytes;
  f.ctx.uc_link = nullptr;
  ::makecontext(&f.ctx, fiberMain, 0);
#endif
}

// Runs CTA `index` of the launch on this worker.
void runCta(Launch& L, uint64_t index, std::vector<void*>& myStacks) {
  // Ends this worker's setup (see Launch::settingUp) when the CTA's threads start, or when setting up fails.
  struct SetupDone {
    Launch& L;
    bool done = false;
    void operator()() {
      if (!done) L.settingUp.fetch_sub(1, std::memory_order_acq_rel);
      done = true;
    }
    ~SetupDone() { (*this)(); }
  } setupDone{L};
  Cta c;
  c.launch = &L;
  c.linearIdx = index;
  c.abi.ops = ops();
  c.abi.engine = &c;
  c.abi.block_idx = unflatten(index, L.grid);
  c.abi.grid_dim = L.grid;
  c.abi.block_dim = L.block;
  if (L.smem) {
    c.smem.assign(L.smem + 16, 0);
    auto p = reinterpret_cast<uintptr_t>(c.smem.data());
    c.abi.dynamic_smem = reinterpret_cast<void*>((p + 15) & ~uintptr_t(15));
  }
  const uint32_t n = L.threads, warps = (n + 31) / 32;
  c.fibers.resize(n);
  c.live = n;
  c.warpArrived.assign(warps, 0);
  c.warpGen.assign(warps, 0);
  c.warpOp.assign(warps, nullptr);
  c.warpLive.resize(warps);
  for (uint32_t w = 0; w < warps; ++w) c.warpLive[w] = warpLanes(c, w);
  c.shfl.assign(size_t(warps) * 64, 0);
  while (myStacks.size() < n) {
    void* s = stacks().take();
    if (!s) {
      fail(L, fmt::format("{}: cannot map a fiber stack of {} bytes for each of its {} threads", ctaName(c),
                          kStackBytes, n));
      return;
    }
    myStacks.push_back(s);
  }
  tCta = &c;
  L.enter(&c.abi);
#ifdef SK_SIM_TSAN
  c.schedTsan = __tsan_get_current_fiber();
#endif
  for (uint32_t i = 0; i < n; ++i) {
    Fiber& f = c.fibers[i];
    f.stack = myStacks[i];
    f.t.linear = i;
    f.t.idx = unflatten(i, L.block);
    initFiber(f);
#ifdef SK_SIM_TSAN
    f.tsan = __tsan_create_fiber(0);
#endif
  }
  for (uint32_t i = 0; i < n; ++i)
    for (size_t k = 0; k < kCanaryWords; ++k) static_cast<uint64_t*>(myStacks[i])[k] = kCanary;
  L.waitRecords[index].state.store(1, std::memory_order_release);
  L.lastProgressNs.store(nowNs(), std::memory_order_relaxed);
  setupDone();
  skew(c);
  schedule(c);
  L.waitRecords[index].state.store(2, std::memory_order_release);
  L.lastProgressNs.store(nowNs(), std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i)
    if (static_cast<const uint64_t*>(myStacks[i])[0] != kCanary) {
      fail(L, fmt::format("{} thread {} overflowed its {}-byte simulator stack (deep recursion or large local "
                          "arrays in device code)",
                          ctaName(c), i, kStackBytes));
      break;
    }
#ifdef SK_SIM_TSAN
  for (Fiber& f : c.fibers) __tsan_destroy_fiber(f.tsan);
#endif
  L.enter(nullptr);
  tCta = nullptr;
}

void worker(Launch& L) {
  std::vector<void*> myStacks;
  bool counted = true;  // Launch::settingUp counts this worker from its start until its first CTA runs
  for (;;) {
    const uint64_t i = L.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= L.ctas || L.failed.load(std::memory_order_acquire)) break;
    if (!counted) L.settingUp.fetch_add(1, std::memory_order_acq_rel);
    runCta(L, i, myStacks);  // ends the count
    counted = false;
  }
  if (counted) L.settingUp.fetch_sub(1, std::memory_order_acq_rel);
  for (void* s : myStacks) stacks().give(s);
  std::lock_guard<std::mutex> g(L.doneMu);
  if (--L.workersLeft == 0) L.doneCv.notify_all();
}

// The launch's own thread is its watchdog: no progress (a satisfied wait, a
// CTA that starts or finishes; setting one up does not count against it)
// for Config::watchdog fails the launch with what every CTA
// waits on; CTAs in a sync-area wait or __nanosleep then stop. A CTA that
// spins without either cannot be stopped: after a grace period the report
// goes to Config::onHang (the tools print it and exit), or is printed before
// the process aborts, as the cpu executor's watchdog does.
void watch(Launch& L) {
  using namespace std::chrono;
  const int64_t limit = duration_cast<nanoseconds>(L.cfg.watchdog).count();
  const int64_t grace = duration_cast<nanoseconds>(seconds(2)).count();
  int64_t failedAt = 0;
  bool told = false;
  std::unique_lock<std::mutex> lk(L.doneMu);
  while (L.workersLeft > 0) {
    L.doneCv.wait_for(lk, milliseconds(20));
    if (L.workersLeft == 0) break;
    const int64_t now = nowNs();
    if (!L.failed.load(std::memory_order_acquire)) {
      if (L.settingUp.load(std::memory_order_acquire) > 0) continue;  // its end stores lastProgressNs
      if (now - L.lastProgressNs.load(std::memory_order_relaxed) <= limit) continue;
      lk.unlock();
      fail(L, hangReport(L));
      lk.lock();
    }
    if (!failedAt) failedAt = now;
    if (told || now - failedAt < grace) continue;
    told = true;
    std::string report;
    {
      std::lock_guard<std::mutex> g(L.mu);
      report = L.error;
    }
    report = "a simulated cuda launch failed and some of its CTAs never return (a thread spinning without "
             "__nanosleep cannot be stopped): " + report;
    lk.unlock();
    if (L.cfg.onHang) {
      L.cfg.onHang(report);
    } else {
      std::fprintf(stderr, "superkernel cuda simulator: %s\n", report.c_str());
      std::abort();
    }
    lk.lock();
  }
}

int opLaunch(sk_cuda_sim_enter_fn enter, sk_cuda_sim_dim3 grid, sk_cuda_sim_dim3 block, size_t smem,
             void (*kernel)(void*), void* arg) {
  tLastError.clear();
  const uint64_t ctas = uint64_t(grid.x) * grid.y * grid.z;
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (!enter || !kernel || ctas == 0 || ctas > kMaxCtas || threads == 0 || threads > kMaxThreads ||
      smem > kMaxDynamicSmem) {
    tLastError = fmt::format("invalid launch: grid ({}, {}, {}), block ({}, {}, {}), {} bytes of dynamic shared memory "
                             "(the simulator runs 1..{} CTAs of 1..{} threads and at most {} bytes)",
                             grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, kMaxCtas, kMaxThreads,
                             kMaxDynamicSmem);
    return SK_CUDA_SIM_ERR_INVALID_VALUE;
  }
  Launch L;
  L.enter = enter;
  L.kernel = kernel;
  L.arg = arg;
  L.grid = grid;
  L.block = block;
  L.smem = smem;
  L.ctas = ctas;
  L.threads = static_cast<uint32_t>(threads);
  L.cfg = config();
  L.collectives = tCollectives;
  L.lastProgressNs.store(nowNs(), std::memory_order_relaxed);
  L.waitRecords = std::make_unique<WaitRecord[]>(ctas);
  const uint64_t workers = std::min<uint64_t>(ctas, std::max<uint32_t>(1, L.cfg.multiprocessors));
  std::vector<std::thread> pool;
  L.workersLeft = workers;
  L.settingUp.store(workers, std::memory_order_release);
  for (uint64_t w = 0; w < workers; ++w) {
    try {
      pool.emplace_back(worker, std::ref(L));
    } catch (const std::exception& e) {
      fail(L, fmt::format("cannot start a host thread per resident CTA ({} of them): {}", workers, e.what()));
      L.settingUp.fetch_sub(workers - w, std::memory_order_acq_rel);
      std::lock_guard<std::mutex> g(L.doneMu);
      L.workersLeft -= workers - w;
      break;
    }
  }
  watch(L);
  for (auto& t : pool) t.join();
  if (L.failed.load(std::memory_order_acquire)) {
    tLastError = L.error;
    return SK_CUDA_SIM_ERR_LAUNCH_FAILURE;
  }
  return 0;
}

const sk_cuda_sim_ops kOps = {
    SK_CUDA_SIM_ABI, opSyncThreads, opSyncWarp, opShfl, opWaitGe, opWaitNe, opNanosleep,
    opGlobaltimer, opTrap, opLaunch, opMultiprocessors, opCtasPerSm, opCollective,
};

}  // namespace

void setConfig(const Config& c) {
  std::lock_guard<std::mutex> g(gConfigMu);
  gConfig = c;
}

Config config() {
  std::lock_guard<std::mutex> g(gConfigMu);
  return gConfig;
}

const sk_cuda_sim_ops* ops() { return &kOps; }

std::string lastLaunchError() { return tLastError; }

CollectivesScope::CollectivesScope(const Collectives* c) : previous_(tCollectives) { tCollectives = c; }
CollectivesScope::~CollectivesScope() { tCollectives = previous_; }

}  // namespace sk::cuda_sim
