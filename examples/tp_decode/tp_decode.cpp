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
// --moe: an expert-parallel MoE layer instead (one expert per rank), routed
// by a top-1 router with a fixed capacity per expert; see recordMoe below
// for the step and what it does not model. Checked against the same step on
// one rank and against the host's double-precision recomputation.
// --bench S: S interleaved samples of T tokens each of fused (one SuperKernel
// per step, collectives inside), split (a SuperKernel between collectives,
// each collective its own launch: SuperKernel, MPI all-reduce, SuperKernel),
// per-op (every op its own launch) and compute (the fused step without its
// all-reduces: wrong results, but the same work per rank, so fused - compute
// is what the collectives cost inside the step); rank 0 prints per-step
// medians and the collectives' share of the fused step. Where the ranks
// share a host the collectives go through shared memory; fused and split
// then also run over MPI messages (a second communicator,
// CollectiveTransport::Mpi), in the same rotation, to show what the
// transport is worth.
#include <superkernel/runtime/Communicator.h>
#include <superkernel/superkernel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
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

// Expert parallelism (--moe), GShard/Switch-style: R ranks, one expert
// W_e [D, D] per rank (E = R experts), each rank a batch of T tokens
// [T, D]. A step, one SuperKernel per rank:
//   router    logits [T, E] = x . Wr (Wr [D, E], the same on every rank), then
//             moe_gate_topk with topk 1 and softmax: the expert idx[t] and its
//             probability gate[t];
//   dispatch  (moe_route.cpp) packs token rows by expert into send [E, C, D]
//             in token order, C rows per expert; a token past its expert's C
//             is dropped (slot -1);
//   all_to_all send -> recv: rank e receives block e of every rank, [R, C, D];
//   expert    y = recv . W_e;
//   all_to_all y -> back: each rank gets its own rows back, in send's layout;
//   combine   (moe_route.cpp) out[t] = x[t] + gate[t] * back[idx[t], slot[t]],
//             out[t] = x[t] for a dropped token.
// The collectives move a fixed E * C rows whatever the routing, so one
// compiled plan serves every step, and the routing is decided on the device
// by the data (no host round trip). Modelled: top-1 routing, capacity with
// drops, the gate-weighted combine. Not modelled: top-k > 1, an auxiliary
// load-balancing loss, a second-choice expert for dropped tokens, sending
// only the used rows (a count exchange before the data).
struct MoeShape {
  int64_t tokens = 16, d = 512, experts = 1, capacity = 0;  // capacity 0: runMoe's default
  int64_t steps = 4;
};

#ifndef SK_TP_DECODE_DIR
#error "SK_TP_DECODE_DIR: the directory of moe_route.cpp (examples/CMakeLists.txt defines it)"
#endif

// One of moe_route.cpp's kernels; every buffer "all" (each kernel's comment
// says how its blocks split the work), outputs independent of block_dim.
sk::KernelDecl moeKernel(const char* entry, std::vector<sk::ParamDecl> params) {
  sk::KernelDecl k;
  k.name = entry;
  k.source = "moe_route.cpp";
  k.entry = entry;
  k.blockDimInvariant = true;
  k.params = std::move(params);
  return k;
}

sk::ParamDecl moeBuffer(const char* name, sk::DType t, sk::Access a) {
  return {name, sk::ParamKind::Buffer, t, a, sk::Partition::All};
}
sk::ParamDecl moeScalar(const char* name) { return {name, sk::ParamKind::Scalar, sk::DType::I64}; }

sk::Status addMoeKernels(sk::Graph& g) {
  using sk::Access, sk::DType;
  g.setBaseDir(SK_TP_DECODE_DIR);
  sk::Status st = g.addBuiltinKernel("matmul", "matmul_f32");
  if (st) st = g.addBuiltinKernel("gate", "moe_gate_topk_f32");
  if (st)
    st = g.addKernel(moeKernel("moe_dispatch", {moeBuffer("x", DType::F32, Access::Read),
                                                moeBuffer("idx", DType::I32, Access::Read),
                                                moeBuffer("send", DType::F32, Access::Write),
                                                moeBuffer("slot", DType::I32, Access::Write), moeScalar("tokens"),
                                                moeScalar("d"), moeScalar("experts"), moeScalar("capacity")}));
  if (st)
    st = g.addKernel(moeKernel("moe_combine", {moeBuffer("x", DType::F32, Access::Read),
                                               moeBuffer("back", DType::F32, Access::Read),
                                               moeBuffer("idx", DType::I32, Access::Read),
                                               moeBuffer("slot", DType::I32, Access::Read),
                                               moeBuffer("gate", DType::F32, Access::Read),
                                               moeBuffer("out", DType::F32, Access::Write), moeScalar("tokens"),
                                               moeScalar("d"), moeScalar("capacity")}));
  return st;
}

