#!/bin/sh
# Installs everything onnxc needs to build and test on Debian 12. Run it as yourself: apt-get
# runs directly when you are root (containers, where sudo is often not installed) and through
# sudo otherwise.
#
#   tools/install-deps.sh [--dry-run]     --dry-run: print the commands instead of running them
set -eu

dry_run=
case "${1:-}" in
  --dry-run) dry_run=1 ;;
  "") ;;
  *) echo "usage: $0 [--dry-run]" >&2; exit 2 ;;
esac

# Runs (or with --dry-run prints) a command as root.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    set -- env DEBIAN_FRONTEND=noninteractive "$@"
  elif command -v sudo >/dev/null 2>&1; then
    set -- sudo env DEBIAN_FRONTEND=noninteractive "$@"
  else
    echo "error: installing packages needs root, and you are not root and sudo is not installed" >&2
    echo "  fix: run $0 as root (su -c '$0')" >&2
    exit 1
  fi
  if [ -n "$dry_run" ]; then echo "$*"; else "$@"; fi
}

as_root apt-get update -q
as_root apt-get install -y -q --no-install-recommends \
  g++ clang cmake ninja-build make \
  libprotobuf-dev protobuf-compiler libfmt-dev libcli11-dev catch2 libxsimd-dev \
  python3 python3-onnx python3-numpy libonnx-testdata \
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm \
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc \
  g++-aarch64-linux-gnu g++-riscv64-linux-gnu qemu-user

# ONNX Runtime for Node, for tools/layer-reference (the trace.layer_reference test; skipped
# without it): from the npm registry, pinned by its package-lock.json, into that folder only;
# --ignore-scripts: its install script fetches GPU providers from api.nuget.org (not needed for
# the CPU, and not reachable from CI).
here=$(cd "$(dirname "$0")" && pwd)
if command -v npm >/dev/null 2>&1; then
  if [ -n "$dry_run" ]; then echo "cd $here/layer-reference && npm ci --ignore-scripts --no-audit --no-fund"
  else (cd "$here/layer-reference" && npm ci --ignore-scripts --no-audit --no-fund); fi
else
  echo "note: npm is not installed; trace.layer_reference will be skipped (install Node.js and npm to run it)"
fi
