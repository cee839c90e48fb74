#!/usr/bin/env bash
# The main job: set up, build sk-compile, then plan, compile, cache and run an
# example op list fused and unfused, printing the plan report and both times.
#   scripts/run-example.sh [OPLIST.json] [sk-compile flags...]
# Default: the 61-layer decode stack (examples/decode_stack/decode_stack.json).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
oplist=${1:-$root/examples/decode_stack/decode_stack.json}; shift || true
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release sk-compile sk-cache
exec "$root/build/release/tools/sk-compile" --run "$oplist" "$@"
