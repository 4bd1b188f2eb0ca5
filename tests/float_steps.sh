#!/bin/sh
# ctest check of issue #29's bar: `onnxc MODEL --report` marks the float steps left between
# integer steps; the operators of those steps (QuantizeLinear and DequantizeLinear aside), sorted,
# must be exactly the expected ones (none when no operator is given).
#   float_steps.sh ONNXC MODEL.onnx OUT_DIR [OP...]
onnxc="$1"; model="$2"; out="$3"; shift 3
mkdir -p "$out" || exit 1
"$onnxc" "$model" --report -o "$out/model.cpp" > "$out/report.txt" 2>&1 || { cat "$out/report.txt"; exit 1; }
found=$(grep "FLOAT between integer steps" "$out/report.txt" | awk '{print $3}' | sed 's/-[0-9]*$//' |
        grep -v -x -e QuantizeLinear -e DequantizeLinear | sort | tr '\n' ' ')
expected=$(printf '%s\n' "$@" | grep -v '^$' | sort | tr '\n' ' ')
grep "FLOAT between integer steps" "$out/report.txt"
echo "float steps: [$found] expected: [$expected]"
[ "$found" = "$expected" ]
