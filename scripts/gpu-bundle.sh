# Sourced by scripts/gpu-prepare.sh and scripts/gpu-check.sh: what a carried cache's cuda modules depend on
# beyond the op lists, computed one way on both machines (prepare records it, check compares).

# A digest of the kernels, runtime headers and templates of the checkout at $1 (every module's key hashes them).
gpu_bundle_inputs_digest() {
  (cd "$1" && find kernels runtime templates -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

# nvcc's identity as every cuda key has it: its real path, its SHA-256 and its --version (nvcc as named or found).
gpu_bundle_nvcc_identity() {
  local real
  real=$(readlink -f "$(command -v "$1" || echo "$1")")
  printf 'path %s\nsha256 %s\nversion %s\n' "$real" "$(sha256sum "$real" 2>/dev/null | cut -d' ' -f1)" \
    "$("$1" --version 2>/dev/null | tail -1)"
}
