// Random differential testing (issue 10): a seeded generator of valid op lists
// against an independent reference of the final buffers.
//
// The generator draws a program of launches over a few f32 buffers: whole
// buffers and views, in-place ops and WAR/WAW/RAW hazards, block dims from 1
// to more blocks than elements, two streams (events are inserted wherever
// the streams touch the same buffer, so the list is race-free and its result
// is that of running it in list order), scopes with breaks, never-fuse and
// unfusible ops, an early-start kernel and a kernel_sync kernel, static-shape
// macros and random list and scope option mixes. The reference runs the
// launches one after another in list order with its own implementation of
// each kernel's math: nothing of the planner, codegen or executor.
//
// A failure prints the seed and a minimised op list (launches removed while
// the failure persists; events are re-derived, so it stays valid), also
// written to <build>/tests/fuzz-diff-<seed>.json.
//
// SK_FUZZ_SEEDS (default 4) lists run from SK_FUZZ_SEED_BASE (default 1);
// scripts/fuzz-diff.sh N runs many.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <random>

#include "session/SessionFixture.h"
#include "superkernel/superkernel.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using testing::msg;

constexpr uint32_t kWorkers = 4;

enum class K { Add, Mul, Scale, Copy, Inc, Gather, EsAdd, KsSum };
struct KernelInfo {
  const char* name;
  int reads, writes;  // buffer args: reads first, then writes (Inc: one readwrite)
  bool readsAll;      // its reads are "partition": "all": never in place
};
const KernelInfo& info(K k) {
  static const KernelInfo t[] = {{"add", 2, 1, false},   {"mul", 2, 1, false},   {"scale", 1, 1, false},
                                 {"copy", 1, 1, false},  {"inc", 0, 1, false},   {"gather", 1, 1, true},
                                 {"es_add", 2, 1, false}, {"ks_sum", 1, 2, true}};
  return t[static_cast<int>(k)];
}

struct Region {
  int buffer;
  uint64_t offset, count;
  bool overlaps(const Region& o) const {
    return buffer == o.buffer && offset < o.offset + o.count && o.offset < offset + count;
  }
  bool operator==(const Region& o) const { return buffer == o.buffer && offset == o.offset && count == o.count; }
};

struct Launch {
  K kernel;
  uint32_t blockDim = 1;
  uint32_t stream = 0;
  std::string scope;  // "" absent, "~" null
  bool fusible = true;
  bool staticShape = false;
  float alpha = 1.0f;
  std::vector<Region> args;  // in the kernel's parameter order (Inc: x; KsSum: x, partial, y)
  uint64_t n = 0;
  std::vector<Region> writes() const {
    const KernelInfo& ki = info(kernel);
    if (kernel == K::Inc) return {args[0]};
    return std::vector<Region>(args.begin() + ki.reads, args.end());
  }
  std::vector<Region> reads() const {
    if (kernel == K::Inc) return {args[0]};
    return std::vector<Region>(args.begin(), args.begin() + info(kernel).reads + (kernel == K::KsSum ? 1 : 0));
  }
};

struct Program {
  std::vector<uint64_t> sizes;
  std::vector<std::vector<float>> init;
  std::vector<Launch> launches;
  std::string options;
  std::map<std::string, std::string> scopeOptions;
  std::vector<std::pair<size_t, uint32_t>> extraSyncs;  // (before launch i, record on other stream, wait on this)
};

// ---- generation ------------------------------------------------------------

std::string randomOptions(std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<std::string> kv;
  if (pick(2)) kv.push_back(fmt::format("early-start={}", pick(3)));
  if (pick(2)) kv.push_back(std::string("preload-code=") + (const char*[]){"none", "per-func", "max"}[pick(3)]);
  if (pick(2)) kv.push_back(fmt::format("stream-fusion={}", pick(2)));
  if (pick(3) == 0) kv.push_back(fmt::format("func-align={}", (int[]){0, 16, 512}[pick(3)]));
  if (pick(4) == 0) kv.push_back("feed-sync-all=1");
  if (pick(5) == 0) kv.push_back("debug-sync-all=1");
  if (pick(5) == 0) kv.push_back(fmt::format("split-mode={}", 1 + pick(2)));
  std::string s;
  for (const auto& x : kv) s += (s.empty() ? "" : ":") + x;
  return s;
}