// The MoE step on rank r of E (reference: the same step on one rank, no
// collectives: expert e's matmul on block e of send, into block e of back).
// A row of matmul_f32's output depends only on its own row of `a` (its sums
// run k = 0..K-1 in order whatever the split, kernels/cpu/matmul.cpp), and
// the all-to-alls only move rows, so the two plans agree bit for bit.
sk::Status recordMoe(sk::Graph& g, const MoeShape& m, bool reference) {
  const int64_t T = m.tokens, D = m.d, E = m.experts, C = m.capacity, rows = E * C;
  sk::Status st = addMoeKernels(g);
  for (auto [n, t, shape] : {std::tuple{"x", sk::DType::F32, std::vector<int64_t>{T, D}}, {"wr", sk::DType::F32, {D, E}},
                             {"logits", sk::DType::F32, {T, E}}, {"idx", sk::DType::I32, {T}},
                             {"gate", sk::DType::F32, {T}}, {"slot", sk::DType::I32, {T}},
                             {"send", sk::DType::F32, {rows, D}}, {"back", sk::DType::F32, {rows, D}},
                             {"out", sk::DType::F32, {T, D}}})
    if (st) st = g.addBuffer(n, t, shape);
  for (const char* n : {"recv", "y"})
    if (st && !reference) st = g.addBuffer(n, sk::DType::F32, {rows, D});
  for (int64_t e = 0; st && e < (reference ? E : 1); ++e) st = g.addBuffer("w" + std::to_string(e), sk::DType::F32, {D, D});
  std::vector<uint32_t> all;
  for (uint32_t r = 0; r < uint32_t(E); ++r) all.push_back(r);
  if (st && !reference) st = g.addGroup("ep", all);
  sk::Scope scope(g, "moe");
  auto launch = [&](const std::string& name, const char* kernel, std::vector<std::pair<std::string, sk::ArgValue>> args) {
    if (st) st = g.launch({name, kernel, 4, 0, std::move(args), {}});
  };
  auto mm = [&](const std::string& name, sk::ArgValue a, const std::string& w, sk::ArgValue c, int64_t mRows, int64_t n) {
    launch(name, "matmul", {{"a", std::move(a)}, {"b", sk::arg(w)}, {"c", std::move(c)}, {"m", sk::arg(mRows)},
                            {"k", sk::arg(D)}, {"n", sk::arg(n)}});
  };
  auto allToAll = [&](const char* name, const char* in, const char* out) {
    if (st) st = g.collective({name, sk::CollectiveKind::AllToAll, sk::ReduceOp::None, "ep", sk::arg(in), sk::arg(out)});
  };
  mm("router", sk::arg("x"), "wr", sk::arg("logits"), T, E);
  launch("gate", "gate", {{"logits", sk::arg("logits")}, {"idx", sk::arg("idx")}, {"weights", sk::arg("gate")},
                          {"rows", sk::arg(T)}, {"experts", sk::arg(E)}, {"topk", sk::arg(1)}, {"sigmoid", sk::arg(0)},
                          {"normalize", sk::arg(0)}});
  launch("dispatch", "moe_dispatch", {{"x", sk::arg("x")}, {"idx", sk::arg("idx")}, {"send", sk::arg("send")},
                                      {"slot", sk::arg("slot")}, {"tokens", sk::arg(T)}, {"d", sk::arg(D)},
                                      {"experts", sk::arg(E)}, {"capacity", sk::arg(C)}});
  if (reference) {
    const uint64_t block = uint64_t(C * D);
    for (int64_t e = 0; e < E; ++e)
      mm("expert" + std::to_string(e), sk::arg("send", uint64_t(e) * block, block), "w" + std::to_string(e),
         sk::arg("back", uint64_t(e) * block, block), C, D);
  } else {
    allToAll("to_experts", "send", "recv");
    mm("expert", sk::arg("recv"), "w0", sk::arg("y"), rows, D);
    allToAll("from_experts", "y", "back");
  }
  launch("combine", "moe_combine", {{"x", sk::arg("x")}, {"back", sk::arg("back")}, {"idx", sk::arg("idx")},
                                    {"slot", sk::arg("slot")}, {"gate", sk::arg("gate")}, {"out", sk::arg("out")},
                                    {"tokens", sk::arg(T)}, {"d", sk::arg(D)}, {"capacity", sk::arg(C)}});
  return st;
}

