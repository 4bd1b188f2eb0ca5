#!/bin/sh
# ctest wrapper: onnxc validate --target CORE on a model directory, in QEMU. Reported as skipped
# (exit 77, never as passed) when the model, the core's bare-metal toolchain or QEMU is absent,
# naming the Debian packages; tools/install-deps.sh installs them.
onnxc="$1"; core="$2"; dir="$3"; shift 3
if [ ! -f "$dir/model.onnx" ]; then
  echo "SKIPPED: $dir/model.onnx not found (the shared model corpus is not beside this checkout)"
  exit 77
fi
# The tools and packages of the targets' records (compiler/backend/target.cpp).
case $core in
  riscv32*)
    tools="${ONNXC_RISCV_CC:-riscv64-unknown-elf-gcc} qemu-system-riscv32"
    packages="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libstdc++-arm-none-eabi-newlib qemu-system-misc" ;;
  *)
    tools="${ONNXC_ARM_CXX:-arm-none-eabi-g++} qemu-system-arm"
    packages="gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm" ;;
esac
for tool in $tools; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool not found (Debian packages: $packages; tools/install-deps.sh installs them)"
    exit 77
  fi
done
# Debian's riscv64-unknown-elf-gcc takes the C++ standard headers of the Arm toolchain's libstdc++.
case $core in
  riscv32*)
    if [ -z "${ONNXC_RISCV_CC:-}" ] && [ ! -d /usr/include/newlib/c++ ]; then
      echo "SKIPPED: /usr/include/newlib/c++ not found (Debian packages: $packages; tools/install-deps.sh installs them)"
      exit 77
    fi ;;
esac
exec "$onnxc" validate "$dir" --target "$core" --report "$@"
