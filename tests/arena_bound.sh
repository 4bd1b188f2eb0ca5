#!/bin/sh
# ctest check of issue #29's bar: the arena `onnxc MODEL --target TARGET` plans is at most 1.05x
# the tensors' liveness bound (peak_tensor_bytes of --report-json: the largest sum over the steps
# of the tensors live there, which every plan must hold at once; kernel scratch is what can add).
#   arena_bound.sh ONNXC MODEL.onnx OUT_DIR TARGET
onnxc="$1"; model="$2"; out="$3"; target="$4"
mkdir -p "$out" || exit 1
"$onnxc" "$model" --target "$target" --report-json "$out/report.json" -o "$out/model.cpp" > "$out/log.txt" 2>&1 ||
  { cat "$out/log.txt"; exit 1; }
arena=$(sed -n 's/.*"arena_bytes": *\([0-9]*\).*/\1/p' "$out/report.json" | head -1)
bound=$(sed -n 's/.*"peak_tensor_bytes": *\([0-9]*\).*/\1/p' "$out/report.json" | head -1)
echo "arena $arena B, tensors' liveness bound $bound B (target $target)"
[ -n "$arena" ] && [ -n "$bound" ] && [ $((arena * 100)) -le $((bound * 105)) ]
