#!/usr/bin/env bash
# Prepares the one device call of scripts/gpu-check.sh, here, on the development machine (nvcc, no GPU), so that
# the lent GPU's minutes go to running, not to compiling (docs/CUDA.md, "Running on a lent GPU"):
#   1. builds sk-compile and sk_test_cuda_gpu (a release build, $SK_GPU_PREPARE_BUILD, default build/gpu-build),
#      and the two CUDA benchmarks bench/cuda/{boundary_bench,kernel_bw}.cu with nvcc -arch=sm_90;
#   2. fills ONE superkernel cache with every cuda module gpu-check loads: sk-compile --baselines without --run
#      (docs/CLI.md) builds what that --run would load (fused, unfused reference, the Graph + PDL build) for
#      steps 1, 3, 3b, 5 and 7, and for the gpu tests' sk-compile runs (tests/cuda/gpu/CudaGpuTest.cpp, which
#      use $SK_TEST_CACHE_DIR/run-cuda: gpu-check unpacks the carried cache as that directory for both), and the
#      sync calibration's kernel of step 8 (sk-compile --calibrate --target cuda builds it, then stops at "no
#      CUDA device" here);
#   3. checks the cache is complete: every command again with a compiler launcher that fails, so any module
#      still missing fails the script (cache keys do not depend on where the checkout, the build or the data
#      directory is: docs/CACHE.md; they do depend on nvcc's identity, recorded in nvcc-identity.txt);
#   4. puts the binaries (stripped), the shared libraries they need beyond glibc/libstdc++ (copied from ldd) and
#      the cache (cache/run-cuda.tar.gz: 90 MiB of entries, most of it op lists in the manifests, pack into 14)
#      into build/gpu-carry/ (ignored: build/), prints its size (33 MiB on 2026-11-29; fails above 60 MiB)
#      and the exact device call: the `command` string and the `carry` list.
#
#   scripts/gpu-prepare.sh
#
# Run it right before the device call: a change to a kernel, the cuda runtime headers or the code generator
# after it makes those modules miss on the device (gpu-check's report then shows the compiles per step).
# About 12 minutes on the shared 2-core machine from a cold cache (nvcc), a minute or two when nothing changed
# (build/gpu-prepare-cache keeps every module built; only the entries the commands used are carried, packed).
# The working tree is shared: if kernels/, runtime/ or templates/ change during the fill, it fills again.
#
# Environment:
#   SK_GPU_PREPARE_BUILD=<dir>  the build to use or make (under the checkout; default build/gpu-build)
#   SK_BUILD_JOBS=N             build and nvcc jobs (default 2)
#   SK_NVCC                     as for the library (must be the nvcc the device has: same release and build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SK_GPU_PREPARE_BUILD:-$root/build/gpu-build}
case $build in /*) ;; *) build=$root/$build ;; esac
case $build/ in "$root"/build/*) ;; *) echo "gpu-prepare: SK_GPU_PREPARE_BUILD must be under $root/build" >&2; exit 2 ;; esac
build_rel=${build#"$root"/}
carry=$root/build/gpu-carry
work=$root/build/gpu-prepare-cache   # every module built so far (kept between runs); the carry gets a copy
jobs=${SK_BUILD_JOBS:-2}
nvcc=${SK_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
t_start=$SECONDS
say() { printf 'gpu-prepare: %s\n' "$*"; }
# shellcheck source=scripts/gpu-bundle.sh
. "$root/scripts/gpu-bundle.sh"

# 1. The build: the two binaries the device runs.
if [ ! -f "$build/build.ninja" ]; then
  say "configuring $build_rel (Release)"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$root/build/gpu-prepare-cmake.log" 2>&1 ||
    { tail -20 "$root/build/gpu-prepare-cmake.log"; exit 1; }
fi
say "building sk-compile and sk_test_cuda_gpu in $build_rel ($jobs jobs)"
cmake --build "$build" -j "$jobs" --target sk-compile sk_test_cuda_gpu
compile=$build/tools/sk-compile
gpu_tests=$build/tests/sk_test_cuda_gpu

rm -rf "$carry"
mkdir -p "$carry/tools" "$carry/tests" "$carry/bench" "$carry/lib" "$carry/cache" "$work"
cp "$compile" "$carry/tools/sk-compile"
cp "$gpu_tests" "$carry/tests/sk_test_cuda_gpu"
strip --strip-unneeded "$carry/tools/sk-compile" "$carry/tests/sk_test_cuda_gpu"

# The benchmarks (gpu-check steps 4 and 6); one that does not build here is built on the device as before.
for b in boundary_bench kernel_bw; do
  if "$nvcc" -O3 -std=c++17 -arch=sm_90 -I"$root/runtime/cuda/include" "$root/bench/cuda/$b.cu" \
      -o "$carry/bench/$b" >"$root/build/gpu-prepare-$b.log" 2>&1; then
    say "built bench/cuda/$b.cu (sm_90)"
  else
    say "WARNING: bench/cuda/$b.cu did not build here (build/gpu-prepare-$b.log): the device builds it"
    rm -f "$carry/bench/$b"
  fi
done

# The shared libraries beyond the C/C++ runtime and CUDA's (which the device has, newer): libfmt, libspdlog,
# Open MPI's and their dependencies. gpu-check puts on LD_LIBRARY_PATH only those the device lacks.
for bin in "$carry/tools/sk-compile" "$carry/tests/sk_test_cuda_gpu" "$carry"/bench/*; do
  [ -x "$bin" ] || continue
  ldd "$bin" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*|libcuda.so*|libcudart.so*) ;;
    *) cp -L "$lib" "$carry/lib/$(basename "$lib")" ;;
  esac
done

# 2. The cache. Every command gpu-check and the gpu tests run on the cuda target, as --baselines without --run
# (the same list, options and target build the same keys); the cpu target's runs are compiled on the device
# (its host compiler is another one than here).
cache=$work/run-cuda
ex=$root/examples
tiny=$root/tests/cuda/data/tiny.json
commands=(
  # gpu-check 1: the smallest list; the gpu tests' GraphBaselinesEqualFusedBitForBit (--baselines all)
  "$tiny|all|"
  # gpu-check 3 and 5; the gpu tests' decode layer and stack under the defaults
  "$ex/decode_layer/decode_layer.json|all|"
  "$ex/decode_stack/decode_stack.json|all|"
  "$ex/decode_loop/decode_loop.json|all|"
  # gpu-check 3b
  "$ex/decode_stack/decode_stack.json|unfused|preload-data=first-block"
  "$ex/decode_stack/decode_stack.json|unfused|preload-data=lookahead"
  "$ex/decode_loop/decode_loop.json|unfused|preload-data=lookahead"
  # gpu-check 7 (1 rank; the graph baselines do not apply to collectives)
  "$ex/tp_decode/collectives_1rank.json|unfused|"
  # the gpu tests (tests/cuda/gpu/CudaGpuTest.cpp): FusedEqualsUnfused's option mixes, the profiled run, the
  # 2-layer decode loop (--tokens 1 and 8; --baselines graph,graph-pdl)
  "$ex/decode_loop/decode_loop_2layers.json|all|"
  "$ex/decode_layer/decode_layer.json|unfused|profiling=1"
)
for o in early-start=0 early-start=2 stream-fusion=1 debug-sync-all=1 debug-core-num=8 preload-data=first-block \
         preload-data=lookahead; do
  commands+=("$ex/decode_layer/decode_layer.json|unfused|$o")
done
for o in early-start=0 early-start=2 stream-fusion=1 debug-sync-all=1 debug-core-num=8; do
  commands+=("$ex/decode_stack/decode_stack.json|unfused|$o")
done

run_all() {  # label, sk-compile, cache dir, then extra environment words for each command
  local label=$1 bin=$2 dir=$3; shift 3
  local i=0 n=${#commands[@]} list baselines options args t0
  for c in "${commands[@]}"; do
    i=$((i + 1))
    IFS='|' read -r list baselines options <<<"$c"
    args=("$list" --target cuda --baselines "$baselines" --cache-dir "$dir" --jobs "$jobs")
    [ -n "$options" ] && args+=(--options "$options")
    t0=$SECONDS
    if ! env SK_LOG_LEVEL=warn "$@" "$bin" "${args[@]}" >"$root/build/gpu-prepare-last.log" 2>&1; then
      say "$label [$i/$n] FAILED: $bin ${args[*]}"
      tail -20 "$root/build/gpu-prepare-last.log"
      return 1
    fi
    say "$label [$i/$n] $((SECONDS - t0)) s: $(basename "$list") --baselines $baselines${options:+ --options $options}: $(grep -m1 '^Compile:' "$root/build/gpu-prepare-last.log" || true)"
  done
}
# gpu-check 8: the sync calibration's kernel (src/backends/cuda/CudaCalibrate.cpp), built through the session's
# cache like a SuperKernel: this one (gpu-check calibrates with the same --cache-dir). Without a GPU,
# sk-compile --calibrate builds or finds the kernel, loads it, then stops at "no CUDA device" (exit 4) before
# measuring or saving anything: the expected end here.
calibration_kernel() {  # label, sk-compile, cache dir, then extra environment words
  local label=$1 bin=$2 dir=$3 rc=0; shift 3
  env SK_LOG_LEVEL=warn "$@" "$bin" --calibrate --target cuda --cache-dir "$dir" \
    >"$root/build/gpu-prepare-last.log" 2>&1 || rc=$?
  if [ "$rc" = 4 ] && grep -q 'no CUDA device' "$root/build/gpu-prepare-last.log"; then
    say "$label: the sync calibration's kernel (sk-compile --calibrate --target cuda: stopped at 'no CUDA device', as expected without a GPU)"
  elif [ "$rc" = 0 ]; then
    say "$label: the sync calibration's kernel (sk-compile --calibrate --target cuda ran: this machine has a GPU)"
  else
    say "$label FAILED: sk-compile --calibrate --target cuda (exit $rc)"
    tail -20 "$root/build/gpu-prepare-last.log"
    return 1
  fi
}
# The kernels, runtime headers and templates every key hashes: other edits to them during the fill (the working
# tree is shared) leave modules of two versions; then the fill runs again (it compiles only what changed).
inputs_digest() { gpu_bundle_inputs_digest "$root"; }
mkdir -p "$carry/share/superkernel"
for d in kernels runtime templates; do ln -sfn "../../../../$d" "$carry/share/superkernel/$d"; done
refuse=$work/refuse-compile
printf '#!/bin/sh\necho "gpu-prepare: a compile after the cache was filled: $*" >&2\nexit 1\n' >"$refuse"
chmod +x "$refuse"
marker=$work/fill-started
for attempt in 1 2 3; do
  digest=$(inputs_digest)
  # Every entry a command loads or builds gets a fresh last_use (docs/CACHE.md): the ones newer than the marker
  # are what the device needs, and only those are carried (the work cache keeps modules of older sources too).
  touch "$marker"
  say "filling the cache ($cache; nvcc: $nvcc; kernels/runtime/templates $digest)"
  run_all build "$compile" "$cache"
  calibration_kernel build "$compile" "$cache"
  # Carried as one .tar.gz (the manifests hold whole op lists: about 90 MiB of entries pack into 15).
  rm -rf "$work/carried" "$carry/cache/run-cuda.tar.gz"
  mkdir -p "$work/carried/run-cuda/entries"
  (cd "$cache/entries" && find . -mindepth 3 -maxdepth 3 -name last_use -newer "$marker" -printf '%h\n') |
    while read -r e; do
      mkdir -p "$work/carried/run-cuda/entries/$(dirname "$e")"
      cp -r "$cache/entries/$e" "$work/carried/run-cuda/entries/$(dirname "$e")/"
    done
  tar -C "$work/carried" -czf "$carry/cache/run-cuda.tar.gz" run-cuda
  say "carried cache: $(find "$work/carried/run-cuda/entries" -mindepth 2 -maxdepth 2 -type d | wc -l) entries (of the $(find "$cache/entries" -mindepth 2 -maxdepth 2 -type d | wc -l) built so far), $(du -sh "$work/carried" | cut -f1) in $(du -sh "$carry/cache/run-cuda.tar.gz" | cut -f1)"
  # 3. Complete? The carried sk-compile (stripped, in another directory, so with another data directory:
  # share/superkernel beside it, as on the device) on the carried cache unpacked as gpu-check unpacks it, with a
  # compiler launcher that fails: every command must be a hit.
  rm -rf "$work/check" && mkdir -p "$work/check"
  tar --no-same-owner -C "$work/check" -xzf "$carry/cache/run-cuda.tar.gz"
  say "checking the carried cache: every command a hit with the carried sk-compile and a compiler launcher that fails"
  if run_all check "$carry/tools/sk-compile" "$work/check/run-cuda" "SK_COMPILER_LAUNCHER=$refuse" &&
     calibration_kernel check "$carry/tools/sk-compile" "$work/check/run-cuda" "SK_COMPILER_LAUNCHER=$refuse" &&
     [ "$(inputs_digest)" = "$digest" ]; then
    break
  fi
  [ "$attempt" = 3 ] && { say "FAILED: the cache is still incomplete after 3 fills (are kernels/ or runtime/ being edited?)"; exit 1; }
  say "kernels/, runtime/ or templates/ changed during the fill (now $(inputs_digest)): filling again"
done

# 4. The bundle: nvcc's identity (gpu-check compares it with the device's: another nvcc makes every cuda module
# miss there) and what gpu-check needs to set the paths up.
gpu_bundle_nvcc_identity "$nvcc" >"$carry/nvcc-identity.txt"
cat >"$carry/manifest.txt" <<EOF
source_root $root
build_dir $build_rel
spawned $compile
commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' (plus working tree)')
prepared $(date -u +%Y-%m-%dT%H:%M:%SZ)
inputs $digest
EOF
size=$(du -sb "$carry" | cut -f1)
mib=$(( (size + 1048575) / 1048576 ))
say "bundle build/gpu-carry: ${mib} MiB: $(du -sh "$carry"/{tools,tests,bench,lib,cache} | awk '{printf "%s %s, ", $2, $1}' | sed "s|$carry/||g; s/, \$//")"
tree=$(cd "$root" && git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
say "the working tree that travels with it: $(( (tree + 1048575) / 1048576 )) MiB (the call's limit: 64 MiB in all)"
if [ "$mib" -gt 60 ] || [ $(( (size + tree) / 1048576 )) -ge 64 ]; then
  say "FAILED: the bundle is over 60 MiB or the call over 64 MiB"; exit 1
fi
say "done in $((SECONDS - t_start)) s"

cat <<EOF

The device call (one run; gpu-check stays under 8 minutes: its header has the estimate per step):
  carry:     ["build/gpu-carry"]
  timeout_s: 540
  command:   SK_GPU_CARRY=build/gpu-carry timeout -k 10 480 scripts/gpu-check.sh "\$OUT"
EOF
