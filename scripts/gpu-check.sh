#!/usr/bin/env bash
# The cuda back end's GPU check, for a machine with an NVIDIA GPU (H100/H200).
# Builds build/release (or takes a build made elsewhere), then, each step with
# its own time limit so one hang cannot lose the rest of the report:
#   1. the smallest list fused vs unfused on the GPU (tests/cuda/data/tiny.json);
#   2. the gpu tests (sk_test_cuda_gpu), run directly in parallel shards;
#   3. GPU timings through sk-compile --run: decode layer, decode stack, and
#      the decode loop's tokens per second (--tokens);
#   3b. the decode stack and loop with preload-data=first-block / lookahead (the
#      L2 weight prefetch before each wait), against step 3's default (none);
#   4. bench/cuda/boundary_bench.cu: cost per op boundary, launch per op vs CUDA
#      Graph vs Graph + PDL vs the SuperKernel's persistent syncs;
#   5. the decode layer, stack and loop fused vs the same kernels unfused, as one
#      CUDA graph and as Graph + PDL with each launch's weights prefetched before
#      griddepcontrol.wait (sk-compile --baselines all);
#   6. bench/cuda/kernel_bw.cu: the builtin gemv kernels alone, GB/s against the
#      device's copy bandwidth;
#   7. collectives on NCCL's device API, 1 rank, cuda vs cpu (skipped where the
#      device has no libnccl.so.2).
# Steps 5-7 are new since the last run on a GPU: their device time is not known
# yet (step 5 builds the PDL variant of every unfused step with nvcc).
# It writes REPORT_DIR/gpu-check.md (GPU, driver, clocks, every result) and
# REPORT_DIR/gpu-logs.tar.gz (every step's full output).
#
#   scripts/gpu-check.sh [REPORT_DIR]        (default: build/gpu-check; $OUT when set)
#
# Environment:
#   SK_GPU_BUILD_DIR=<dir>   use that build instead of building build/release. The
#                            test binaries are run directly, so a build carried to a
#                            machine without CMake or the build's -dev packages works;
#                            SK_GPU_LIB_DIR=<dir> is then prepended to LD_LIBRARY_PATH
#                            for the shared libraries the binaries need.
#   SK_GPU_SHARDS=N          parallel shards of the gpu tests (default nproc/2, 1..8)
#   SK_GPU_STEP_TIMEOUT=S    each step's limit in seconds (default 300)
#   SK_GPU_BENCH=<file>      a boundary_bench already built (else nvcc builds it here)
#   SK_NVCC, SK_CXX          as for the library
#
# The test binaries have SK_SOURCE_ROOT (the checkout they were built in) compiled
# in, and build/<config>/share/superkernel links to that checkout's data: a build
# carried to another machine needs the checkout at the same path there (or a
# link to it), and the build at the path it was built in (the gpu tests spawn
# that sk-compile; the script says so when it is missing). First run:
# 2026-11-26 on an NVIDIA H200 (docs/PERFORMANCE.md,
# section 8), a build carried from the 2-core development machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
report_dir=${1:-${OUT:-$root/build/gpu-check}}
mkdir -p "$report_dir"
report="$report_dir/gpu-check.md"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
step_timeout=${SK_GPU_STEP_TIMEOUT:-300}
log() { printf '%s\n' "$*" | tee -a "$report"; }
: >"$report"

# Runs one step with its limit; its full output goes to $logs/<name>.log and
# the lines matching PATTERN (or the last 15) to the report.
step() {
  local name=$1 pattern=$2; shift 2
  local t0=$SECONDS rc
  timeout --kill-after=10 "$step_timeout" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  log ""
  log "### $name (exit $rc, $((SECONDS - t0)) s)"
  log '```'
  if [ -n "$pattern" ] && grep -qE "$pattern" "$logs/$name.log"; then
    grep -E "$pattern" "$logs/$name.log" | tail -40 | tee -a "$report"
  else
    tail -15 "$logs/$name.log" | tee -a "$report"
  fi
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "TIMED OUT after ${step_timeout} s" >>"$report"
  log '```'
  return $rc
}

