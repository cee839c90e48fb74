#!/usr/bin/env bash
# Set up, build and run the whole test suite (the README's test command).
#   scripts/test.sh [release|asan|tsan] [ctest args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-release}; shift || true
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$config"
# Each test uses a private cache dir; keep the user's cache out of it.
export SK_CACHE_DIR_FOR_TESTS="$root/build/$config/test-cache"
cd "$root/build/$config"
ctest --output-on-failure -j "$(nproc)" --timeout 600 "$@"
