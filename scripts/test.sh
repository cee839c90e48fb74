#!/usr/bin/env bash
# Set up, build and run the test suite (the README's test command).
#   scripts/test.sh                  release build, every test
#   scripts/test.sh asan             ASan+UBSan build, every test
#   scripts/test.sh tsan             TSan build of the runtime, cache and cuda simulator tests only
# Extra arguments go to ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-release}; shift || true
"$root/scripts/setup.sh"
if [ "$config" = tsan ]; then
  # TSan is for the concurrent parts: the executor/primitives, the cache and the cuda simulator's engine.
  "$root/scripts/build.sh" tsan sk_test_runtime sk_test_cache sk_test_cuda_sim
  set -- -L 'runtime|cache|cuda-sim' "$@"
else
  "$root/scripts/build.sh" "$config"
fi
cd "$root/build/$config"
ctest --output-on-failure -j "$(nproc)" --timeout 900 "$@"
