#!/bin/sh
# tools/layer-reference (issue #25): write-layers.mjs on mnist-cnn writes one file per node output
# (10), each naming its value, and their values are the committed ones
# (tests/models/mnist-cnn/test_data_set_0/layers, written by the same tool) within 1e-6.
# Skipped (77) without node or onnxruntime-node in tools/layer-reference (`npm ci` there).
# usage: layer_reference.sh MODEL_DIR
set -eu
dir=$1
tool=$(cd "$(dirname "$0")/../../tools/layer-reference" && pwd)
if ! command -v node >/dev/null 2>&1 || [ ! -d "$tool/node_modules/onnxruntime-node" ]; then
  echo "SKIPPED: node or onnxruntime-node missing (run npm ci in tools/layer-reference)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/model/test_data_set_0"
cp "$dir/model.onnx" "$tmp/model/"
cp "$dir"/test_data_set_0/input_*.pb "$tmp/model/test_data_set_0/"
node "$tool/write-layers.mjs" "$tmp/model"
/usr/bin/python3 - "$dir/test_data_set_0/layers" "$tmp/model/test_data_set_0/layers" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper
def values(d):
    return {t.name: numpy_helper.to_array(t) for t in (onnx.load_tensor(os.path.join(d, f)) for f in sorted(os.listdir(d)))}
want, got = values(sys.argv[1]), values(sys.argv[2])
if set(want) != set(got):
    raise SystemExit("FAIL: values %s written, %s expected" % (sorted(got), sorted(want)))
for name in want:
    if want[name].shape != got[name].shape or not np.allclose(want[name], got[name], rtol=1e-6, atol=1e-6):
        raise SystemExit("FAIL: '%s' differs" % name)
print("%d values, as committed" % len(want))
PY
echo PASS
