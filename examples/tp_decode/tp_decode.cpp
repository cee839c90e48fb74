// Tensor-parallel decode (docs/COLLECTIVES.md): a decode stack split
// Megatron-style over the ranks of `mpirun -np R` (R = 1, 2, 4, ...), the
// all-reduces inside the SuperKernel.
//
// Per layer: rms_norm -> column-parallel v projection (each rank its D/R rows
// of Wv) -> row-parallel o projection (its D/R columns of Wo) -> all-reduce
// sum -> residual add; rms_norm -> column-parallel gate and up (F/R rows
// each) -> swiglu -> row-parallel down (F/R columns of Wd) -> all-reduce sum
// -> residual add. Attention is taken at its first position, where it
// returns v (the attention kernels themselves are examples/decode_stack's; a
// TP split does not change them: each rank runs its own heads).
//
// Every rank builds the full weights from one seed and keeps its shards, runs
// T tokens (the residual stream feeds the next token) and checks:
//   - ranks bit-identical: every rank's stream after each run equals rank 0's;
//   - equal to the 1-rank stack (the same layers without a split, computed on
//     every rank) within the tolerance below: the all-reduce adds the ranks'
//     partial sums, so the additions run in another order.
// --moe: an expert-parallel MoE layer instead (one expert per rank; see
// runMoe below), checked against the same experts on one rank.
// --bench S: S interleaved samples of T tokens each of fused (one SuperKernel
// per step, collectives inside), split (a SuperKernel between collectives,
// each collective its own launch: SuperKernel, MPI all-reduce, SuperKernel),
// per-op (every op its own launch) and compute (the fused step without its
// all-reduces: wrong results, but the same work per rank, so fused - compute
// is what the collectives cost inside the step); rank 0 prints per-step
// medians and the collectives' share of the fused step.
#include <superkernel/runtime/Communicator.h>
#include <superkernel/superkernel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace {

struct Shape {
  int64_t d = 512, f = 1376, layers = 8;
};