template <typename T = float>
T* moeBuf(sk::BufferSet& b, const std::string& n) {
  return static_cast<T*>(b.data(size_t(b.find(n))));
}

// The host's weights: Wr [D, E] and every expert's W_e [D, D], the same on
// every rank (one seed).
struct MoeWeights {
  std::vector<float> router;
  std::vector<std::vector<float>> experts;
};

MoeWeights moeWeights(const MoeShape& m) {
  MoeWeights w;
  const float scale = 1.0f / std::sqrt(float(m.d));
  for (int64_t i = 0; i < m.d * m.experts; ++i) w.router.push_back(weight(600, uint64_t(i), scale));
  w.experts.resize(size_t(m.experts));
  for (int64_t e = 0; e < m.experts; ++e)
    for (int64_t i = 0; i < m.d * m.d; ++i) w.experts[size_t(e)].push_back(weight(700 + uint64_t(e), uint64_t(i), scale));
  return w;
}

// What the host check found over one step of one rank.
struct MoeCheck {
  int64_t badIdx = 0, badSlot = 0, badDropped = 0;  // counts of tokens
  double err = 0;                                  // max of |got - want| / scale, logits, gate and out
  std::vector<int64_t> routed;                     // tokens per expert (dropped ones included)
  int64_t dropped = 0;
};

// sum_k a[k] * b[k * stride] in double, and sum_k |a[k] * b[k * stride]|: an
// f32 dot product's rounding error is a small multiple of the latter.
std::pair<double, double> dot(const float* a, const float* b, int64_t n, int64_t stride) {
  double s = 0, abs = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double p = double(a[k]) * double(b[k * stride]);
    s += p;
    abs += std::fabs(p);
  }
  return {s, abs};
}

// The router of token t: the logits against x . Wr, idx an argmax of the
// kernel's own logits (exact ties allowed: the kernel takes the lower
// index), the gate the softmax probability of idx.
void checkRouter(MoeCheck& c, const MoeShape& m, const MoeWeights& w, sk::BufferSet& b, int64_t t) {
  const int64_t E = m.experts;
  const float* x = moeBuf(b, "x") + t * m.d;
  const float* l = moeBuf(b, "logits") + t * E;
  const int32_t i = moeBuf<int32_t>(b, "idx")[t];
  for (int64_t e = 0; e < E; ++e) {
    auto [want, scale] = dot(x, w.router.data() + e, m.d, E);
    c.err = std::max(c.err, std::fabs(l[e] - want) / std::max(scale, 1e-30));
  }
  if (i < 0 || i >= E || *std::max_element(l, l + E) != l[i]) {
    ++c.badIdx;
    return;
  }
  double denom = 0;
  for (int64_t e = 0; e < E; ++e) denom += std::exp(double(l[e]) - double(l[i]));
  c.err = std::max(c.err, std::fabs(moeBuf(b, "gate")[t] - 1.0 / denom) * denom);
  ++c.routed[size_t(i)];
}

// Token t's output: x[t] + gate[t] * (x[t] . W_idx[t]) when kept (slot >= 0),
// x[t] bit for bit when dropped.
void checkOut(MoeCheck& c, const MoeShape& m, const MoeWeights& w, sk::BufferSet& b, int64_t t, int32_t slot) {
  const float* x = moeBuf(b, "x") + t * m.d;
  const float* out = moeBuf(b, "out") + t * m.d;
  if (slot < 0) {
    c.badDropped += std::memcmp(x, out, size_t(m.d) * sizeof(float)) != 0;
    return;
  }
  const int32_t e = moeBuf<int32_t>(b, "idx")[t];
  const double g = moeBuf(b, "gate")[t];
  for (int64_t j = 0; j < m.d; ++j) {
    auto [y, scale] = dot(x, w.experts[size_t(e)].data() + j, m.d, m.d);
    const double want = x[j] + g * y;
    c.err = std::max(c.err, std::fabs(out[j] - want) / std::max(std::fabs(double(x[j])) + g * scale, 1e-30));
  }
}

