#!/bin/sh
# ctest: builds examples/firmware for one core with its CMake toolchain file
# (cmake/arm-none-eabi.cmake, cmake/riscv32-unknown-elf.cmake), the way a firmware project would,
# and runs its images on the core's emulated board. Skipped (exit 77) without the toolchain or QEMU.
#   example_firmware.sh ONNXC SOURCE_DIR WORK_DIR GENERATOR CORE MACHINE
onnxc="$1"; source="$2"; work="$3"; generator="$4"; core="$5"; machine="$6"
case $core in
  riscv32*)
    toolchain=riscv32-unknown-elf compiler=riscv64-unknown-elf-gcc emulator="qemu-system-riscv32 -bios none"
    packages="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libstdc++-arm-none-eabi-newlib qemu-system-misc" ;;
  *)
    toolchain=arm-none-eabi compiler=arm-none-eabi-g++ emulator=qemu-system-arm
    packages="gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm" ;;
esac
for tool in $compiler ${emulator%% *}; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool not found (Debian packages: $packages; tools/install-deps.sh installs them)"
    exit 77
  fi
done
rm -rf "$work"
cmake -S "$source/examples/firmware" -B "$work" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE="$source/cmake/$toolchain.cmake" -DONNXC_CORE="$core" \
      -DONNXC_HOST_EXECUTABLE="$onnxc" || exit 1
cmake --build "$work" || exit 1
# Both programs: kws_firmware, then two_models_firmware (kws and mnist-cnn sharing one arena).
for image in kws_firmware two_models_firmware; do
  # shellcheck disable=SC2086
  $emulator -M "$machine" -nographic -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel "$work/$image.elf" || exit 1
done
