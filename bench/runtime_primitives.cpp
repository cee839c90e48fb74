// Cost of the cpu runtime's primitives (DESIGN section 8 budgets):
//   BM_Barrier     one all-core barrier (sk_barrier) across W cores
//   BM_CounterWait one arrive + wait hand-off, ping-pong between two cores
//                  (time per one-way hand-off)
//   BM_FlagWait    one flag set + wait hand-off, ping-pong (per hand-off)
//   BM_Launch      one Executor::launch of W empty blocks
// W = hardware threads. Each iteration batch runs inside one runCores so
// the launch cost is not counted in the primitive's.
#include <benchmark/benchmark.h>

#include "superkernel/runtime/Executor.h"

namespace {

constexpr int kInner = 2000;  // primitives per runCores

sk::Executor& executor() {
  static sk::Executor ex({sk::hardwareThreads(), 10000});
  return ex;
}

struct State {
  const sk_services* s;
  sk_counter a{}, b{};
  uint32_t cores = 0;
  uint64_t round = 0;
};

void BM_Barrier(benchmark::State& st) {
  auto& ex = executor();
  State sh;
  sh.s = ex.services();
  sh.cores = ex.numWorkers();
  for (auto _ : st) {
    (void)ex.runCores(sh.cores, [](void* p, uint32_t) {
      auto* s = static_cast<State*>(p);
      for (int i = 1; i <= kInner; ++i) (void)sk_barrier(s->s, &s->a, s->cores, s->round * kInner + i, "bench");
    }, &sh);
    ++sh.round;
  }
  st.SetItemsProcessed(st.iterations() * kInner);
  st.counters["ns_per_barrier"] = benchmark::Counter(double(st.iterations()) * kInner,
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["workers"] = sh.cores;
}

template <bool Flag>
void pingPong(benchmark::State& st) {
  auto& ex = executor();
  if (ex.numWorkers() < 2) {
    st.SkipWithError("needs 2 workers");
    return;
  }
  State sh;
  sh.s = ex.services();
  for (auto _ : st) {
    (void)ex.runCores(2, [](void* p, uint32_t core) {
      auto* s = static_cast<State*>(p);
      const uint64_t base = s->round * kInner;
      for (int i = 1; i <= kInner; ++i) {
        if (core == 0) {
          if (Flag) sk_flag_set(s->s, &s->a, base + i); else sk_counter_arrive(s->s, &s->a);
          (void)sk_wait_ge(s->s, &s->b, base + i, "pong");
        } else {
          (void)sk_wait_ge(s->s, &s->a, base + i, "ping");
          if (Flag) sk_flag_set(s->s, &s->b, base + i); else sk_counter_arrive(s->s, &s->b);
        }
      }
    }, &sh);
    ++sh.round;
  }
  // Two hand-offs per round trip.
  st.counters["ns_per_wait"] = benchmark::Counter(double(st.iterations()) * kInner * 2,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_CounterWait(benchmark::State& st) { pingPong<false>(st); }
void BM_FlagWait(benchmark::State& st) { pingPong<true>(st); }

void BM_Launch(benchmark::State& st) {
  auto& ex = executor();
  const uint32_t w = ex.numWorkers();
  for (auto _ : st) (void)ex.launch([](void*, const sk_ctx*) {}, nullptr, w);
  st.counters["workers"] = w;
}

BENCHMARK(BM_Barrier)->UseRealTime();
BENCHMARK(BM_CounterWait)->UseRealTime();
BENCHMARK(BM_FlagWait)->UseRealTime();
BENCHMARK(BM_Launch)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