Program generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  Program p;
  const uint64_t sizeChoices[] = {1, 3, 5, 16, 33, 64, 100};
  const size_t numBuffers = 3 + pick(4);
  for (size_t b = 0; b < numBuffers; ++b) {
    p.sizes.push_back(sizeChoices[pick(7)]);
    std::vector<float> v(p.sizes.back());
    for (float& x : v) x = static_cast<float>(static_cast<int>(pick(33)) - 16) / 8.0f;
    p.init.push_back(std::move(v));
  }
  p.options = randomOptions(rng);
  for (const char* s : {"s0", "s1"})
    if (pick(2)) p.scopeOptions[s] = randomOptions(rng);
  const bool twoStreams = pick(3) != 0;
  const size_t numLaunches = 2 + pick(7);
  for (size_t li = 0; li < numLaunches; ++li) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      Launch l;
      l.kernel = static_cast<K>(pick(8));
      const KernelInfo& ki = info(l.kernel);
      const int numArgs = l.kernel == K::Inc ? 1 : ki.reads + ki.writes;
      // n fits the smallest chosen buffer: draw buffers first.
      std::vector<int> bufs;
      for (int a = 0; a < numArgs; ++a) bufs.push_back(static_cast<int>(pick(numBuffers)));
      uint64_t maxN = UINT64_MAX;
      for (int a = 0; a < numArgs; ++a)
        if (!(l.kernel == K::KsSum && a == 1)) maxN = std::min(maxN, p.sizes[bufs[a]]);
      l.n = 1 + pick(maxN);
      l.blockDim = l.kernel == K::KsSum ? 1 + static_cast<uint32_t>(pick(2)) : 1 + static_cast<uint32_t>(pick(12));
      bool ok = true;
      for (int a = 0; a < numArgs; ++a) {
        const uint64_t count = (l.kernel == K::KsSum && a == 1) ? l.blockDim : l.n;
        if (count > p.sizes[bufs[a]]) {
          ok = false;
          break;
        }
        const uint64_t offset = pick(3) == 0 ? 0 : pick(p.sizes[bufs[a]] - count + 1);
        l.args.push_back(Region{bufs[a], offset, count});
      }
      if (!ok) continue;
      // Within one launch a written region is disjoint from every other
      // argument, or (elementwise kernels) exactly the same region: in place.
      auto w = l.writes();
      if (l.kernel != K::Inc) {
        const size_t firstWrite = static_cast<size_t>(ki.reads);
        for (size_t wi = firstWrite; wi < l.args.size() && ok; ++wi)
          for (size_t a = 0; a < l.args.size() && ok; ++a) {
            if (a == wi || !l.args[a].overlaps(l.args[wi])) continue;
            const bool inPlace = a < firstWrite && !ki.readsAll && l.args[a] == l.args[wi];
            if (!inPlace) ok = false;
          }
      }
      if (!ok) continue;
      l.stream = twoStreams ? static_cast<uint32_t>(pick(2)) : 0;
      const size_t sc = pick(20);
      l.scope = sc < 7 ? "s0" : sc < 14 ? "s1" : sc < 17 ? "" : "~";
      l.fusible = pick(20) != 0;
      l.staticShape = pick(4) == 0 && l.kernel != K::Inc && l.kernel != K::Gather && l.kernel != K::EsAdd &&
                      l.kernel != K::KsSum;
      l.alpha = static_cast<float>(1 + pick(4)) * 0.5f;
      p.launches.push_back(std::move(l));
      break;
    }
    if (twoStreams && pick(4) == 0) p.extraSyncs.emplace_back(p.launches.size(), static_cast<uint32_t>(pick(2)));
  }
  return p;
}

// ---- the op list -------------------------------------------------------------

fs::path kernelDir() { return testing::sessionDataDir() / "kernels"; }

