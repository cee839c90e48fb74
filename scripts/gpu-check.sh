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
#   6. bench/cuda/kernel_bw.cu: the builtin kernels alone (gemv in every weight format,
#      the norms, attn_decode, kv_append, add, swiglu), GB/s against the device's
#      copy bandwidth;
#   7. collectives on NCCL's device API, 1 rank, cuda vs cpu (skipped where the
#      device has no libnccl.so.2, system or pip's nvidia-nccl-cu13, or MPI does
#      not start: no mpirun and no complete Open MPI for a singleton);
#   8. the sync calibration (sk-compile --calibrate --target cuda: the GPU's
#      barrier, counter and flag cost per boundary), then the decode stack
#      planned with those costs (the sync model acts on cuda only with costs;
#      step 3's decode stack is the same list without them).
# It writes REPORT_DIR/gpu-check.md (GPU, driver, clocks, every result) and
# REPORT_DIR/gpu-logs.tar.gz (every step's full output).
#
#   scripts/gpu-check.sh [REPORT_DIR]        (default: build/gpu-check; $OUT when set)
#
# On a lent GPU (docs/CUDA.md, "Running on a lent GPU"): no build and no SuperKernel compile there. Here,
# on the development machine, scripts/gpu-prepare.sh builds the binaries and the benchmarks, fills one cache
# with every cuda module the steps and the gpu tests load, checks it is complete, and prints the call:
#   run(command='SK_GPU_CARRY=build/gpu-carry timeout -k 10 480 scripts/gpu-check.sh "$OUT"',
#       carry=["build/gpu-carry"], timeout_s=540)
# (33 MiB carried on 2026-11-29). Each step's report says whether it compiled anything there ("compiles on the
# device": nvcc, or the host compiler of the cpu target, which cannot be prepared: another compiler is
# another key), counted by a compiler launcher (SK_COMPILER_LAUNCHER, not part of any key). Device time
# estimated from the 2026-11-26/28 runs (docs/PERFORMANCE.md sections 8 and 8b) less their compiles: set-up
# 10 s; 1: 5 s; 2: 60-90 s (8 shards; the scenario and gemv tests write their lists at run time and the
# tolerance tests build the cpu side: those still compile; more of them since 2026-11-29: the casts, rope and
# gate, every builtin chained); 3: 40 s; 3b: 40 s; 4: 40 s (its six cluster rows not run yet); 5: 60 s (not run
# yet: graph captures); 6: 30 s; 7: 20 s or skipped; 8 (not run yet): 5 s for the calibration (its kernel is in
# the carried cache), 20-50 s for the decode stack with its costs (the fused step compiles there when the costs
# change the plan: they are not known before the device measures them; skipped with under 60 s left); about 6.5
# minutes in all, within the 450 s it gives itself (SK_GPU_DEADLINE: every step's limit is cut to what is left
# of it, so the report is always written).
#
# Environment:
#   SK_GPU_BUILD_DIR=<dir>   use that build instead of building build/release. The
#                            test binaries are run directly, so a build carried to a
#                            machine without CMake or the build's -dev packages works;
#                            SK_GPU_LIB_DIR=<dir> is then prepended to LD_LIBRARY_PATH
#                            for the shared libraries the binaries need.
#   SK_GPU_SHARDS=N          parallel shards of the gpu tests (default nproc/2, 1..8)
#   SK_GPU_TESTS_TIMEOUT=S   the gpu tests' limit (default 180 s, so a stalled test cannot take the later steps)
#   SK_GPU_STEP_TIMEOUT=S    each step's limit in seconds (default 300)
#   SK_GPU_BENCH=<file>      a boundary_bench already built (else nvcc builds it here)
#   SK_NVCC, SK_CXX          as for the library
#   SK_GPU_CARRY=<dir>       the bundle of scripts/gpu-prepare.sh (relative to the checkout): its binaries,
#                            benchmarks and libraries (only those this machine lacks go on LD_LIBRARY_PATH),
#                            and its cache (copied: the steps use DIR/run-cuda of one cache, the gpu tests
#                            the same through SK_TEST_CACHE_DIR). It links the checkout to the path compiled
#                            into the binaries and the build path the gpu tests spawn sk-compile from, when
#                            those are missing here, and compares nvcc's identity with the one the cache was
#                            built with (another nvcc: every cuda module compiles here).
#   SK_GPU_DEADLINE=S        seconds for the whole run (default 450 with SK_GPU_CARRY, else none)
#
# The test binaries have SK_SOURCE_ROOT (the checkout they were built in) compiled
# in, and build/<config>/share/superkernel links to that checkout's data: a build
# carried to another machine needs the checkout at the same path there (or a
# link to it), and the build at the path it was built in (the gpu tests spawn
# that sk-compile; the script says so when it is missing; with SK_GPU_CARRY it
# makes both links itself). First run:
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
deadline=${SK_GPU_DEADLINE:-$([ -n "${SK_GPU_CARRY:-}" ] && echo 450 || echo 0)}
log() { printf '%s\n' "$*" | tee -a "$report"; }
: >"$report"
# A step's limit: its own, cut to what is left before the deadline (15 s kept for the report); 0 when too
# little is left to start it.
limit() {
  [ "$deadline" -gt 0 ] || { echo "$step_timeout"; return; }
  local left=$((deadline - SECONDS - 15))
  if [ "$left" -lt 10 ]; then echo 0; elif [ "$left" -lt "$step_timeout" ]; then echo "$left"; else echo "$step_timeout"; fi
}
# The compiles since line N of the launcher's log (below), for the report.
compiles_since() {
  local from=$1 total nv
  [ -n "${SK_GPU_COMPILE_LOG:-}" ] || return 0
  total=$(( $(wc -l <"$SK_GPU_COMPILE_LOG") - from ))
  if [ "$total" -le 0 ]; then echo "compiles on the device: none"; return; fi
  nv=$(tail -n +"$((from + 1))" "$SK_GPU_COMPILE_LOG" | grep -c 'nvcc' || true)
  echo "compiles on the device: $total ($nv nvcc, $((total - nv)) host compiler); first: $(tail -n +"$((from + 1))" "$SK_GPU_COMPILE_LOG" | head -1 | cut -c1-200)"
}
compile_count() { if [ -n "${SK_GPU_COMPILE_LOG:-}" ]; then wc -l <"$SK_GPU_COMPILE_LOG"; else echo 0; fi; }

