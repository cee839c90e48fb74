#!/usr/bin/env bash
# Regenerate the ascend emitter's golden files (tests/ascend/golden/*.cpp),
# then run the golden tests normally (which also builds and runs each one in
# the simulator) and show what changed. Review the diff before committing.
#   scripts/regen-ascend-goldens.sh [BUILD_DIR]      (default: build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target sk_test_ascend
SK_REGEN_GOLDENS=1 "$build/tests/sk_test_ascend" --gtest_filter='AscendEmitterGolden.*'
"$build/tests/sk_test_ascend" --gtest_filter='AscendEmitterGolden.*'
git -C "$root" --no-pager diff --stat -- tests/ascend/golden || true