// The same pseudo-random weights on every rank: element i of matrix m.
float weight(uint64_t m, uint64_t i, float scale) {
  uint64_t z = (m * 0x9E3779B97F4A7C15ull) ^ (i + 0x632BE59BD9B4E019ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return scale * (float((z >> 40) & 0xFFFFFF) / float(0x1000000) - 0.5f);
}

enum class Mode { Fused, Split, PerOp, Compute };

// The stack for rank r of R (R = 1: the unsplit reference, no collectives).
sk::Status record(sk::Graph& g, const Shape& s, uint32_t ranks, Mode mode) {
  const int64_t d = s.d, dr = s.d / ranks, fr = s.f / ranks;
  sk::Status st = g.setOptions("early-start=1");
  for (auto [n, b] : {std::pair{"gemv", "gemv_f32"}, {"norm", "rms_norm_f32"}, {"swiglu", "swiglu_f32"}, {"add", "add_f32"}})
    if (st) st = g.addBuiltinKernel(n, b);
  std::vector<uint32_t> all;
  for (uint32_t r = 0; r < ranks; ++r) all.push_back(r);
  if (st && ranks > 1) st = g.addGroup("tp", all);
  for (auto [n, len] : {std::pair{"x", d}, {"h", d}, {"a", dr}, {"p", d}, {"gt", fr}, {"up", fr}, {"act", fr}})
    if (st) st = g.addBuffer(n, sk::DType::F32, {len});
  for (int64_t l = 0; st && l < s.layers; ++l) {
    const std::string L = std::to_string(l);
    for (auto [n, shape] : {std::pair{"wn1_", std::vector<int64_t>{d}}, {"wn2_", {d}}, {"wv_", {dr, d}}, {"wo_", {d, dr}},
                            {"wg_", {fr, d}}, {"wu_", {fr, d}}, {"wd_", {d, fr}}})
      if (st) st = g.addBuffer(n + L, sk::DType::F32, shape);
  }
  auto launch = [&](const std::string& name, const char* kernel, uint32_t blocks,
                    std::vector<std::pair<std::string, sk::ArgValue>> args) {
    if (st) st = g.launch({name, kernel, blocks, 0, std::move(args), {}});
  };
  auto allReduce = [&](const std::string& name) {
    if (!st || ranks == 1 || mode == Mode::Compute) return;
    sk::CollectiveDesc c{name, sk::CollectiveKind::AllReduce, sk::ReduceOp::Sum, "tp", sk::arg("p"), sk::arg("p")};
    c.fusible = mode != Mode::Split;  // split: its own launch between two SuperKernels
    st = g.collective(c);
  };
  sk::Scope scope(g, "step");
  for (int64_t l = 0; st && l < s.layers; ++l) {
    const std::string L = std::to_string(l);
    launch("norm1_" + L, "norm", 1, {{"x", sk::arg("x")}, {"w", sk::arg("wn1_" + L)}, {"y", sk::arg("h")},
                                     {"rows", sk::arg(int64_t{1})}, {"cols", sk::arg(d)}, {"eps", sk::arg(1e-5)}});
    launch("v_" + L, "gemv", 4, {{"w", sk::arg("wv_" + L)}, {"x", sk::arg("h")}, {"y", sk::arg("a")},
                                 {"rows", sk::arg(dr)}, {"cols", sk::arg(d)}});
    launch("o_" + L, "gemv", 4, {{"w", sk::arg("wo_" + L)}, {"x", sk::arg("a")}, {"y", sk::arg("p")},
                                 {"rows", sk::arg(d)}, {"cols", sk::arg(dr)}});
    allReduce("ar_attn_" + L);
    launch("res1_" + L, "add", 4, {{"x", sk::arg("x")}, {"y", sk::arg("p")}, {"z", sk::arg("x")}, {"n", sk::arg(d)}});
    launch("norm2_" + L, "norm", 1, {{"x", sk::arg("x")}, {"w", sk::arg("wn2_" + L)}, {"y", sk::arg("h")},
                                     {"rows", sk::arg(int64_t{1})}, {"cols", sk::arg(d)}, {"eps", sk::arg(1e-5)}});
    launch("gate_" + L, "gemv", 4, {{"w", sk::arg("wg_" + L)}, {"x", sk::arg("h")}, {"y", sk::arg("gt")},
                                    {"rows", sk::arg(fr)}, {"cols", sk::arg(d)}});
    launch("up_" + L, "gemv", 4, {{"w", sk::arg("wu_" + L)}, {"x", sk::arg("h")}, {"y", sk::arg("up")},
                                  {"rows", sk::arg(fr)}, {"cols", sk::arg(d)}});
    launch("swiglu_" + L, "swiglu", 4, {{"gate", sk::arg("gt")}, {"up", sk::arg("up")}, {"y", sk::arg("act")},
                                        {"n", sk::arg(fr)}});
    launch("down_" + L, "gemv", 4, {{"w", sk::arg("wd_" + L)}, {"x", sk::arg("act")}, {"y", sk::arg("p")},
                                    {"rows", sk::arg(d)}, {"cols", sk::arg(fr)}});
    allReduce("ar_ffn_" + L);
    launch("res2_" + L, "add", 4, {{"x", sk::arg("x")}, {"y", sk::arg("p")}, {"z", sk::arg("x")}, {"n", sk::arg(d)}});
  }
  return st;
}

// Rank r's shard of each weight, from the full matrices every rank can build.
void fillWeights(sk::BufferSet& b, const sk::OpList& list, const Shape& s, uint32_t rank, uint32_t ranks) {
  const int64_t d = s.d, f = s.f, dr = d / ranks, fr = f / ranks;
  auto buf = [&](const std::string& n) { return static_cast<float*>(b.data(size_t(b.find(n)))); };
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string L = std::to_string(l);
    const uint64_t m = uint64_t(l) * 16;
    for (int64_t i = 0; i < d; ++i) {
      buf("wn1_" + L)[i] = 1.0f + weight(m + 1, uint64_t(i), 0.2f);
      buf("wn2_" + L)[i] = 1.0f + weight(m + 2, uint64_t(i), 0.2f);
    }
    const float sd = 1.0f / std::sqrt(float(d)), sf = 1.0f / std::sqrt(float(f));
    // The [rows, cols] block at (row0, col0) of the full matrix `mat` with
    // `fullCols` columns. Column-parallel shards are a rank's rows,
    // row-parallel ones its columns.
    auto shard = [&](const char* n, uint64_t mat, int64_t rows, int64_t cols, int64_t fullCols, int64_t row0,
                     int64_t col0, float sc) {
      float* w = buf(n + L);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) w[r * cols + c] = weight(mat, uint64_t((row0 + r) * fullCols + col0 + c), sc);
    };
    auto rowsOf = [&](const char* n, uint64_t mat, int64_t rowsPer, int64_t cols, float sc) {
      shard(n, mat, rowsPer, cols, cols, rank * rowsPer, 0, sc);
    };
    auto colsOf = [&](const char* n, uint64_t mat, int64_t rows, int64_t colsPer, int64_t fullCols, float sc) {
      shard(n, mat, rows, colsPer, fullCols, 0, rank * colsPer, sc);
    };
    rowsOf("wv_", m + 3, dr, d, sd);
    colsOf("wo_", m + 4, d, dr, d, sd);
    rowsOf("wg_", m + 5, fr, d, sd);
    rowsOf("wu_", m + 6, fr, d, sd);
    colsOf("wd_", m + 7, d, fr, f, sf);
  }
  float* x = buf("x");
  for (int64_t i = 0; i < d; ++i) x[i] = weight(999, uint64_t(i), 2.0f);
  (void)list;
}