# Runs one step with its limit; its full output goes to $logs/<name>.log and
# the lines matching PATTERN (or the last 15) to the report.
step() {
  local name=$1 pattern=$2; shift 2
  local t0=$SECONDS rc lim c0
  lim=$(limit)
  if [ "$lim" = 0 ]; then
    log ""; log "### $name: skipped: out of time (SK_GPU_DEADLINE=$deadline s)"; return 1
  fi
  c0=$(compile_count)
  timeout --kill-after=10 "$lim" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  log ""
  log "### $name (exit $rc, $((SECONDS - t0)) s)"
  local compiled; compiled=$(compiles_since "$c0")
  [ -n "$compiled" ] && log "$compiled"
  log '```'
  if [ -n "$pattern" ] && grep -qE "$pattern" "$logs/$name.log"; then
    grep -E "$pattern" "$logs/$name.log" | tail -40 | tee -a "$report"
  else
    tail -15 "$logs/$name.log" | tee -a "$report"
  fi
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "TIMED OUT after ${lim} s" >>"$report"
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

carry=""
if [ -n "${SK_GPU_CARRY:-}" ]; then
  # scripts/gpu-prepare.sh's bundle: binaries, benchmarks, libraries, one filled cache.
  carry=$(cd "$root" && cd "$SK_GPU_CARRY" 2>/dev/null && pwd) || { log "SK_GPU_CARRY=$SK_GPU_CARRY: not found"; exit 1; }
  # shellcheck source=scripts/gpu-bundle.sh
  . "$root/scripts/gpu-bundle.sh"
  field() { sed -n "s/^$1 //p" "$carry/manifest.txt"; }
  log "carried bundle: $SK_GPU_CARRY (prepared $(field prepared) at $(field commit), $(du -sh "$carry" | cut -f1))"
  # The checkout at the path compiled into the binaries (SK_SOURCE_ROOT), and the sk-compile the gpu tests spawn.
  src_root=$(field source_root)
  if ! [ "$root" -ef "$src_root" ]; then
    if [ -e "$src_root" ] || [ -L "$src_root" ]; then
      log "the binaries were built in $src_root, which is another directory here: the gpu tests will not find their files"
    elif mkdir -p "$(dirname "$src_root")" && ln -s "$root" "$src_root"; then
      log "linked $src_root -> $root (the checkout the binaries were built in)"
    fi
  fi
  spawned=$(field spawned)
  if [ -n "$spawned" ] && ! [ -x "$spawned" ]; then
    mkdir -p "$(dirname "$spawned")" && ln -sfn "$carry/tools/sk-compile" "$spawned" && log "linked $spawned -> the carried sk-compile"
  fi
  # Its data directory (found beside the binary: share/superkernel), this checkout's.
  mkdir -p "$carry/share/superkernel"
  for d in kernels runtime templates; do ln -sfn "$root/$d" "$carry/share/superkernel/$d"; done
  # The carried libraries this machine does not have.
  mkdir -p "$logs/lib"
  taken=""
  known=$(ldconfig -p 2>/dev/null || true)  # read once: grep -q in a pipe under pipefail can fail on SIGPIPE
  for f in "$carry"/lib/*; do
    [ -e "$f" ] || continue
    so=$(basename "$f")
    if ! grep -qF $'\t'"$so (" <<<"$known"; then ln -s "$f" "$logs/lib/$so"; taken="$taken $so"; fi
  done
  log "carried libraries used (the machine lacks them):${taken:- none}"
  export SK_GPU_BUILD_DIR=$carry SK_GPU_LIB_DIR=$logs/lib
  [ -x "$carry/bench/boundary_bench" ] && export SK_GPU_BENCH=${SK_GPU_BENCH:-$carry/bench/boundary_bench}
  [ -x "$carry/bench/kernel_bw" ] && export SK_GPU_KERNEL_BW=${SK_GPU_KERNEL_BW:-$carry/bench/kernel_bw}
  # The kernels, runtime headers and templates the carried modules were built from (gpu-prepare.sh's digest).
  digest=$(gpu_bundle_inputs_digest "$root")
  if [ "$digest" = "$(field inputs)" ]; then log "kernels/, runtime/, templates/: as prepared ($digest)"
  else log "kernels/, runtime/ or templates/ CHANGED since gpu-prepare.sh ($(field inputs) -> $digest): what changed compiles here"; fi
  # nvcc's identity is in every cuda key: another nvcc than the one the cache was built with misses everything.
  if [ -f "$carry/nvcc-identity.txt" ]; then
    mine=$(gpu_bundle_nvcc_identity "$nvcc")
    if [ "$mine" = "$(cat "$carry/nvcc-identity.txt")" ]; then
      log "nvcc: the one the carried cache was built with (path, sha256, version)"
    else
      log "nvcc DIFFERS from the one the carried cache was built with: every cuda module compiles here"
      log '```'; diff <(cat "$carry/nvcc-identity.txt") <(echo "$mine") | tee -a "$report"; log '```'
    fi
  fi
  if command -v nvidia-smi >/dev/null; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')
    [ -n "$cc" ] && [ "$cc" != 9.0 ] && log "compute capability $cc: the carried cache is for sm_90 (arch native resolves to sm_${cc/./} here): cuda modules compile here"
  fi
fi
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
  if ldd "$b" | grep 'not found' >/dev/null; then log "unresolved libraries of $b:"; ldd "$b" | grep 'not found' | tee -a "$report"; exit 1; fi
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
# One cache for every step and the gpu tests (tests/TestCache.h: SK_TEST_CACHE_DIR/run-<target>): the carried
# one when given (unpacked: this user owns it, as the cache's trust rules ask), else empty.
shared=$cache/shared
if [ -n "$carry" ] && [ -f "$carry/cache/run-cuda.tar.gz" ]; then
  mkdir -p "$shared" && tar --no-same-owner -C "$shared" -xzf "$carry/cache/run-cuda.tar.gz"
  log "cache: the carried one ($(find "$shared/run-cuda/entries" -mindepth 2 -maxdepth 2 -type d | wc -l) modules)"
fi
mkdir -p "$shared/run-cuda"
cuda_cache=$shared/run-cuda
export SK_TEST_CACHE_DIR=$shared
# Every compiler run of every sk-compile (and of the ones the gpu tests spawn) is logged by this launcher, which
# is not part of any key: the report says per step what was compiled here.
export SK_GPU_COMPILE_LOG=$logs/compiles.txt
: >"$SK_GPU_COMPILE_LOG"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" | cut -c1-400 >>"$SK_GPU_COMPILE_LOG"\nexec "$@"\n' >"$logs/count-compile"
chmod +x "$logs/count-compile"
export SK_COMPILER_LAUNCHER="$logs/count-compile${SK_COMPILER_LAUNCHER:+ $SK_COMPILER_LAUNCHER}"

log ""
log "## 1. smallest list on the GPU"
step smoke 'identical|differ|Fused|Unfused|error|Error' \
  "$compile" "$root/tests/cuda/data/tiny.json" --target cuda --run --repeat 3 --cache-dir "$cuda_cache" || status=1

log ""
log "## 2. gpu tests (sk_test_cuda_gpu, fused vs unfused bit for bit; cuda vs cpu within tolerance)"
shards=${SK_GPU_SHARDS:-$(( $(nproc) / 2 ))}
[ "$shards" -lt 1 ] && shards=1
[ "$shards" -gt 8 ] && shards=8
tests_limit=$(limit)
[ "$tests_limit" = 0 ] && tests_limit=1
# At most SK_GPU_TESTS_TIMEOUT (default 180 s; all 16 took 61 s on 2026-11-26): on 2026-11-28 two barrier-heavy
# tests (decode stack with early-start=0 and with debug-sync-all=1) did not finish, and a stalled shard must not
# take the later steps' minutes. A shard that times out names the tests it started and never finished.
tests_cap=${SK_GPU_TESTS_TIMEOUT:-180}
[ "$tests_limit" -gt "$tests_cap" ] && tests_limit=$tests_cap
c0=$(compile_count)
pids=()
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout --kill-after=10 "$tests_limit" "$gpu_tests" \
    >"$logs/gpu-tests-$i.log" 2>&1 &
  pids+=($!)
done
t0=$SECONDS
for ((i = 0; i < shards; i++)); do
  wait "${pids[$i]}"; rc=$?
  [ "$rc" = 0 ] || status=1
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    unfinished=$(awk '/^\[ RUN +\]/ {run[$NF] = 1} /^\[ +(OK|FAILED|SKIPPED) +\]/ {delete run[$4]} END {for (t in run) printf "%s ", t}' \
      "$logs/gpu-tests-$i.log")
    log "shard $i TIMED OUT after ${tests_limit} s; started and not finished: ${unfinished:-(none)}"
  fi
done
log "$shards shards, $((SECONDS - t0)) s"
compiled=$(compiles_since "$c0")
[ -n "$compiled" ] && log "$compiled"
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
  --cache-dir "$cuda_cache" || status=1
step decode_stack "$timing" "$compile" "$root/examples/decode_stack/decode_stack.json" --target cuda --run --repeat 15 \
  --cache-dir "$cuda_cache" || status=1
step decode_loop "$timing" "$compile" "$root/examples/decode_loop/decode_loop.json" --target cuda --tokens 32 --repeat 5 \
  --cache-dir "$cuda_cache" || status=1

log ""
log "## 3b. weight prefetch (preload-data, issue 40 item 1; off by default on cuda until this table shows a gain)"
for pd in first-block lookahead; do
  step "decode_stack_preload_$pd" "$timing" "$compile" "$root/examples/decode_stack/decode_stack.json" --target cuda \
    --run --repeat 15 --options "preload-data=$pd" --cache-dir "$cuda_cache" || status=1
done
step decode_loop_preload_lookahead "$timing" "$compile" "$root/examples/decode_loop/decode_loop.json" --target cuda \
  --tokens 32 --repeat 5 --options preload-data=lookahead --cache-dir "$cuda_cache" || status=1

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
# text); step 3 left the fused and unfused builds in the shared cache, and with SK_GPU_CARRY the PDL builds are
# carried too (gpu-prepare.sh), so nothing compiles here.
baselines='identical|differ|[Ff]used|[Uu]nfused|graph|skipped|speedup|tokens|Tokens|error'
step decode_layer_baselines "$baselines" "$compile" "$root/examples/decode_layer/decode_layer.json" --target cuda \
  --run --repeat 15 --baselines all --cache-dir "$cuda_cache" || status=1
step decode_stack_baselines "$baselines" "$compile" "$root/examples/decode_stack/decode_stack.json" --target cuda \
  --run --repeat 15 --baselines all --cache-dir "$cuda_cache" || status=1
step decode_loop_baselines "$baselines" "$compile" "$root/examples/decode_loop/decode_loop.json" --target cuda \
  --tokens 32 --repeat 5 --baselines all --cache-dir "$cuda_cache" || status=1

log ""
log "## 6. builtin kernels alone (gemv, matmul, norms, attention, rope, MoE gate, elementwise, casts), GB/s against the copy bandwidth (bench/cuda/kernel_bw.cu, issue 40 item 3)"
# Built like boundary_bench (SK_GPU_KERNEL_BW: one built elsewhere); about 30 s on the device (an estimate: never
# run): 45 kernel x shape rows (15 gemv, 12 matmul, 18 other decode-step kernels) of 15 samples, each a batch of
# 16 launches over 256 MB of weights, and a 1 GiB copy.
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
# pip's nvidia-nccl-cu13 (the device image has it, beside PyTorch): nvidia/nccl/lib/libnccl.so.2.
pip_nccl=$(python3 -c 'import nvidia.nccl as n, os; print(os.path.join(list(n.__path__)[0], "lib", "libnccl.so.2"))' \
             2>/dev/null || true)
[ -n "$pip_nccl" ] && [ -e "$pip_nccl" ] || pip_nccl=$(ls /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 \
  /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1 || true)
if [ -n "${SK_NCCL:-}" ] && [ -e "$SK_NCCL" ]; then nccl_lib=$SK_NCCL
elif ldconfig -p 2>/dev/null | grep 'libnccl\.so\.2 ' >/dev/null; then nccl_lib=libnccl.so.2
elif [ -n "${SK_GPU_LIB_DIR:-}" ] && [ -e "$SK_GPU_LIB_DIR/libnccl.so.2" ]; then nccl_lib=$SK_GPU_LIB_DIR/libnccl.so.2
elif [ -e /usr/local/cuda/lib64/libnccl.so.2 ]; then nccl_lib=/usr/local/cuda/lib64/libnccl.so.2
elif [ -n "$pip_nccl" ] && [ -e "$pip_nccl" ]; then nccl_lib=$pip_nccl
fi
# The communicator is MPI's (sk-compile makes one for a list with collectives): under mpirun -np 1 where there
# is one, else as an MPI singleton (MPI_Init without mpirun), which Open MPI allows where its installation is
# complete; the carried libmpi alone is not one (no components, no orted): then the cpu side fails to start MPI
# and the step says so.
mpirun=$(command -v mpirun || true)
launch=()
[ -n "$mpirun" ] && launch=("$mpirun" -np 1 --allow-run-as-root)
coll='identical|differ|[Ff]used|[Uu]nfused|Collective|NCCL|nccl|superkernel:|error|Error|MPI'
coll_list=$root/examples/tp_decode/collectives_1rank.json
if [ -z "$nccl_lib" ]; then
  log "skipped: no NCCL on the device"
else
  export SK_NCCL=$nccl_lib
  log "NCCL: $nccl_lib; MPI: ${mpirun:-no mpirun: an MPI singleton}"
  # The cpu side first: it also tells whether MPI starts here at all.
  if step nccl_1rank_cpu "$coll" ${launch[@]+"${launch[@]}"} "$compile" "$coll_list" --target cpu \
       --run --repeat 0 --dump "$cache/nccl_cpu" --cache-dir "$shared/run-cpu"; then
    if step nccl_1rank_cuda "$coll" ${launch[@]+"${launch[@]}"} "$compile" "$coll_list" --target cuda \
         --run --repeat 3 --dump "$cache/nccl_cuda" --cache-dir "$cuda_cache"; then
      differ=""
      for f in "$cache/nccl_cpu"/*.bin; do
        cmp -s "$f" "$cache/nccl_cuda/$(basename "$f")" || differ="$differ $(basename "$f" .bin)"
      done
      if [ -z "$differ" ]; then log "cuda vs cpu: every buffer identical ($(ls "$cache/nccl_cpu" | wc -l) buffers)"
      else log "cuda vs cpu: buffers differ:$differ"; status=1; fi
    else
      status=1
    fi
  elif [ -z "$mpirun" ] && grep -qE 'MPI|opal|orte|ompi|pmix' "$logs/nccl_1rank_cpu.log"; then
    log "skipped: no mpirun on the device, and MPI does not start without it (nccl_1rank_cpu.log)"
  else
    status=1
  fi
fi

log ""
log "## 8. sync calibration (issue 40 item 2): the GPU's cost per boundary, and the decode stack planned with it"
# sk-compile --calibrate --target cuda (src/backends/cuda/CudaCalibrate.cpp; docs/CUDA.md, "Sync calibration"):
# on one CTA per SM, chains of small ops with a grid barrier, an all-to-all counter or a flag wait after each op,
# against the same chain without. Its kernel comes from the carried cache (the calibration builds through the
# session's cache, like a SuperKernel). The costs it saves there are moved to a scratch directory at once, so no
# other step plans with them; the decode stack below gets them through SK_SYNC_COSTS.
calib_dir=$cache/calibration
mkdir -p "$calib_dir"
if step sync_calibration 'Sync calibration|saved|error|Error' \
     "$compile" --calibrate --target cuda --cache-dir "$cuda_cache"; then
  mv "$cuda_cache"/calibration/cuda-*.json "$calib_dir"/ 2>/dev/null || true
  calib_file=$(ls "$calib_dir"/cuda-*.json 2>/dev/null | head -1)
  ns() { sed -n "s/.*\"$1\": *\([0-9.eE+]*\).*/\1/p" "$calib_file" | head -1; }
  b=$(ns barrier_ns) c=$(ns counter_ns) f=$(ns flag_ns)
  if [ -z "$b" ] || [ -z "$c" ] || [ -z "$f" ]; then
    log "the calibration saved no costs (${calib_file:-no file under $calib_dir/calibration})"; status=1
  elif [ "$(limit)" -lt 60 ]; then
    log "decode stack with the calibrated costs: skipped: under 60 s left (it may compile its fused step here)"
  else
    # The same list, options and cache as step 3's decode_stack; only the costs differ ($SK_SYNC_COSTS: the
    # plan report's "Sync model" line says what they changed).
    step decode_stack_calibrated 'Sync model|Syncs|identical|differ|[Ff]used|[Uu]nfused|speedup|error' \
      env SK_SYNC_COSTS="barrier=$b,counter=$c,flag=$f" "$compile" "$root/examples/decode_stack/decode_stack.json" \
      --target cuda --run --repeat 15 --cache-dir "$cuda_cache" || status=1
    log "without the costs (step 3's decode_stack, the rules' syncs):"
    log '```'
    grep -E '[Ff]used|[Uu]nfused|speedup' "$logs/decode_stack.log" 2>/dev/null | tail -5 | tee -a "$report"
    log '```'
  fi
else
  status=1
fi

rm -rf "$cache"
log ""
log "exit status: $status"
tar -czf "$report_dir/gpu-logs.tar.gz" -C "$logs" .
exit $status
