#!/bin/sh
# Builds quant_kernels_main.cpp for a Cortex-M core's emulated board (the flags of
# compiler/driver/firmware.cpp's boards) and runs it under QEMU: exit 0 when every kernel's sums
# equal the direct convolution's. Exit 77 (skipped) without the toolchain or QEMU.
# usage: kernels_firmware.sh SOURCE_DIR BUILD_DIR CORE [CXXFLAGS...]
set -e
src=$1 out=$2 core=$3
shift 3
command -v arm-none-eabi-g++ >/dev/null && command -v qemu-system-arm >/dev/null || exit 77
case $core in
  cortex-m4) flags="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" machine=mps2-an386 ;;
  cortex-m55) flags="-mcpu=cortex-m55 -mthumb -mfloat-abi=hard" machine=mps3-an547 ;;
  *) echo "unknown core $core"; exit 2 ;;
esac
fw=$src/runtime-support/firmware
mkdir -p "$out"
image=$out/quant_kernels_$core.elf
# shellcheck disable=SC2086
arm-none-eabi-g++ $flags -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections -fdata-sections \
  -Wall -Wextra -Werror -O2 "$@" -I "$src/runtime-support/include" -I "$fw" \
  "$src/tests/firmware/kernels/quant_kernels_main.cpp" "$fw/startup.cpp" \
  -nostartfiles -Wl,--gc-sections -L "$fw" -T "$machine.ld" -o "$image"
exec timeout 60 qemu-system-arm -M "$machine" -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$image"
