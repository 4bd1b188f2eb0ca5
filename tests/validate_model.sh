#!/bin/sh
# ctest wrapper: onnxc validate a model directory; a missing directory is reported as skipped
# (exit 77, which ctest shows as "Skipped", never as passed).
onnxc="$1"; dir="$2"; shift 2
if [ ! -f "$dir/model.onnx" ]; then
  echo "SKIPPED: $dir/model.onnx not found (the shared model corpus is not beside this checkout)"
  exit 77
fi
exec "$onnxc" validate "$dir" "$@"