std::string argJson(const Program& p, const Region& r) {
  if (r.offset == 0 && r.count == p.sizes[r.buffer]) return fmt::format("\"b{}\"", r.buffer);
  return fmt::format("{{\"buffer\": \"b{}\", \"offset\": {}, \"count\": {}}}", r.buffer, r.offset, r.count);
}

std::string render(const Program& p) {
  auto decl = [](const char* src, const char* entry, std::vector<std::string> params, const char* extra) {
    std::string ps;
    for (auto& s : params) ps += (ps.empty() ? "" : ", ") + s;
    return fmt::format(R"({{"source": "{}", "entry": "{}", {}"params": [{}]}})", (kernelDir() / src).string(), entry,
                       extra, ps);
  };
  auto buf = [](const char* n, const char* acc, const char* part) {
    return fmt::format(R"({{"name": "{}", "kind": "buffer", "dtype": "f32", "access": "{}", "partition": "{}"}})", n,
                       acc, part);
  };
  const std::string nParam = R"({"name": "n", "kind": "scalar", "dtype": "i64"})";
  std::string j = "{\"format\": \"superkernel.oplist\", \"version\": 1,\n \"options\": \"" + p.options + "\",\n";
  j += " \"kernels\": {\"add\": {\"builtin\": \"add_f32\"}, \"mul\": {\"builtin\": \"mul_f32\"}, \"scale\": "
       "{\"builtin\": \"scale_f32\"}, \"copy\": {\"builtin\": \"copy_f32\"},\n  \"inc\": " +
       decl("inc.cpp", "fx_inc", {buf("x", "readwrite", "block"), nParam}, "") + ",\n  \"gather\": " +
       decl("gather.cpp", "fx_gather", {buf("x", "read", "all"), buf("y", "write", "block"), nParam}, "") +
       ",\n  \"es_add\": " +
       decl("es_add.cpp", "fx_es_add",
            {buf("x", "read", "block"), buf("y", "read", "block"), buf("z", "write", "block"), nParam},
            "\"early_start\": true, ") +
       ",\n  \"ks_sum\": " +
       decl("ks_sum.cpp", "fx_ks_sum",
            {buf("x", "read", "all"), buf("partial", "readwrite", "all"), buf("y", "write", "block"), nParam},
            "\"kernel_sync\": true, ") +
       "},\n \"buffers\": {";
  for (size_t b = 0; b < p.sizes.size(); ++b)
    j += fmt::format("{}\"b{}\": {{\"dtype\": \"f32\", \"shape\": [{}]}}", b ? ", " : "", b, p.sizes[b]);
  j += "},\n \"scopes\": {";
  bool first = true;
  for (const auto& [s, o] : p.scopeOptions) {
    j += fmt::format("{}\"{}\": {{\"options\": \"{}\"}}", first ? "" : ", ", s, o);
    first = false;
  }
  j += "},\n \"ops\": [\n";
  // Events: wherever a launch touches what an earlier launch of the other
  // stream touched (one of them writing), the other stream records and this
  // one waits, unless an earlier wait already covers it.
  std::vector<std::string> ops;
  int events = 0;
  long synced[2][2] = {{-1, -1}, {-1, -1}};  // synced[t][s]: launches of t up to here are ordered before s
  auto sync = [&](uint32_t t, uint32_t s, size_t upTo) {
    const std::string e = fmt::format("e{}", events++);
    ops.push_back(fmt::format(R"(  {{"record": "{}", "stream": {}}})", e, t));
    ops.push_back(fmt::format(R"(  {{"wait": "{}", "stream": {}}})", e, s));
    synced[t][s] = static_cast<long>(upTo);
  };
  size_t extra = 0;
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const Launch& l = p.launches[i];
    while (extra < p.extraSyncs.size() && p.extraSyncs[extra].first == i) {
      const uint32_t s = p.extraSyncs[extra++].second;
      if (i > 0) sync(1 - s, s, i - 1);
    }
    const uint32_t s = l.stream;
    for (size_t k = i; k-- > 0;) {
      const Launch& o = p.launches[k];
      if (o.stream == s || static_cast<long>(k) <= synced[o.stream][s]) continue;
      bool conflict = false;
      for (const Region& a : l.writes())
        for (const Region& b : o.reads()) conflict |= a.overlaps(b);
      for (const Region& a : l.writes())
        for (const Region& b : o.writes()) conflict |= a.overlaps(b);
      for (const Region& a : l.reads())
        for (const Region& b : o.writes()) conflict |= a.overlaps(b);
      if (conflict) {
        sync(o.stream, s, i - 1);
        break;
      }
    }
    const KernelInfo& ki = info(l.kernel);
    static const char* names[8][3] = {{"x", "y", "z"}, {"x", "y", "z"}, {"x", "y", ""}, {"x", "y", ""},
                                      {"x", "", ""},   {"x", "y", ""},  {"x", "y", "z"}, {"x", "partial", "y"}};
    std::string args;
    for (size_t a = 0; a < l.args.size(); ++a)
      args += fmt::format("\"{}\": {}, ", names[static_cast<int>(l.kernel)][a], argJson(p, l.args[a]));
    if (l.kernel == K::Scale) args += fmt::format("\"alpha\": {}, ", l.alpha);
    args += fmt::format("\"n\": {}", l.n);
    std::string extraKeys;
    if (l.scope == "~") extraKeys += ", \"scope\": null";
    else if (!l.scope.empty()) extraKeys += ", \"scope\": \"" + l.scope + "\"";
    if (!l.fusible) extraKeys += ", \"fusible\": false";
    if (l.staticShape) extraKeys += fmt::format(", \"macros\": {{\"SK_N\": \"{}\"}}", l.n);
    ops.push_back(fmt::format(R"(  {{"name": "op{}_{}", "kernel": "{}", "block_dim": {}, "stream": {}{}, "args": {{{}}}}})",
                              i, ki.name, ki.name, l.blockDim, l.stream, extraKeys, args));
  }
  for (size_t i = 0; i < ops.size(); ++i) j += ops[i] + (i + 1 < ops.size() ? ",\n" : "\n");
  return j + " ]}\n";
}

