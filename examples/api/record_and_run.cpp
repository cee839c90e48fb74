// The C++ API end to end: record launches into a Graph, fuse a scope into a
// SuperKernel, run it on engine-owned memory, check the result. Quoted by the
// README; built and run as a test (ctest -R examples.api).
#include <superkernel/superkernel.h>

#include <cstdio>
#include <vector>

int main() {
  auto session = sk::Session::create();                  // executor + clang++ + cache
  if (!session) return std::fprintf(stderr, "%s\n", session.error().message().c_str()), 3;

  std::vector<float> x(4096, 1.0f), y(4096, 2.0f), t(4096), out(4096);
  sk::Graph g;
  (void)g.addBuiltinKernel("add", "add_f32");            // kernels/cpu/add_f32.json
  for (auto [name, data] : {std::pair{"x", &x}, {"y", &y}, {"t", &t}, {"out", &out}})
    (void)g.addBuffer(name, sk::DType::F32, {4096}, data->data());
  {
    sk::Scope scope(g, "sk1", "early-start=1");          // these two launches fuse
    (void)g.launch({.name = "add_0", .kernel = "add", .blockDim = 40,
                    .args = {{"x", sk::arg("x")}, {"y", sk::arg("y")}, {"z", sk::arg("t")}, {"n", sk::arg(4096)}}});
    sk::Status st = g.launch({.name = "add_1", .kernel = "add", .blockDim = 40,
                              .args = {{"x", sk::arg("t")}, {"y", sk::arg("y")}, {"z", sk::arg("out")},
                                       {"n", sk::arg(4096)}}});
    if (!st) return std::fprintf(stderr, "%s\n", st.error().message().c_str()), 2;
  }
  auto plan = (*session)->compile(g);                     // plan, generate, compile, cache, dlopen
  if (!plan) return std::fprintf(stderr, "%s\n", plan.error().message().c_str()), 3;
  sk::Status st = (*session)->run(*plan, g.hostPointers().data(), g.hostPointers().size());
  if (!st) return std::fprintf(stderr, "%s\n", st.error().message().c_str()), 4;

  std::printf("%zu launches -> %zu step(s); out[0] = %g\n", g.opList().ops.size(), plan->steps.size(), out[0]);
  return out[0] == 5.0f && out[4095] == 5.0f ? 0 : 1;
}
