#!/usr/bin/env bash
# Regenerate the codegen golden files (tests/codegen/golden/*.cpp) from the
# current emitter, then show what changed. The tests never rewrite goldens on
# their own; review the diff before committing.
#   scripts/regen-goldens.sh [BUILD_DIR]      (default: build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSK_WERROR=ON >/dev/null
fi
cmake --build "$build" --target sk_test_codegen
SK_REGEN_GOLDENS=1 "$build/tests/sk_test_codegen" --gtest_filter='CpuCodegen.Golden*:-CpuCodegen.GoldensCompile'
# Then check the fresh goldens with the compiler and compare as a normal run would.
"$build/tests/sk_test_codegen" --gtest_filter='CpuCodegen.Golden*'
git -C "$root" --no-pager diff --stat -- tests/codegen/golden || true