int fail(const char* what, const std::string& msg, int code) {
  std::fprintf(stderr, "tp_decode: %s: %s\n", what, msg.c_str());
  return code;
}

// Expert parallelism: each of R ranks holds one expert W_e [D, D] and a
// batch of `tokens` tokens [tokens, D]. Routing is fixed (chunk j of every
// rank's batch goes to expert j: what a top-1 router that balances
// perfectly sends; the router kernel itself is moe_gate_topk's, and a
// dispatch by its indices is a gather before the all-to-all). A step:
// all_to_all (dispatch: rank e receives every rank's chunk e), the expert's
// matmul, all_to_all back (combine), residual add. The reference, on one
// rank, applies expert j to chunk j of the same batch with the same matmul
// kernel; the all-to-alls only move rows, so the two are bit-identical.
sk::Status recordMoe(sk::Graph& g, int64_t tokens, int64_t d, uint32_t ranks, bool reference) {
  const int64_t chunk = tokens / ranks;
  sk::Status st = g.addBuiltinKernel("matmul", "matmul_f32");
  if (st) st = g.addBuiltinKernel("add", "add_f32");
  for (const char* n : {"x", "disp", "y", "z", "out"})
    if (st) st = g.addBuffer(n, sk::DType::F32, {tokens, d});
  for (uint32_t e = 0; st && e < (reference ? ranks : 1); ++e) st = g.addBuffer("w" + std::to_string(e), sk::DType::F32, {d, d});
  std::vector<uint32_t> all;
  for (uint32_t r = 0; r < ranks; ++r) all.push_back(r);
  if (st && !reference) st = g.addGroup("ep", all);
  sk::Scope scope(g, "moe");
  auto mm = [&](const std::string& name, sk::ArgValue a, const std::string& w, sk::ArgValue c, int64_t m) {
    if (st) st = g.launch({name, "matmul", 4, 0, {{"a", std::move(a)}, {"b", sk::arg(w)}, {"c", std::move(c)},
                                                  {"m", sk::arg(m)}, {"k", sk::arg(d)}, {"n", sk::arg(d)}}, {}});
  };
  if (reference) {
    for (uint32_t e = 0; e < ranks; ++e)
      mm("expert" + std::to_string(e), sk::arg("x", uint64_t(e * chunk * d), uint64_t(chunk * d)), "w" + std::to_string(e),
         sk::arg("z", uint64_t(e * chunk * d), uint64_t(chunk * d)), chunk);
  } else {
    if (st) st = g.collective({"dispatch", sk::CollectiveKind::AllToAll, sk::ReduceOp::None, "ep", sk::arg("x"), sk::arg("disp")});
    mm("expert", sk::arg("disp"), "w0", sk::arg("y"), tokens);
    if (st) st = g.collective({"combine", sk::CollectiveKind::AllToAll, sk::ReduceOp::None, "ep", sk::arg("y"), sk::arg("z")});
  }
  if (st) st = g.launch({"residual", "add", 4, 0, {{"x", sk::arg("x")}, {"y", sk::arg("z")}, {"z", sk::arg("out")},
                                                   {"n", sk::arg(tokens * d)}}, {}});
  return st;
}

