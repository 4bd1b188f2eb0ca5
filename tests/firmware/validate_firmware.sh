#!/bin/sh
# ctest wrapper: onnxc validate --target CORE on a model directory, in QEMU. Reported as skipped
# (exit 77, never as passed) when the model, the Arm toolchain or QEMU is absent;
# tools/install-deps.sh installs the tools.
onnxc="$1"; core="$2"; dir="$3"; shift 3
if [ ! -f "$dir/model.onnx" ]; then
  echo "SKIPPED: $dir/model.onnx not found (the shared model corpus is not beside this checkout)"
  exit 77
fi
for tool in "${ONNXC_ARM_CXX:-arm-none-eabi-g++}" qemu-system-arm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool not found (tools/install-deps.sh installs it)"
    exit 77
  fi
done
exec "$onnxc" validate "$dir" --target "$core" --report "$@"
