// Uses the installed headers and library: parse options, run an SPMD launch.
#include <superkernel/frontend/Options.h>
#include <superkernel/runtime/Executor.h>

#include <atomic>
#include <cstdio>

namespace {
std::atomic<unsigned> blocksRun{0};
void block(void*, const sk_ctx*) { blocksRun.fetch_add(1); }
}  // namespace

int main() {
  auto options = sk::parseOptions("early-start=2:preload-code=none");
  if (!options || options->earlyStart != 2) {
    std::fprintf(stderr, "consumer: option parsing failed\n");
    return 1;
  }
  sk::Executor executor(sk::ExecutorOptions{2, 0});
  sk::Status st = executor.launch(block, nullptr, 7);
  if (!st || blocksRun.load() != 7) {
    std::fprintf(stderr, "consumer: launch failed\n");
    return 1;
  }
  std::puts("consumer ok");
  return 0;
}
