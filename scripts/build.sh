#!/usr/bin/env bash
# Configure and build one configuration (warnings are errors: SK_WERROR=ON).
#   scripts/build.sh                 -> build/release        (Release, system c++)
#   scripts/build.sh release-clang   -> build/release-clang  (Release, clang++, shared libraries)
#   scripts/build.sh asan            -> build/asan   (ASan + UBSan, -O1 with line tables, clang++, shared libraries, no bench,
#                                                    no cuda/gpu-label test binaries)
#   scripts/build.sh tsan            -> build/tsan   (TSan, -O1 -g1)
# Extra arguments after the config name are passed to the build (targets).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-release}; shift || true
compilers=()
case "$config" in
  release) san=""; type=Release ;;
  release-clang) san=""; type=Release
    compilers=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DBUILD_SHARED_LIBS=ON) ;;
  # clang++ and shared libraries here too: CI's one sanitizer build is also its
  # clang build and its shared-library build (the install test runs in it).
  # -O1 with line tables only: the reports keep file:line, and the build
  # (CI's longest after the README's) costs far less than -O2 -g.
  asan) san="address;undefined"; type=RelWithDebInfo
    compilers=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DBUILD_SHARED_LIBS=ON
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" -DSK_BUILD_BENCH=OFF
      -DSK_BUILD_CUDA_TESTS=OFF) ;;  # its run leaves labels cuda and gpu out (.ci/run): their binaries are not built
  # -O1 with minimal debug info (-g1: line tables, g++ has no -gline-tables-only)
  # for TSan as well: its reports keep file:line, and the build costs far less than -O2 -g.
  tsan) san="thread"; type=RelWithDebInfo
    compilers=("-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG") ;;
  *) echo "build.sh: unknown configuration '$config' (release, release-clang, asan, tsan)" >&2; exit 2 ;;
esac
jobs=${SK_BUILD_JOBS:-$(nproc)}
cmake -S "$root" -B "$root/build/$config" -G Ninja \
  -DCMAKE_BUILD_TYPE="$type" -DSK_WERROR=ON -DSK_SANITIZE="$san" "${compilers[@]}" >/dev/null
if [ $# -gt 0 ]; then
  cmake --build "$root/build/$config" -j "$jobs" --target "$@"
else
  cmake --build "$root/build/$config" -j "$jobs"
fi
