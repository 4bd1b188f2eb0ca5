#!/usr/bin/python3
"""Writes the SVM benchmark models of docs/classical-ml.md (issue #24) into DIR (default
/tmp/mlsvm-bench): an RBF SVMClassifier, 200 support vectors (four classes of 50) on 32 features,
batch 1 and 64, seeded weights, ONNX Runtime outputs as test data. Then:

    python3 bench/bench.py --onnxc build/onnxc --ort /work/ort --models DIR --rounds 3 --runs 20
"""
import os
import subprocess
import sys
import numpy as np
from onnx import helper, TensorProto as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from testdata import save  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/mlsvm-bench"
os.makedirs(out, exist_ok=True)
os.chdir(out)
rng = np.random.default_rng(7)
c, k, per = 32, 4, 50
for tag, batch in (("svm_rbf200_b1", 1), ("svm_rbf200_b64", 64)):
    sv = rng.standard_normal((k * per, c)).astype(np.float32)
    n = helper.make_node("SVMClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", classlabels_ints=list(range(k)),
        vectors_per_class=[per] * k, support_vectors=sv.ravel().tolist(),
        coefficients=rng.standard_normal((k - 1) * k * per).tolist(), rho=rng.standard_normal(k * (k - 1) // 2).tolist(),
        kernel_type="RBF", kernel_params=[1.0 / c, 0.0, 0.0])
    g = helper.make_graph([n], tag, [helper.make_tensor_value_info("x", T.FLOAT, [batch, c])],
        [helper.make_tensor_value_info("label", T.INT64, [batch]), helper.make_tensor_value_info("scores", T.FLOAT, [batch, 6])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]); m.ir_version = 8
    save(tag, m, [("x", rng.standard_normal((batch, c)).astype(np.float32))], [])
    subprocess.run(["node", "/work/ort/ort-run.mjs", tag], check=True)
