// A generation loop through sk::Session: one attention layer of a tiny model
// (q/k/v projections, RoPE at the position, KV-cache append, decode attention,
// output projection) recorded once, compiled once, then run token after token.
// The position is a buffer the host writes before each run: rope, the cache
// append and attention read it on the device at launch (sk::argFrom), so no
// token compiles anything (the example checks the cache's compile counter).
// Each token's output becomes the next token's input on the host.
//
// Built and run by ctest (examples.api_generate_loop) and, against an
// installed prefix, by the install test.
#include <superkernel/superkernel.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {
constexpr int64_t kHidden = 64, kHeads = 4, kKvHeads = 2, kDim = 16, kCap = 32, kTokens = 12;

int fail(const char* what, const sk::Error& e) {
  std::fprintf(stderr, "generate_loop: %s: %s\n", what, e.message().c_str());
  return 1;
}

std::vector<float> weights(size_t n, uint32_t seed) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    w[i] = (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f) * 0.25f;
  }
  return w;
}
}  // namespace

int main() {
  auto session = sk::Session::create();
  if (!session) return fail("session", session.error());
  sk::Session& s = **session;

  const int64_t q = kHeads * kDim, kv = kKvHeads * kDim;
  std::vector<float> x(kHidden, 0.5f), wq = weights(q * kHidden, 1), wk = weights(kv * kHidden, 2),
                     wv = weights(kv * kHidden, 3), wo = weights(kHidden * q, 4);
  std::vector<float> qv(q), qr(q), kvk(kv), kr(kv), vv(kv), attn(q), y(kHidden);
  std::vector<float> kcache(kCap * kv), vcache(kCap * kv);
  std::vector<int64_t> pos(1, 0);

  sk::Graph g;
  sk::Status st;
  for (auto [name, builtin] : {std::pair{"gemv", "gemv_f32"}, {"rope", "rope_f32"}, {"append", "kv_append_f32"},
                               {"attention", "attn_decode_f32"}})
    if (st) st = g.addBuiltinKernel(name, builtin);
  struct Buf {
    const char* name;
    std::vector<float>* data;
    std::vector<int64_t> shape;
  };
  for (const Buf& b : {Buf{"x", &x, {kHidden}}, Buf{"wq", &wq, {q, kHidden}}, Buf{"wk", &wk, {kv, kHidden}},
                       Buf{"wv", &wv, {kv, kHidden}}, Buf{"wo", &wo, {kHidden, q}}, Buf{"q", &qv, {q}},
                       Buf{"q_rope", &qr, {q}}, Buf{"k", &kvk, {kv}}, Buf{"k_rope", &kr, {kv}}, Buf{"v", &vv, {kv}},
                       Buf{"attn", &attn, {q}}, Buf{"y", &y, {kHidden}}, Buf{"k_cache", &kcache, {kCap, kv}},
                       Buf{"v_cache", &vcache, {kCap, kv}}})
    if (st) st = g.addBuffer(b.name, sk::DType::F32, b.shape, b.data->data());
  if (st) st = g.addBuffer("pos", sk::DType::I64, {1}, pos.data());
  {
    sk::Scope scope(g, "layer");
    auto launch = [&](const char* name, const char* kernel, uint32_t blocks,
                      std::vector<std::pair<std::string, sk::ArgValue>> args) {
      sk::LaunchDesc l;
      l.name = name;
      l.kernel = kernel;
      l.blockDim = blocks;
      l.args = std::move(args);
      if (st) st = g.launch(l);
    };
    for (auto [name, w, out, rows] : {std::tuple{"q_proj", "wq", "q", q}, {"k_proj", "wk", "k", kv},
                                      {"v_proj", "wv", "v", kv}})
      launch(name, "gemv", 4, {{"w", sk::arg(w)}, {"x", sk::arg("x")}, {"y", sk::arg(out)},
                               {"rows", sk::arg(rows)}, {"cols", sk::arg(kHidden)}});
    launch("rope_q", "rope", 2, {{"x", sk::arg("q")}, {"y", sk::arg("q_rope")}, {"heads", sk::arg(kHeads)},
                                 {"dim", sk::arg(kDim)}, {"pos", sk::argFrom("pos")}, {"theta", sk::arg(10000.0)}});
    launch("rope_k", "rope", 2, {{"x", sk::arg("k")}, {"y", sk::arg("k_rope")}, {"heads", sk::arg(kKvHeads)},
                                 {"dim", sk::arg(kDim)}, {"pos", sk::argFrom("pos")}, {"theta", sk::arg(10000.0)}});
    launch("append", "append", 2, {{"k", sk::arg("k_rope")}, {"v", sk::arg("v")}, {"k_cache", sk::arg("k_cache")},
                                   {"v_cache", sk::arg("v_cache")}, {"row", sk::arg(kv)}, {"cap", sk::arg(kCap)},
                                   {"pos", sk::argFrom("pos")}});
    launch("attention", "attention", 2,
           {{"q", sk::arg("q_rope")}, {"k_cache", sk::arg("k_cache")}, {"v_cache", sk::arg("v_cache")},
            {"out", sk::arg("attn")}, {"heads", sk::arg(kHeads)}, {"kv_heads", sk::arg(kKvHeads)},
            {"dim", sk::arg(kDim)}, {"cap", sk::arg(kCap)}, {"pos", sk::argFrom("pos")},
            {"scale", sk::arg(1.0 / std::sqrt(double(kDim)))}});
    launch("o_proj", "gemv", 4, {{"w", sk::arg("wo")}, {"x", sk::arg("attn")}, {"y", sk::arg("y")},
                                 {"rows", sk::arg(kHidden)}, {"cols", sk::arg(q)}});
  }
  if (!st) return fail("recording", st.error());
  auto plan = s.compile(g);
  if (!plan) return fail("compile", plan.error());
  auto before = s.cache()->stats();
  if (!before) return fail("cache stats", before.error());

  for (int64_t t = 0; t < kTokens; ++t) {
    pos[0] = t;  // the host writes the position; the next run reads it on the device
    st = s.run(*plan, g.hostPointers().data(), g.hostPointers().size());
    if (!st) return fail("run", st.error());
    double norm = 0;
    for (float v : y) norm += double(v) * v;
    if (!std::isfinite(norm)) return std::fprintf(stderr, "generate_loop: token %lld is not finite\n", (long long)t), 1;
    std::printf("token %2lld: |y| = %.6f\n", static_cast<long long>(t), std::sqrt(norm));
    for (int64_t i = 0; i < kHidden; ++i) x[size_t(i)] = 0.5f * x[size_t(i)] + y[size_t(i)];  // the next input
  }

  auto after = s.cache()->stats();
  if (!after) return fail("cache stats", after.error());
  if (after->compiles != before->compiles) {
    std::fprintf(stderr, "generate_loop: %llu compiles during the loop (expected none)\n",
                 static_cast<unsigned long long>(after->compiles - before->compiles));
    return 1;
  }
  std::printf("generate_loop ok: %lld tokens, one plan, no compile after the first\n", (long long)kTokens);
  return 0;
}
