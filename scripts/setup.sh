#!/usr/bin/env bash
# Installs every Debian package superkernel needs to build, test, benchmark
# and run its examples. Idempotent: does nothing when all are present.
set -euo pipefail

# libopenblas0-pthread: Debian's torch calls the system BLAS, and without it that is the reference BLAS
# (a 16x512x1536 matmul takes 8 ms instead of 0.1): eager PyTorch, the baseline of bench/torch_decode.py and of
# the main job's PyTorch part, runs with the optimized BLAS a user would have.
# openmpi-bin, libopenmpi-dev: the cpu target's collectives (docs/COLLECTIVES.md) run over MPI, and the
# tests that check them start their ranks with mpirun. python3-mpi4py: the Python package's communicator
# (superkernel.Session(communicator=MPI.COMM_WORLD)) and its test.
PACKAGES=(
  build-essential cmake ninja-build git pkg-config
  clang llvm libclang-rt-dev
  libssl-dev libfmt-dev libspdlog-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  graphviz gnuplot-nox python3
  python3-torch python3-torchvision python3-numpy libopenblas0-pthread
  redis-server
  openmpi-bin libopenmpi-dev python3-mpi4py
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# redis-server is only for the remote-cache tests, which start their own
# server on a loopback port of their choosing: do not leave Debian's system
# service running on the default port.
if printf '%s\n' "${missing[@]}" | grep -qx redis-server; then
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
  elif command -v service >/dev/null; then
    $SUDO service redis-server stop >/dev/null 2>&1 || true
  fi
fi