// The whole step in plain C++ with double sums: the check that fails when the
// dispatch or combine kernels are wrong in a way both plans share. Slots are
// recomputed from idx (the first C tokens of each expert, in token order).
MoeCheck hostCheck(const MoeShape& m, const MoeWeights& w, sk::BufferSet& b) {
  MoeCheck c;
  c.routed.assign(size_t(m.experts), 0);
  std::vector<int64_t> used(size_t(m.experts), 0);
  const int32_t* idx = moeBuf<int32_t>(b, "idx");
  const int32_t* slot = moeBuf<int32_t>(b, "slot");
  for (int64_t t = 0; t < m.tokens; ++t) {
    checkRouter(c, m, w, b, t);
    if (idx[t] < 0 || idx[t] >= m.experts) continue;
    int64_t& n = used[size_t(idx[t])];
    const int32_t want = n < m.capacity ? int32_t(n++) : -1;
    c.badSlot += slot[t] != want;
    c.dropped += want < 0;
    checkOut(c, m, w, b, t, want);
  }
  return c;
}

// Rank `rank`'s batch for step `step`: fresh tokens every step.
void fillTokens(sk::BufferSet& b, const MoeShape& m, uint32_t rank, int64_t step) {
  float* x = moeBuf(b, "x");
  for (int64_t i = 0; i < m.tokens * m.d; ++i) x[i] = weight(1000 + uint64_t(step) * 64 + rank, uint64_t(i), 2.0f);
}

std::string moeShapeError(const MoeShape& m) {
  if (m.tokens < 1) return "--moe-tokens must be at least 1";
  if (m.d < 1) return "--d must be at least 1";
  if (m.capacity < 1) return "--moe-capacity must be at least 1";
  if (m.capacity > m.tokens) return "--moe-capacity above --moe-tokens: rows no token can fill";
  if (m.steps < 1) return "--moe-steps must be at least 1";
  if (m.experts > 63) return "at most 63 ranks (experts): a group's ranks are below 64";
  return "";
}

// Both plans' weights: the router everywhere, expert `rank` alone in the
// expert-parallel plan, every expert in the reference.
void loadMoeWeights(sk::BufferSet& ep, sk::BufferSet& ref, const MoeWeights& w, const MoeShape& m, uint32_t rank) {
  const size_t routerBytes = w.router.size() * sizeof(float), expertBytes = size_t(m.d * m.d) * sizeof(float);
  std::memcpy(moeBuf(ep, "wr"), w.router.data(), routerBytes);
  std::memcpy(moeBuf(ref, "wr"), w.router.data(), routerBytes);
  std::memcpy(moeBuf(ep, "w0"), w.experts[rank].data(), expertBytes);
  for (int64_t e = 0; e < m.experts; ++e)
    std::memcpy(moeBuf(ref, "w" + std::to_string(e)), w.experts[size_t(e)].data(), expertBytes);
}

// The tolerance of the host check, relative to the sum of |terms| (the
// gate: relative): f32 sums of D products and expf against double;
// measured about 1.4e-7. A wrong row is off by about 0.3 in these units.
constexpr double kMoeTolerance = 1e-5;

// One rank's results over the steps.
struct MoeTally {
  bool allSame = true, hostOk = true;
  std::string routed;  // " [n0 n1 ...]" per step
  int64_t dropped = 0;
  double err = 0;

  void add(uint32_t rank, int64_t step, bool same, const MoeCheck& c) {
    const bool hostGood = c.badIdx == 0 && c.badSlot == 0 && c.badDropped == 0 && c.err <= kMoeTolerance;
    if (!same || !hostGood)
      std::fprintf(stderr, "tp_decode --moe: rank %u step %lld: %s the 1-rank reference; host check: %lld wrong idx, "
                   "%lld wrong slots, %lld dropped tokens not x, max error %.3g (tolerance %.0e)\n",
                   rank, (long long)step, same ? "equal to" : "DIFFERENT from", (long long)c.badIdx,
                   (long long)c.badSlot, (long long)c.badDropped, c.err, kMoeTolerance);
    allSame = allSame && same;
    hostOk = hostOk && hostGood;
    err = std::max(err, c.err);
    dropped += c.dropped;
    routed += " [";
    for (size_t e = 0; e < c.routed.size(); ++e) routed += (e ? " " : "") + std::to_string(c.routed[e]);
    routed += "]";
  }
};