int runMoe(sk::Session& ss, uint32_t rank, uint32_t ranks, int64_t tokens, int64_t d) {
  if (tokens % ranks) return fail("shape", "--moe-tokens must be a multiple of the ranks", 2);
  auto build = [&](bool reference) -> sk::Expected<sk::CompiledPlan> {
    sk::Graph g;
    SK_RETURN_IF_ERROR(recordMoe(g, tokens, d, ranks, reference));
    return ss.compile(g);
  };
  auto ep = build(false);
  if (!ep) return fail("compile", ep.error().message(), 3);
  auto ref = build(true);
  if (!ref) return fail("compile (1-rank reference)", ref.error().message(), 3);
  auto bEp = sk::BufferSet::create(ep->list);
  auto bRef = sk::BufferSet::create(ref->list);
  if (!bEp || !bRef) return fail("buffers", "allocation failed", 4);
  auto buf = [](sk::BufferSet& b, const std::string& n) { return static_cast<float*>(b.data(size_t(b.find(n)))); };
  for (int64_t i = 0; i < tokens * d; ++i) buf(*bEp, "x")[i] = buf(*bRef, "x")[i] = weight(500 + rank, uint64_t(i), 2.0f);
  for (uint32_t e = 0; e < ranks; ++e)
    for (int64_t i = 0; i < d * d; ++i) {
      const float w = weight(700 + e, uint64_t(i), 1.0f / std::sqrt(float(d)));
      buf(*bRef, "w" + std::to_string(e))[i] = w;
      if (e == rank) buf(*bEp, "w0")[i] = w;
    }
  if (sk::Status st = ss.run(*ep, *bEp); !st) return fail("run", st.error().message(), 4);
  if (sk::Status st = ss.run(*ref, *bRef); !st) return fail("run (1-rank reference)", st.error().message(), 4);
  const bool same = std::memcmp(buf(*bEp, "out"), buf(*bRef, "out"), size_t(tokens * d) * sizeof(float)) == 0;
  std::printf("tp_decode --moe: rank %u of %u, %lld tokens x d %lld, one expert per rank, all-to-all dispatch and "
              "combine inside one SuperKernel (%zu launch): %s the 1-rank experts bit for bit\n",
              rank, ranks, (long long)tokens, (long long)d, ep->steps.size(), same ? "equal to" : "DIFFERENT from");
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Shape s;
  int tokens = 16, samples = 0;
  bool moe = false;
  int64_t moeTokens = 16;
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--moe") {
      moe = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) return fail("usage", k + " needs a value", 2);
    const long v = std::strtol(argv[i + 1], nullptr, 10);
    if (k == "--tokens") tokens = int(v);
    else if (k == "--bench") samples = int(v);
    else if (k == "--d") s.d = v;
    else if (k == "--f") s.f = v;
    else if (k == "--layers") s.layers = v;
    else if (k == "--moe-tokens") moeTokens = v;
    else return fail("usage", "tp_decode [--tokens T] [--bench S] [--d D] [--f F] [--layers L] [--moe [--moe-tokens N]]", 2);
  }
  auto comm = sk::mpiCommunicator();
  if (!comm) return fail("MPI", comm.error().message(), 2);
  const uint32_t rank = (*comm)->rank(), ranks = (*comm)->size();
  if (s.d % ranks || s.f % ranks) return fail("shape", "D and F must be multiples of the ranks", 2);
  sk::SessionOptions so;
  so.communicator = *comm;
  auto session = sk::Session::create(so);
  if (!session) return fail("session", session.error().message(), 3);
  sk::Session& ss = **session;
  if (moe) {
    const int rc = runMoe(ss, rank, ranks, moeTokens, s.d);
    if (rc == 0) sk::finalizeMpi();
    return rc;
  }

  auto build = [&](uint32_t r, Mode mode, bool fuse) -> sk::Expected<sk::CompiledPlan> {
    sk::Graph g;
    SK_RETURN_IF_ERROR(record(g, s, r, mode));
    sk::CompileRequest req;
    req.fuse = fuse;
    return ss.compile(g, req);
  };
  auto tp = build(ranks, Mode::Fused, true);
  if (!tp) return fail("compile", tp.error().message(), 3);
  auto ref = build(1, Mode::Fused, true);
  if (!ref) return fail("compile (1-rank reference)", ref.error().message(), 3);
  auto bTp = sk::BufferSet::create(tp->list);
  auto bRef = sk::BufferSet::create(ref->list);
  if (!bTp || !bRef) return fail("buffers", "allocation failed", 4);
  fillWeights(*bTp, tp->list, s, rank, ranks);
  fillWeights(*bRef, ref->list, s, 0, 1);

  const int xi = bTp->find("x");
  const size_t xBytes = bTp->bytes(size_t(xi));
  bool identical = true;
  for (int t = 0; t < tokens; ++t) {
    if (sk::Status st = ss.run(*tp, *bTp); !st) return fail("run", st.error().message(), 4);
    if (sk::Status st = ss.run(*ref, *bRef); !st) return fail("run (1-rank reference)", st.error().message(), 4);
    // Every rank's stream against every other's, bit for bit.
    std::vector<char> all(xBytes * ranks);
    sk_collective_args a{bTp->data(size_t(xi)), all.data(), int64_t(xBytes), int64_t(all.size()),
                         1u | uint64_t(sk::DType::U8) << 16, ranks >= 64 ? ~0ull : (1ull << ranks) - 1, 0x74706465636f6465ull};
    if (sk::Status st = (*comm)->run(a, "\"tp_decode compare\"", 10000, [] { return false; }); !st)
      return fail("compare", st.error().message(), 4);
    for (uint32_t r = 1; r < ranks; ++r) identical &= std::memcmp(all.data(), all.data() + r * xBytes, xBytes) == 0;
  }
  const auto* x = static_cast<const float*>(bTp->data(size_t(xi)));
  const auto* xr = static_cast<const float*>(bRef->data(size_t(bRef->find("x"))));
  double maxDiff = 0, maxAbs = 0;
  for (int64_t i = 0; i < s.d; ++i) {
    maxDiff = std::max(maxDiff, double(std::fabs(x[i] - xr[i])));
    maxAbs = std::max(maxAbs, double(std::fabs(xr[i])));
  }
  // The tolerance: f32 sums of D and F/R terms in another order, over
  // 2 x layers x tokens residual adds; measured about 1e-6 here.
  const double rel = maxAbs > 0 ? maxDiff / maxAbs : maxDiff, tolerance = 1e-4;
  const bool close = rel <= tolerance && std::isfinite(rel);
  if (rank == 0)
    std::printf("tp_decode: %u rank%s, %lld layers, d %lld, f %lld, %d tokens, one compile per rank (%zu launch%s per "
                "token)\n  ranks bit-identical after every token: %s\n  against the 1-rank stack: max |diff| / max |x| = "
                "%.3g (tolerance %.0e): %s\n",
                ranks, ranks == 1 ? "" : "s", (long long)s.layers, (long long)s.d, (long long)s.f, tokens,
                tp->steps.size(), tp->steps.size() == 1 ? "" : "es", identical ? "yes" : "NO", rel, tolerance,
                close ? "ok" : "FAILED");
  if (!identical || !close) return 1;

  if (samples > 0) {
    auto split = build(ranks, Mode::Split, true);
    auto perOp = build(ranks, Mode::Fused, false);
    auto compute = build(ranks, Mode::Compute, true);
    if (!split || !perOp || !compute)
      return fail("compile (bench)", (!split ? split.error() : !perOp ? perOp.error() : compute.error()).message(), 3);
    struct Variant {
      const char* name;
      sk::CompiledPlan* plan;
      std::vector<double> ms;
    } vs[] = {{"fused", &*tp, {}}, {"split", &*split, {}}, {"per-op", &*perOp, {}}, {"compute", &*compute, {}}};
    constexpr size_t kVariants = std::size(vs);
    auto bufs = sk::BufferSet::create(tp->list);  // one layout: the three lists have the same buffers
    if (!bufs) return fail("buffers", "allocation failed", 4);
    fillWeights(*bufs, tp->list, s, rank, ranks);
    for (int i = -1; i < samples; ++i) {  // sample -1: warm-up
      for (size_t j = 0; j < kVariants; ++j) {
        Variant& v = vs[(size_t(i + 1) + j) % kVariants];  // the variant that starts rotates
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < tokens; ++t)
          if (sk::Status st = ss.run(*v.plan, *bufs); !st) return fail(v.name, st.error().message(), 4);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (i >= 0) v.ms.push_back(ms / tokens);
      }
    }
    if (rank == 0) {
      std::printf("bench: %d samples of %d tokens per variant, interleaved, after one warm-up; rank 0's ms per decode step\n",
                  samples, tokens);
      double fusedMed = 0, computeMed = 0;
      for (Variant& v : vs) {
        std::vector<double> m = v.ms;
        std::sort(m.begin(), m.end());
        const double med = m[m.size() / 2];
        if (fusedMed == 0) fusedMed = med;
        if (v.plan == &*compute) {
          computeMed = med;
          std::printf("  %-7s %8.3f ms/step (min %.3f, max %.3f)  %zu launches/step  (no collectives)\n", v.name, med,
                      m.front(), m.back(), v.plan->steps.size());
          continue;
        }
        std::printf("  %-7s %8.3f ms/step (min %.3f, max %.3f)  %zu launches/step  fused speedup %.2fx\n", v.name, med,
                    m.front(), m.back(), v.plan->steps.size(), med / fusedMed);
      }
      std::printf("  collectives' share of the fused step: %.0f%% (fused - compute, of fused, medians)\n",
                  100.0 * std::max(0.0, fusedMed - computeMed) / fusedMed);
    }
  }
  sk::finalizeMpi();
  return 0;
}
