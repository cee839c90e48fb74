#!/usr/bin/env bash
# The cuda back end's GPU check, for a machine with an NVIDIA GPU (H100/H200):
# builds (or takes a carried build), runs the `gpu` and `cuda` tests, and
# writes a report with the GPU, driver and clocks.
#   scripts/gpu-check.sh [REPORT_DIR]        (default: build/gpu-check; $OUT when set)
# Environment: SK_GPU_BUILD_DIR=<dir> uses an existing build instead of building
# build/release; SK_NVCC as for the library.
#
# Status: written without a GPU and NEVER RUN yet (see docs/CUDA.md), like
# bench/cuda/boundary_bench.cu, which it builds and runs. The decode-stack
# benchmark (vs launch per op / CUDA Graphs / Graphs + PDL) does not exist yet.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
report_dir=${1:-${OUT:-$root/build/gpu-check}}
mkdir -p "$report_dir"
report="$report_dir/gpu-check.md"
build=${SK_GPU_BUILD_DIR:-$root/build/release}
log() { printf '%s\n' "$*" | tee -a "$report"; }
: >"$report"
log "# superkernel gpu-check ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
log ""
log "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if command -v nvidia-smi >/dev/null; then
  log '```'
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv 2>&1 | tee -a "$report"
  log '```'
else
  log "nvidia-smi: not found"
fi
nvcc=${SK_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
log "nvcc: $nvcc ($("$nvcc" --version 2>/dev/null | tail -1))"

if [ -z "${SK_GPU_BUILD_DIR:-}" ]; then
  log ""
  log "## build"
  if ! SK_BUILD_JOBS=${SK_BUILD_JOBS:-$(nproc)} bash "$root/scripts/build.sh" release >"$report_dir/build.log" 2>&1; then
    log "build FAILED (see build.log)"; tail -30 "$report_dir/build.log" | tee -a "$report"; exit 1
  fi
  log "build ok"
fi

status=0
for label in gpu cuda; do
  log ""
  log "## ctest -L $label"
  (cd "$build" && ctest -L "^${label}\$" --output-on-failure -j1 >"$report_dir/ctest-$label.log" 2>&1) || status=1
  tail -15 "$report_dir/ctest-$label.log" | tee -a "$report" >/dev/null
  log '```'; grep -E 'tests passed|tests failed|Skipped|\*\*\*' "$report_dir/ctest-$label.log" | tail -20 >>"$report"; log '```'
done

log ""
log "## benchmarks"
log "bench/cuda/boundary_bench.cu: per-boundary cost, launch per op vs CUDA Graph vs Graph + PDL vs persistent"
log "local/flag/counter/barrier edges (the decode-stack comparison is not written yet, docs/CUDA.md)."
if "$nvcc" -O3 -std=c++17 -arch=sm_90 -I"$root/runtime/cuda/include" "$root/bench/cuda/boundary_bench.cu" \
    -o "$report_dir/boundary_bench" >"$report_dir/bench-build.log" 2>&1; then
  for ops in 16 64 256; do
    "$report_dir/boundary_bench" "$ops" 30 20 2>&1 | tee -a "$report" || status=1
    log ""
  done
else
  log "boundary_bench did not build (bench-build.log)"; status=1
fi
log ""
log "exit status: $status"
exit $status