log "# superkernel gpu-check ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
log ""
log "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (plus working tree)')"
log "host: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r)"
if command -v nvidia-smi >/dev/null; then
  log '```'
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv 2>&1 | tee -a "$report"
  log '```'
else
  log "nvidia-smi: not found"
fi
nvcc=${SK_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
log "nvcc: $nvcc ($("$nvcc" --version 2>/dev/null | tail -1))"
if [ -z "${SK_CXX:-}" ] && ! command -v clang++ >/dev/null; then
  # The cpu target (the reference of the tolerance tests) defaults to clang++.
  for c in g++ c++; do command -v "$c" >/dev/null && export SK_CXX=$c && break; done
fi
log "host compiler for the cpu target: ${SK_CXX:-clang++} ($(${SK_CXX:-clang++} --version 2>/dev/null | head -1))"

if [ -n "${SK_GPU_BUILD_DIR:-}" ]; then
  build=$SK_GPU_BUILD_DIR
  if [ -n "${SK_GPU_LIB_DIR:-}" ]; then export LD_LIBRARY_PATH=$SK_GPU_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
  log "build: carried ($build)"
else
  build=$root/build/release
  log ""
  if ! SK_BUILD_JOBS=${SK_BUILD_JOBS:-$(nproc)} bash "$root/scripts/build.sh" release >"$logs/build.log" 2>&1; then
    log "build FAILED"; tail -30 "$logs/build.log" | tee -a "$report"
    tar -czf "$report_dir/gpu-logs.tar.gz" -C "$logs" . ; exit 1
  fi
  log "build: ok ($build)"
fi
compile=$build/tools/sk-compile
gpu_tests=$build/tests/sk_test_cuda_gpu
for b in "$compile" "$gpu_tests"; do
  if ! [ -x "$b" ]; then log "missing: $b"; exit 1; fi
  if ldd "$b" | grep -q 'not found'; then log "unresolved libraries of $b:"; ldd "$b" | grep 'not found' | tee -a "$report"; exit 1; fi
done

status=0
# The gpu tests spawn the sk-compile they were built with (its path is compiled in): a carried build must
# sit at that path on this machine too, or every test fails with "posix_spawn failed".
spawned=$(strings "$gpu_tests" 2>/dev/null | grep -m1 '/tools/sk-compile$' || true)
if [ -n "$spawned" ] && ! [ -x "$spawned" ]; then
  log "the gpu tests spawn $spawned, which is missing here: put the build (or a link to it) at $(dirname "$(dirname "$spawned")")"
  status=1
fi
export SK_LOG_LEVEL=${SK_LOG_LEVEL:-warn}
cache=$(mktemp -d)

log ""
log "## 1. smallest list on the GPU"
step smoke 'identical|differ|Fused|Unfused|error|Error' \
  "$compile" "$root/tests/cuda/data/tiny.json" --target cuda --run --repeat 3 --cache-dir "$cache/tiny" || status=1

log ""
log "## 2. gpu tests (sk_test_cuda_gpu, fused vs unfused bit for bit; cuda vs cpu within tolerance)"
shards=${SK_GPU_SHARDS:-$(( $(nproc) / 2 ))}
[ "$shards" -lt 1 ] && shards=1
[ "$shards" -gt 8 ] && shards=8
pids=()
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout --kill-after=10 "$step_timeout" "$gpu_tests" \
    >"$logs/gpu-tests-$i.log" 2>&1 &
  pids+=($!)
done
t0=$SECONDS
for ((i = 0; i < shards; i++)); do
  wait "${pids[$i]}"; rc=$?
  [ "$rc" = 0 ] || status=1
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && log "shard $i TIMED OUT after ${step_timeout} s"
done
log "$shards shards, $((SECONDS - t0)) s"
log '```'
cat "$logs"/gpu-tests-*.log | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|tests? ran' | tee -a "$report"
log '```'
if grep -q '^\[  FAILED  \]' "$logs"/gpu-tests-*.log; then
  log "failure output:"
  log '```'
  cat "$logs"/gpu-tests-*.log | grep -B2 -A25 'Failure$' | head -150 | tee -a "$report"
  log '```'
fi

log ""
log "## 3. timings on the GPU (sk-compile --run: fused SuperKernel vs one launch per op, same process)"
timing='identical|differ|[Ff]used|[Uu]nfused|speedup|tokens|Tokens|error'
step decode_layer "$timing" "$compile" "$root/examples/decode_layer/decode_layer.json" --target cuda --run --repeat 15 \
  --cache-dir "$cache/layer" || status=1
step decode_stack "$timing" "$compile" "$root/examples/decode_stack/decode_stack.json" --target cuda --run --repeat 15 \
  --cache-dir "$cache/stack" || status=1
step decode_loop "$timing" "$compile" "$root/examples/decode_loop/decode_loop.json" --target cuda --tokens 32 --repeat 5 \
  --cache-dir "$cache/loop" || status=1

log ""
log "## 3b. weight prefetch (preload-data, issue 40 item 1; off by default on cuda until this table shows a gain)"
for pd in first-block lookahead; do
  step "decode_stack_preload_$pd" "$timing" "$compile" "$root/examples/decode_stack/decode_stack.json" --target cuda \
    --run --repeat 15 --options "preload-data=$pd" --cache-dir "$cache/stack-$pd" || status=1
done
step decode_loop_preload_lookahead "$timing" "$compile" "$root/examples/decode_loop/decode_loop.json" --target cuda \
  --tokens 32 --repeat 5 --options preload-data=lookahead --cache-dir "$cache/loop-lookahead" || status=1

log ""
log "## 4. per-boundary cost (bench/cuda/boundary_bench.cu)"
# A CUDA benchmark of bench/cuda: the binary given (built elsewhere, carried), else built here with nvcc; prints
# its path, or nothing (and logs why) when it did not build.
cuda_bench() {
  local given=$1 name=$2
  if [ -n "$given" ]; then echo "$given"; return; fi
  if "$nvcc" -O3 -std=c++17 -arch=sm_90 -I"$root/runtime/cuda/include" "$root/bench/cuda/$name.cu" \
      -o "$logs/$name" >"$logs/$name-build.log" 2>&1; then
    echo "$logs/$name"
  else
    log "$name did not build ($name-build.log)" >&2
  fi
}
bench=$(cuda_bench "${SK_GPU_BENCH:-}" boundary_bench)
[ -n "$bench" ] || status=1
if [ -n "$bench" ]; then
  for ops in 16 64 256; do
    # The table has 25 rows since issue 40: a pattern, not the default last 15 lines.
    step "boundary_$ops" '^(\||GPU:|chain:|command:)' "$bench" "$ops" 30 20 || status=1
  done
fi

log ""
log "## 5. the fair baseline (issue 40 item 4): the same unfused kernels as one CUDA graph and as Graph + PDL"
# After the boundary bench: the PDL variant is a second build of every unfused step (one nvcc run per distinct
# text), the one step here whose compile time is not known yet. Step 3's cache dirs hold the fused and unfused
# builds already.
baselines='identical|differ|[Ff]used|[Uu]nfused|graph|skipped|speedup|tokens|Tokens|error'
step decode_layer_baselines "$baselines" "$compile" "$root/examples/decode_layer/decode_layer.json" --target cuda \
  --run --repeat 15 --baselines all --cache-dir "$cache/layer" || status=1
step decode_stack_baselines "$baselines" "$compile" "$root/examples/decode_stack/decode_stack.json" --target cuda \
  --run --repeat 15 --baselines all --cache-dir "$cache/stack" || status=1
step decode_loop_baselines "$baselines" "$compile" "$root/examples/decode_loop/decode_loop.json" --target cuda \
  --tokens 32 --repeat 5 --baselines all --cache-dir "$cache/loop" || status=1

log ""
log "## 6. builtin gemv kernels alone, GB/s against the copy bandwidth (bench/cuda/kernel_bw.cu, issue 40 item 3)"
# Built like boundary_bench (SK_GPU_KERNEL_BW: one built elsewhere); about 10 s on the device: 12 kernel x shape
# rows of 15 samples, each a batch of 16 launches over 256 MB of weights, and a 1 GiB copy.
kernel_bw=$(cuda_bench "${SK_GPU_KERNEL_BW:-}" kernel_bw)
[ -n "$kernel_bw" ] || status=1
if [ -n "$kernel_bw" ]; then
  step kernel_bw '^(\||GPU:|copy:|command:)' "$kernel_bw" 15 16 || status=1
fi

log ""
log "## 7. collectives on NCCL's device API, 1 rank (issue 39 item 3)"
# The cuda target's collective kernel and its NCCL set-up (docs/COLLECTIVES.md, "On a GPU"): an all-reduce and an
# all-gather over a 1-rank group, under mpirun -np 1 (the Session's communicator), fused vs unfused bit for bit
# and every buffer against the cpu target's. It covers NCCL's set-up, the window and the kernel's own path (a
# group of one skips the barriers), not an exchange: NCCL refuses two ranks on one GPU and the device lent here
# has one GPU, so 2-rank verification is impossible in this workplace.
nccl_lib=""
if [ -n "${SK_NCCL:-}" ] && [ -e "$SK_NCCL" ]; then nccl_lib=$SK_NCCL
elif ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then nccl_lib=libnccl.so.2
elif [ -n "${SK_GPU_LIB_DIR:-}" ] && [ -e "$SK_GPU_LIB_DIR/libnccl.so.2" ]; then nccl_lib=$SK_GPU_LIB_DIR/libnccl.so.2
elif [ -e /usr/local/cuda/lib64/libnccl.so.2 ]; then nccl_lib=/usr/local/cuda/lib64/libnccl.so.2
fi
mpirun=$(command -v mpirun || true)
if [ -z "$nccl_lib" ]; then
  log "skipped: no NCCL on the device"
elif [ -z "$mpirun" ]; then
  log "skipped: no mpirun on the device"
else
  export SK_NCCL=$nccl_lib
  log "NCCL: $nccl_lib"
  coll='identical|differ|[Ff]used|[Uu]nfused|Collective|NCCL|nccl|superkernel:|error|Error'
  coll_list=$root/examples/tp_decode/collectives_1rank.json
  if step nccl_1rank_cuda "$coll" "$mpirun" -np 1 --allow-run-as-root "$compile" "$coll_list" --target cuda \
       --run --repeat 3 --dump "$cache/nccl_cuda" --cache-dir "$cache/nccl" &&
     step nccl_1rank_cpu "$coll" "$mpirun" -np 1 --allow-run-as-root "$compile" "$coll_list" --target cpu \
       --run --repeat 0 --dump "$cache/nccl_cpu" --cache-dir "$cache/nccl"; then
    differ=""
    for f in "$cache/nccl_cpu"/*.bin; do
      cmp -s "$f" "$cache/nccl_cuda/$(basename "$f")" || differ="$differ $(basename "$f" .bin)"
    done
    if [ -z "$differ" ]; then log "cuda vs cpu: every buffer identical ($(ls "$cache/nccl_cpu" | wc -l) buffers)"
    else log "cuda vs cpu: buffers differ:$differ"; status=1; fi
  else
    status=1
  fi
fi

rm -rf "$cache"
log ""
log "exit status: $status"
tar -czf "$report_dir/gpu-logs.tar.gz" -C "$logs" .
exit $status
