#!/bin/sh
# ctest: builds examples/firmware for one core with cmake/arm-none-eabi.cmake, the way a
# firmware project would, and runs the image on the core's emulated board. Skipped (exit 77)
# without the Arm toolchain or QEMU.
#   example_firmware.sh ONNXC SOURCE_DIR WORK_DIR GENERATOR CORE BOARD
onnxc="$1"; source="$2"; work="$3"; generator="$4"; core="$5"; board="$6"
for tool in arm-none-eabi-g++ qemu-system-arm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool not found (tools/install-deps.sh installs it)"
    exit 77
  fi
done
rm -rf "$work"
cmake -S "$source/examples/firmware" -B "$work" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE="$source/cmake/arm-none-eabi.cmake" -DONNXC_CORE="$core" \
      -DONNXC_HOST_EXECUTABLE="$onnxc" || exit 1
cmake --build "$work" || exit 1
exec qemu-system-arm -M "$board" -nographic -monitor none -serial none \
     -semihosting-config enable=on,target=native -kernel "$work/kws_firmware.elf"