// ---- the reference -----------------------------------------------------------

void blockRange(uint64_t n, uint32_t b, uint32_t B, uint64_t& begin, uint64_t& end) {
  const uint64_t per = n / B;
  begin = per * b;
  end = b == B - 1 ? n : per * (b + 1);
}

std::vector<std::vector<float>> reference(const Program& p, size_t skipLaunch = SIZE_MAX) {
  auto bufs = p.init;
  for (size_t li = 0; li < p.launches.size(); ++li) {
    if (li == skipLaunch) continue;
    const Launch& l = p.launches[li];
    auto at = [&](int a, uint64_t i) -> float& { return bufs[l.args[a].buffer][l.args[a].offset + i]; };
    const uint64_t n = l.n;
    switch (l.kernel) {
      case K::Add:
        for (uint64_t i = 0; i < n; ++i) at(2, i) = at(0, i) + at(1, i);
        break;
      case K::Mul:
        for (uint64_t i = 0; i < n; ++i) at(2, i) = at(0, i) * at(1, i);
        break;
      case K::Scale:
        for (uint64_t i = 0; i < n; ++i) at(1, i) = at(0, i) * l.alpha;
        break;
      case K::Copy:
        for (uint64_t i = 0; i < n; ++i) at(1, i) = at(0, i);
        break;
      case K::Inc:
        for (uint64_t i = 0; i < n; ++i) at(0, i) = at(0, i) * 1.5f + 1.0f;
        break;
      case K::Gather: {
        for (uint64_t i = 0; i < n; ++i) at(1, i) = at(0, (7 * i + 3) % n) * 0.5f + at(0, i);
        break;
      }
      case K::EsAdd:
        for (uint64_t i = 0; i < n; ++i) at(2, i) = at(0, i) + at(1, i) * (1.0f + 0.125f * static_cast<float>(i % 16));
        break;
      case K::KsSum: {
        const uint32_t B = l.blockDim;
        for (uint32_t b = 0; b < B; ++b) {
          uint64_t s0, s1;
          blockRange(n, b, B, s0, s1);
          float s = 0.0f;
          for (uint64_t i = s0; i < s1; ++i) s += at(0, i);
          at(1, b) = s;
        }
        float total = 0.0f;
        for (uint32_t b = 0; b < B; ++b) total += at(1, b);
        for (uint64_t i = 0; i < n; ++i) at(2, i) = at(0, i) + total;
        break;
      }
    }
  }
  return bufs;
}

