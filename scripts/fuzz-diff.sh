#!/usr/bin/env bash
# Random differential testing at scale (tests/session/DifferentialTest.cpp):
# N seeded random op lists, each compiled fused and checked against an
# independent reference of the final buffers. CI runs 4 of them; run many
# here (nightly). A failure prints the seed and a minimised op list, also
# written to build/release/tests/fuzz-diff-<seed>.json.
#   scripts/fuzz-diff.sh N [FIRST_SEED]      e.g. scripts/fuzz-diff.sh 500 1000
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
count=${1:?usage: scripts/fuzz-diff.sh N [FIRST_SEED]}
first=${2:-1}
case "$count$first" in *[!0-9]*) echo "fuzz-diff.sh: N and FIRST_SEED are numbers" >&2; exit 2 ;; esac
bash "$root/scripts/build.sh" release sk_test_session >/dev/null
cd "$root/build/release"
SK_FUZZ_SEEDS="$count" SK_FUZZ_SEED_BASE="$first" SK_LOG_LEVEL="${SK_LOG_LEVEL:-error}" \
  exec ./tests/sk_test_session --gtest_filter='Differential.RandomOpListsMatchTheReference'