int runMoe(sk::Session& ss, uint32_t rank, MoeShape m) {
  // The default: twice a balanced share, and never more rows than a rank has tokens.
  if (m.capacity == 0) m.capacity = std::min(m.tokens, (2 * m.tokens + m.experts - 1) / m.experts);
  if (std::string why = moeShapeError(m); !why.empty()) return fail("shape", why, 2);
  auto build = [&](bool reference) -> sk::Expected<sk::CompiledPlan> {
    sk::Graph g;
    SK_RETURN_IF_ERROR(recordMoe(g, m, reference));
    return ss.compile(g);
  };
  auto ep = build(false);
  if (!ep) return fail("compile", ep.error().message(), 3);
  if (ep->steps.size() != 1)
    return fail("plan", "the MoE step is " + std::to_string(ep->steps.size()) + " launches, not one SuperKernel", 1);
  auto ref = build(true);
  if (!ref) return fail("compile (1-rank reference)", ref.error().message(), 3);
  auto bEp = sk::BufferSet::create(ep->list);
  auto bRef = sk::BufferSet::create(ref->list);
  if (!bEp || !bRef) return fail("buffers", "allocation failed", 4);
  const MoeWeights w = moeWeights(m);
  loadMoeWeights(*bEp, *bRef, w, m, rank);
  MoeTally tally;
  for (int64_t step = 0; step < m.steps; ++step) {
    fillTokens(*bEp, m, rank, step);
    fillTokens(*bRef, m, rank, step);
    if (sk::Status st = ss.run(*ep, *bEp); !st) return fail("run", st.error().message(), 4);
    if (sk::Status st = ss.run(*ref, *bRef); !st) return fail("run (1-rank reference)", st.error().message(), 4);
    const bool same = std::memcmp(moeBuf(*bEp, "out"), moeBuf(*bRef, "out"), bEp->bytes(size_t(bEp->find("out")))) == 0;
    tally.add(rank, step, same, hostCheck(m, w, *bEp));
  }
  // Every line names its rank: mpirun interleaves the ranks' lines.
  std::printf("tp_decode --moe: rank %u of %lld, %lld tokens x d %lld, capacity %lld per expert, %lld steps in one "
              "SuperKernel each\n  rank %u: tokens to each expert, per step:%s; dropped: %lld\n  rank %u: equal to "
              "the 1-rank reference bit for bit: %s; host check max error %.3g (tolerance %.0e): %s\n",
              rank, (long long)m.experts, (long long)m.tokens, (long long)m.d, (long long)m.capacity,
              (long long)m.steps, rank, tally.routed.c_str(), (long long)tally.dropped, rank,
              tally.allSame ? "yes" : "DIFFERENT", tally.err, kMoeTolerance, tally.hostOk ? "ok" : "FAILED");
  return tally.allSame && tally.hostOk ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Shape s;
  int tokens = 16, samples = 0;
  bool moe = false;
  MoeShape m;
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
    else if (k == "--moe-tokens") m.tokens = v;
    else if (k == "--moe-capacity") m.capacity = v < 1 ? -1 : v;  // 0 would mean the default
    else if (k == "--moe-steps") m.steps = v;
    else
      return fail("usage", "tp_decode [--tokens T] [--bench S] [--d D] [--f F] [--layers L] "
                           "[--moe [--moe-tokens N] [--moe-capacity C] [--moe-steps S]]", 2);
  }
  auto comm = sk::mpiCommunicator();
  if (!comm) return fail("MPI", comm.error().message(), 2);
  const uint32_t rank = (*comm)->rank(), ranks = (*comm)->size();
  sk::SessionOptions so;
  so.communicator = *comm;
  auto session = sk::Session::create(so);
  if (!session) return fail("session", session.error().message(), 3);
  sk::Session& ss = **session;
  if (moe) {
    m.d = s.d;
    m.experts = ranks;
    const int rc = runMoe(ss, rank, m);
    if (rc == 0) sk::finalizeMpi();
    return rc;
  }
  if (s.d % ranks || s.f % ranks) return fail("shape", "D and F must be multiples of the ranks", 2);

  auto build = [&](uint32_t r, Mode mode, bool fuse, sk::Session& on) -> sk::Expected<sk::CompiledPlan> {
    sk::Graph g;
    SK_RETURN_IF_ERROR(record(g, s, r, mode));
    sk::CompileRequest req;
    req.fuse = fuse;
    return on.compile(g, req);
  };
  auto tp = build(ranks, Mode::Fused, true, ss);
  if (!tp) return fail("compile", tp.error().message(), 3);
  auto ref = build(1, Mode::Fused, true, ss);
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
    auto split = build(ranks, Mode::Split, true, ss);
    auto perOp = build(ranks, Mode::Fused, false, ss);
    auto compute = build(ranks, Mode::Compute, true, ss);
    if (!split || !perOp || !compute)
      return fail("compile (bench)", (!split ? split.error() : !perOp ? perOp.error() : compute.error()).message(), 3);
    struct Variant {
      const char* name;
      sk::CompiledPlan* plan;
      sk::Session* session;
      std::vector<double> ms;
    };
    std::vector<Variant> vs = {{"fused", &*tp, &ss, {}},
                               {"split", &*split, &ss, {}},
                               {"per-op", &*perOp, &ss, {}},
                               {"compute", &*compute, &ss, {}}};
    // The same two plans over MPI messages, when the default went through shared memory (made on every rank:
    // making a communicator is collective).
    const bool shm = ranks > 1 && (*comm)->describe().find("shared memory") != std::string::npos;
    std::unique_ptr<sk::Session> mpiSession;
    std::optional<sk::CompiledPlan> fusedMpi, splitMpi;
    if (shm) {
      auto mc = sk::mpiCommunicator(nullptr, {sk::CollectiveTransport::Mpi, std::nullopt});
      if (!mc) return fail("MPI", mc.error().message(), 2);
      sk::SessionOptions mo;
      mo.communicator = *mc;
      auto ms = sk::Session::create(mo);
      if (!ms) return fail("session", ms.error().message(), 3);
      mpiSession = std::move(*ms);
      auto f = build(ranks, Mode::Fused, true, *mpiSession);
      auto sp = build(ranks, Mode::Split, true, *mpiSession);
      if (!f || !sp) return fail("compile (bench, MPI)", (!f ? f.error() : sp.error()).message(), 3);
      fusedMpi = std::move(*f);
      splitMpi = std::move(*sp);
      vs.push_back({"fused/mpi", &*fusedMpi, mpiSession.get(), {}});
      vs.push_back({"split/mpi", &*splitMpi, mpiSession.get(), {}});
    }
    const size_t kVariants = vs.size();
    auto bufs = sk::BufferSet::create(tp->list);  // one layout: every variant's list has the same buffers
    if (!bufs) return fail("buffers", "allocation failed", 4);
    fillWeights(*bufs, tp->list, s, rank, ranks);
    for (int i = -1; i < samples; ++i) {  // sample -1: warm-up
      for (size_t j = 0; j < kVariants; ++j) {
        Variant& v = vs[(size_t(i + 1) + j) % kVariants];  // the variant that starts rotates
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < tokens; ++t)
          if (sk::Status st = v.session->run(*v.plan, *bufs); !st) return fail(v.name, st.error().message(), 4);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (i >= 0) v.ms.push_back(ms / tokens);
      }
    }
    if (rank == 0) {
      std::printf("bench: %d samples of %d tokens per variant, interleaved, after one warm-up; rank 0's ms per decode step\n"
                  "  collectives: %s%s\n",
                  samples, tokens, (*comm)->describe().c_str(), shm ? " (x/mpi: the same plan over MPI messages)" : "");
      double fusedMed = 0, computeMed = 0, fusedMpiMed = 0;
      for (Variant& v : vs) {
        std::vector<double> m = v.ms;
        std::sort(m.begin(), m.end());
        const double med = m[m.size() / 2];
        if (fusedMed == 0) fusedMed = med;
        if (fusedMpi && v.plan == &*fusedMpi) fusedMpiMed = med;
        if (v.plan == &*compute) {
          computeMed = med;
          std::printf("  %-9s %8.3f ms/step (min %.3f, max %.3f)  %zu launches/step  (no collectives)\n", v.name, med,
                      m.front(), m.back(), v.plan->steps.size());
          continue;
        }
        std::printf("  %-9s %8.3f ms/step (min %.3f, max %.3f)  %zu launches/step  fused speedup %.2fx\n", v.name, med,
                    m.front(), m.back(), v.plan->steps.size(), med / fusedMed);
      }
      // What one collective costs inside the step: (fused - compute) / collectives per step, medians.
      const double perStep = double(2 * s.layers);
      auto each = [&](double f) { return 1000.0 * std::max(0.0, f - computeMed) / perStep; };
      std::printf("  collectives' share of the fused step: %.0f%% (fused - compute, of fused, medians), %.1f us per "
                  "collective\n",
                  100.0 * std::max(0.0, fusedMed - computeMed) / fusedMed, each(fusedMed));
      if (shm)
        std::printf("  over MPI messages: %.0f%% of fused/mpi, %.1f us per collective\n",
                    100.0 * std::max(0.0, fusedMpiMed - computeMed) / fusedMpiMed, each(fusedMpiMed));
    }
  }
  sk::finalizeMpi();
  return 0;
}