// ---- run and compare -----------------------------------------------------------

// "" when the fused run matches the reference, else what went wrong.
std::string check(const Program& p, const std::string& tag, std::vector<std::vector<float>>* out = nullptr) {
  const std::string text = render(p);
  auto list = parseOpList(text, tag, "/");
  if (!list) return "the generated list is invalid: " + msg(list.error());
  Session& session = testing::sessionFor(kWorkers);
  auto plan = session.compile(*list);
  if (!plan) return "compile failed: " + msg(plan.error());
  auto bufs = p.init;
  std::vector<void*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.data());
  if (Status st = session.run(*plan, ptrs.data(), ptrs.size()); !st) return "run failed: " + msg(st.error());
  if (out) *out = bufs;
  const auto ref = reference(p);
  for (size_t b = 0; b < bufs.size(); ++b)
    for (size_t i = 0; i < bufs[b].size(); ++i) {
      const float got = bufs[b][i], want = ref[b][i];
      // Kernels may be compiled with FMA contraction: one rounding apart.
      if (!(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want))))
        return fmt::format("buffer b{} element {}: fused {} vs reference {}", b, i, got, want);
    }
  return "";
}

Program minimise(Program p, const std::string& tag) {
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = p.launches.size(); i-- > 0;) {
      Program q = p;
      q.launches.erase(q.launches.begin() + static_cast<std::ptrdiff_t>(i));
      for (auto& [at, s] : q.extraSyncs)
        if (at > i) --at;
      if (!q.launches.empty() && !check(q, tag).empty()) {
        p = std::move(q);
        progress = true;
      }
    }
    for (std::string* o : {&p.options}) {
      if (o->empty()) continue;
      Program q = p;
      q.options.clear();
      if (!check(q, tag).empty()) {
        p = std::move(q);
        progress = true;
      }
    }
  }
  return p;
}

int envInt(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : dflt;
}

TEST(Differential, RandomOpListsMatchTheReference) {
  const int seeds = envInt("SK_FUZZ_SEEDS", 4);
  const int base = envInt("SK_FUZZ_SEED_BASE", 1);
  for (int s = base; s < base + seeds; ++s) {
    const uint64_t seed = static_cast<uint64_t>(s);
    const Program p = generate(seed);
    const std::string tag = fmt::format("fuzz seed {}", seed);
    const std::string problem = check(p, tag);
    if (problem.empty()) continue;
    const Program m = minimise(p, tag);
    const std::string text = render(m);
    const fs::path file = fs::path(SK_BINARY_ROOT) / "tests" / fmt::format("fuzz-diff-{}.json", seed);
    std::ofstream(file) << text;
    ADD_FAILURE() << "seed " << seed << " (rerun: SK_FUZZ_SEED_BASE=" << seed << " SK_FUZZ_SEEDS=1): " << problem
                  << "\nminimised op list (" << m.launches.size() << " of " << p.launches.size()
                  << " launches; also in " << file.string() << "): " << check(m, tag) << "\n"
                  << text;
  }
}

// The comparison is not vacuous: a reference that skips one launch is caught.
TEST(Differential, TheHarnessCatchesAMissingLaunch) {
  for (uint64_t seed = 1; seed < 50; ++seed) {
    Program p = generate(seed);
    // A launch whose output the rest of the program does not overwrite.
    const size_t last = p.launches.size() - 1;
    const auto full = reference(p), skipped = reference(p, last);
    if (full == skipped) continue;
    std::vector<std::vector<float>> got;
    ASSERT_EQ(check(p, "self-test", &got), "") << render(p);
    EXPECT_EQ(got, full);
    EXPECT_NE(got, skipped) << "dropping launch " << last << " went unnoticed";
    return;
  }
  FAIL() << "no seed below 50 has an observable last launch";
}

}  // namespace
}  // namespace sk
