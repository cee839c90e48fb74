#!/usr/bin/env bash
# The main job: set up, build sk-compile, then plan, compile, cache and run an
# example op list fused and unfused, printing the plan report and both times.
# For the default decode stack it then runs the benchmark's decode section
# (bench/suite.cpp, same sampling method as docs/PERFORMANCE.md: interleaved
# repetitions, medians of batched samples, min–max) on the 61-layer stack and
# on a latency-bound configuration (hidden 128, decode_small), printing per
# decode step: fused SuperKernel vs unfused (one launch per op) vs a
# barrier-per-op pool (the ggml way) vs the no-sync ideal, plus the fused
# stack with the previous builtin kernels. Then the same stack as a decode
# loop (examples/decode_loop: the position read at run time, KV caches of 256
# rows, each step's output fed to the next): sk-compile --tokens 32 checks
# every token fused vs unfused and prints tokens per second, and the
# benchmark's loop section adds the barrier-per-op pool, for the 61-layer and
# the hidden-128 stacks. Last, the PyTorch part (examples/torch_decode): a
# Llama-style model file compiled unchanged with superkernel.torch, a prompt
# and 32 greedy tokens, tokens per second eager vs fused.
#   scripts/run-example.sh [OPLIST.json] [sk-compile flags...]
# Default: the 61-layer decode stack (examples/decode_stack/decode_stack.json).
# SK_EXAMPLE_COMPARE=0 skips the comparison; SK_NUM_WORKERS sets W.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
default=$root/examples/decode_stack/decode_stack.json
oplist=${1:-$default}; shift || true
"$root/scripts/setup.sh"
if [ "$oplist" != "$default" ] || [ "${SK_EXAMPLE_COMPARE:-1}" = 0 ]; then
  "$root/scripts/build.sh" release sk-compile sk-cache
  exec "$root/build/release/tools/sk-compile" --run "$oplist" "$@"
fi
"$root/scripts/build.sh" release sk-compile sk-cache sk_bench_suite sk_python
"$root/build/release/tools/sk-compile" --run "$oplist" "$@"

out=$root/build/example-results
rm -rf "$out/ops"
mkdir -p "$out"
w=${SK_NUM_WORKERS:-$(nproc)}
echo
echo "Decode step, fused vs unfused vs pool vs ideal ($w workers, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
python3 "$root/bench/gen_sweep.py" --out "$out/ops" --workers "$w" --chain-ops 2 --sweep-n "" --nodedup-layers 1 \
  --kernel-mib 1 --bd-list "$w" --bd-ops 2 >/dev/null
"$root/build/release/bench/sk_bench_suite" --ops "$out/ops" --out "$out" --only decode \
  --stacks decode_stack,decode_small --reps 5

echo
echo "Decode loop: 32 tokens of examples/decode_loop (one compiled plan serves every token):"
"$root/build/release/tools/sk-compile" --tokens 32 "$root/examples/decode_loop/decode_loop.json" "$@"
echo
echo "Decode loop, tokens per second: fused vs unfused vs pool ($w workers, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
"$root/build/release/bench/sk_bench_suite" --ops "$out/ops" --out "$out" --only loop --reps 5 --loop-tokens 32

echo
echo "PyTorch: a Llama-style model file compiled unchanged with superkernel.torch, eager vs fused ($w workers, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
PYTHONPATH="$root/build/release/python" OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 "$root/examples/torch_decode/decode_loop.py" \
  --tokens 32 --workers "$w"
