#!/usr/bin/env bash
# Build the benchmarks (release), run all of them, write the results under
# build/bench-results/ and regenerate docs/img/*.png (docs/PERFORMANCE.md).
#
#   scripts/bench.sh                 full run (about 2-3 min on 2 cores, most of
#                                    it compiling the first time)
#   scripts/bench.sh --smoke         every benchmark on small inputs, < ~90 s
#                                    once built (CI: keeps bench/ from rotting);
#                                    plots go to build/bench-results/smoke/img
#   scripts/bench.sh --workers N     W = N executor workers (SK_NUM_WORKERS) and
#                                    op lists generated for N; a list 2,4,8,16
#                                    runs once per count, results in OUT/wN/
#   scripts/bench.sh [--smoke] -- ARGS   extra arguments for sk_bench_suite
#                                    (e.g. --only decode,sweep  --reps 9)
# Environment: SK_BENCH_BUILD (build dir, default build/release),
#              SK_BENCH_OUT (results dir, default build/bench-results[/smoke]),
#              SK_BENCH_LAYERS (decode-stack layers, default 61).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
smoke=0
workers=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --workers)
      shift
      workers=${1:-}
      if ! [[ "$workers" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]]; then
        echo "bench.sh: --workers needs N or a list N,M,... of positive integers (got '${workers}')" >&2
        exit 2
      fi ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (--smoke, --workers N[,M...], -- ARGS)" >&2; exit 2 ;;
  esac
  shift
done

build=${SK_BENCH_BUILD:-$root/build/release}
if [ -z "${SK_BENCH_BUILD:-}" ]; then
  "$root/scripts/build.sh" release sk_bench_suite
else
  cmake --build "$build" -j "${SK_BUILD_JOBS:-$(nproc)}" --target sk_bench_suite
fi
suite="$build/bench/sk_bench_suite"

run_one() {
  local w=$1 sub=$2
  if [ "$smoke" = 1 ]; then
    out=${SK_BENCH_OUT:-$root/build/bench-results/smoke}$sub
    img="$out/img"
    gen=(--chain-ops 32 --sweep-ops 16 --sweep-n 4096,65536 --decode-layers 1 --nodedup-layers 1 --kernel-mib 8
         --bd-ops 32 --small-layers 1 --a2a-ops 32 --fanin-ops 16 --fanin-blocks 4)
    run=(--smoke --no-session-unfused)
  else
    out=${SK_BENCH_OUT:-$root/build/bench-results}$sub
    img="$root/docs/img"
    if [ -n "$sub" ]; then img="$out/img"; fi  # docs/img comes from the default run
    gen=()
    run=()
  fi
  if [ -n "${SK_BENCH_LAYERS:-}" ]; then gen+=(--decode-layers "$SK_BENCH_LAYERS"); fi
  if [ -n "$w" ]; then gen+=(--workers "$w"); fi
  mkdir -p "$out" "$img"
  rm -rf "$out/ops"

  # The machine the numbers come from (docs/PERFORMANCE.md quotes this file).
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (plus working tree)"
    echo "nproc: $(nproc)"
    echo "workers: ${SK_NUM_WORKERS:-$(nproc) (default)}"
    echo "SK_CPU_MASK: ${SK_CPU_MASK:-(unset: auto)}"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "cpu flags (simd): $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|fma|sse4_2)$' | tr '\n' ' ')"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel: $(uname -sr)"
    echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "jit compiler: $(${SK_CXX:-clang++} --version 2>/dev/null | head -1)"
  } > "$out/machine.txt"
  cat "$out/machine.txt"

  python3 "$root/bench/gen_sweep.py" --out "$out/ops" ${gen[@]+"${gen[@]}"}
  "$suite" --ops "$out/ops" --out "$out" ${run[@]+"${run[@]}"} ${extra[@]+"${extra[@]}"} | tee "$out/report.md"
  echo "loadavg at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"

  # The plots need the boundary, decode and sweep sections: a run limited
  # with --only to other sections has no plots (and leaves docs/img alone).
  local missing=""
  for csv in boundary.csv decode_decode_stack.csv decode_decode_stack_shared_weights.csv sweep.csv; do
    [ -f "$out/$csv" ] || missing+=" $csv"
  done
  if [ -n "$missing" ]; then
    echo "bench.sh: no plots (this run did not write$missing)"
  elif command -v gnuplot >/dev/null; then
    gnuplot -e "dir='$out'; img='$img'" "$root/bench/plot.gp"
    echo "bench.sh: plots in $img"
  else
    echo "bench.sh: gnuplot not found; no plots" >&2
  fi
  echo "bench.sh: results in $out"
}

# The PyTorch benchmarks (bench/torch_decode.py, bench/torch_matmul.py) need the Python
# package of the same build and Debian's python3 with torch.
run_torch() {
  cmake --build "$build" -j "${SK_BUILD_JOBS:-$(nproc)}" --target sk_python >/dev/null
  local targs=() out=${SK_BENCH_OUT:-$root/build/bench-results}
  if [ "$smoke" = 1 ]; then targs=(--smoke); out=${SK_BENCH_OUT:-$root/build/bench-results/smoke}; fi
  mkdir -p "$out"
  PYTHONPATH="$build/python" /usr/bin/python3 "$root/bench/torch_decode.py" ${targs[@]+"${targs[@]}"} \
    --cache-dir "$out/torch-cache" | tee "$out/torch_decode.md"
  PYTHONPATH="$build/python" /usr/bin/python3 "$root/bench/torch_matmul.py" ${targs[@]+"${targs[@]}"} \
    --cache-dir "$out/torch-cache" | tee "$out/torch_matmul.md"
}

if [ -z "$workers" ]; then
  run_one "" ""
elif [[ "$workers" != *,* ]]; then
  SK_NUM_WORKERS=$workers run_one "$workers" ""
else
  IFS=, read -r -a counts <<< "$workers"
  for n in "${counts[@]}"; do SK_NUM_WORKERS=$n run_one "$n" "/w$n"; done
fi
if [ -z "$workers" ] && [ ${#extra[@]} -eq 0 ]; then
  run_torch
fi
