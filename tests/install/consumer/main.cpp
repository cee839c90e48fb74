// Uses only the installed headers, library and data: parse options, run an
// SPMD launch, then compile a builtin kernel with the JIT compiler and run it
// (templates and runtime headers must come from the prefix, not a checkout).
#include <superkernel/superkernel.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
std::atomic<unsigned> blocksRun{0};
void block(void*, const sk_ctx*) { blocksRun.fetch_add(1); }

int fail(const char* what, const sk::Error& e) {
  std::fprintf(stderr, "consumer: %s: %s\n", what, e.message().c_str());
  return 1;
}
}  // namespace

int main() {
#ifdef SK_CONSUMER_DATA_DIR
  sk::setDefaultDataDir(SK_CONSUMER_DATA_DIR);  // pkg-config + static library
#endif
  auto options = sk::parseOptions("early-start=2:preload-code=none");
  if (!options || options->earlyStart != 2) return fail("option parsing", options.error());
  sk::Executor executor(sk::ExecutorOptions{2, 0});
  sk::Status st = executor.launch(block, nullptr, 7);
  if (!st || blocksRun.load() != 7) {
    std::fprintf(stderr, "consumer: launch failed\n");
    return 1;
  }

  sk::SessionOptions so;
  so.workers = 2;
  so.cacheDir = std::getenv("CONSUMER_CACHE_DIR");
  auto session = sk::Session::create(so);
  if (!session) return fail("session", session.error());
  std::vector<float> x(1000, 1.0f), y(1000, 2.0f), t(1000), out(1000);
  sk::Graph g;
  if (sk::Status s = g.addBuiltinKernel("add", "add_f32"); !s) return fail("builtin kernel", s.error());
  for (auto [name, data] : {std::pair{"x", &x}, {"y", &y}, {"t", &t}, {"out", &out}})
    if (sk::Status s = g.addBuffer(name, sk::DType::F32, {1000}, data->data()); !s) return fail("buffer", s.error());
  {
    sk::Scope scope(g, "sk1", "");
    for (auto [op, in, o] : {std::tuple{"add_0", "x", "t"}, {"add_1", "t", "out"}}) {
      sk::LaunchDesc l;
      l.name = op;
      l.kernel = "add";
      l.blockDim = 8;
      l.args = {{"x", sk::arg(in)}, {"y", sk::arg("y")}, {"z", sk::arg(o)}, {"n", sk::arg(1000)}};
      if (sk::Status s = g.launch(l); !s) return fail("launch", s.error());
    }
  }
  auto plan = (*session)->compile(g);
  if (!plan) return fail("compile", plan.error());
  st = (*session)->run(*plan, g.hostPointers().data(), g.hostPointers().size());
  if (!st) return fail("run", st.error());
  if (out[0] != 5.0f || out[999] != 5.0f) {
    std::fprintf(stderr, "consumer: wrong result %g\n", out[0]);
    return 1;
  }
  std::printf("consumer ok: %zu launches -> %zu step(s), out[0] = %g, data from %s\n", g.opList().ops.size(),
              plan->steps.size(), out[0], sk::dataTemplatesDir().parent_path().c_str());
  return 0;
}
