#!/usr/bin/env bash
# Build the op-list parser fuzzer with clang in build/fuzz and run it for a
# bounded time over a seed corpus made of the test op lists.
#   fuzz/run.sh [SECONDS]     (default 60)
# Exit status: 0 clean, non-zero when the fuzzer found a crash (the
# reproducer is left in build/fuzz/artifacts/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build="$root/build/fuzz"
cc=${SK_FUZZ_CC:-clang}
cxx=${SK_FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz/run.sh: $cxx not found (libFuzzer needs clang)" >&2
  exit 2
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DSK_BUILD_FUZZ=ON \
  -DSK_BUILD_TESTS=OFF -DSK_BUILD_BENCH=OFF -DSK_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" --target sk_fuzz_oplist -j "${SK_BUILD_JOBS:-$(nproc)}"
# Seeds: every test op list (copied, so the fuzzer never writes into tests/).
corpus="$build/corpus"
mkdir -p "$corpus" "$build/artifacts"
find "$root/tests" -name '*.json' -path '*/data/*' -exec cp -f {} "$corpus/" \;
# Findings go to artifacts/; new inputs to the working corpus only.
"$build/fuzz/sk_fuzz_oplist" "$corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/" -print_final_stats=1
