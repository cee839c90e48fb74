#!/usr/bin/env bash
# Configure and build one configuration.
#   scripts/build.sh                 -> build/release
#   scripts/build.sh asan            -> build/asan   (ASan + UBSan)
#   scripts/build.sh tsan            -> build/tsan   (TSan)
# Extra arguments after the config name are passed to the build (targets).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-release}; shift || true
case "$config" in
  release) san="" ;;
  asan) san="address;undefined" ;;
  tsan) san="thread" ;;
  *) echo "build.sh: unknown configuration '$config' (release, asan, tsan)" >&2; exit 2 ;;
esac
jobs=${SK_BUILD_JOBS:-$(nproc)}
cmake -S "$root" -B "$root/build/$config" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSK_SANITIZE="$san" >/dev/null
if [ $# -gt 0 ]; then
  cmake --build "$root/build/$config" -j "$jobs" --target "$@"
else
  cmake --build "$root/build/$config" -j "$jobs"
fi
