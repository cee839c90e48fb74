#!/usr/bin/env bash
# Regenerate the cuda emitter's golden files (tests/cuda/golden/*.cu) from the
# current emitter, check them with nvcc, then show what changed. The tests
# never rewrite goldens on their own; review the diff before committing.
#   scripts/regen-cuda-goldens.sh [BUILD_DIR]      (default: build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSK_WERROR=ON >/dev/null
fi
cmake --build "$build" --target sk_test_cuda
SK_REGEN_GOLDENS=1 "$build/tests/sk_test_cuda" --gtest_filter='CudaCodegen.Golden*:-CudaCodegen.GoldensCompileWithNvcc'
# Then compare and compile the fresh goldens as a normal run would.
"$build/tests/sk_test_cuda" --gtest_filter='CudaCodegen.Golden*'
git -C "$root" --no-pager diff --stat -- tests/cuda/golden || true
