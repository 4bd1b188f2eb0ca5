#!/bin/sh
# onnxc validate --layers (issue #25): every step's values against ONNX Runtime's
# (test_data_set_0/layers/, written by tools/layer-reference/write-layers.mjs).
#  1. the model as it is: every compared value within tolerance, PASS;
#  2. the same model with one Conv's weights scaled by 1.5 (python3-onnx): validate fails and
#     names that Conv's step as the first divergence, the steps before it still ok.
# usage: validate_layers.sh ONNXC MODEL_DIR WEIGHT FIRST_DIVERGENCE [validate options...]
#   WEIGHT: the initializer to perturb; FIRST_DIVERGENCE: "step N 'node'" expected
set -eu
onnxc=$1 dir=$2 weight=$3 first=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$dir" "$tmp/model"
"$onnxc" validate "$tmp/model" --layers "$@" > "$tmp/good.txt" 2>&1 || { cat "$tmp/good.txt"; echo "FAIL: the unperturbed model"; exit 1; }
cat "$tmp/good.txt"
grep -q "none diverges" "$tmp/good.txt"

/usr/bin/python3 - "$tmp/model/model.onnx" "$weight" <<'PY'
import sys, onnx
from onnx import numpy_helper
path, name = sys.argv[1], sys.argv[2]
m = onnx.load(path)
for i, t in enumerate(m.graph.initializer):
    if t.name == name:
        m.graph.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 1.5, name))
        break
else:
    raise SystemExit("no initializer " + name)
onnx.save(m, path)
PY
if "$onnxc" validate "$tmp/model" --layers "$@" > "$tmp/bad.txt" 2>&1; then
  cat "$tmp/bad.txt"; echo "FAIL: validate --layers passed a model with perturbed weights"; exit 1
fi
cat "$tmp/bad.txt"
grep -q "first divergence at $first" "$tmp/bad.txt" || { echo "FAIL: expected the first divergence at $first"; exit 1; }
echo PASS
