#!/usr/bin/python3
"""Writes models of ai.onnx.ml operators (issue #24) in the backend-test layout, with ONNX
Runtime's outputs as the reference (it runs ai.onnx.ml). Run from this directory:

    /usr/bin/python3 make.py /path/to/ort-run.mjs
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402

F = TensorProto.FLOAT
ML = "ai.onnx.ml"


def linear(ort_run):
    """Scaler (float and int64 input), Normalizer (MAX, L1, L2, with a zero row), Binarizer,
    LinearRegressor (two targets), LinearClassifier (three classes with SOFTMAX; binary with
    LOGISTIC), as skl2onnx writes them, in one model."""
    rng = np.random.default_rng(24)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    x[2] = 0.0  # a zero row: Normalizer leaves it as it is
    xi = rng.integers(-5, 5, (4, 3)).astype(np.int64)
    coef3 = rng.standard_normal(9).tolist()
    nodes = [
        helper.make_node("Scaler", ["x"], ["scaled"], domain=ML, offset=[0.5, -1.0, 2.0], scale=[2.0, 0.5, 1.5]),
        helper.make_node("Scaler", ["xi"], ["scaled_int"], domain=ML, offset=[1.0], scale=[0.25]),
        helper.make_node("Normalizer", ["x"], ["norm_max"], domain=ML, norm="MAX"),
        helper.make_node("Normalizer", ["x"], ["norm_l1"], domain=ML, norm="L1"),
        helper.make_node("Normalizer", ["x"], ["norm_l2"], domain=ML, norm="L2"),
        helper.make_node("Binarizer", ["x"], ["binary"], domain=ML, threshold=0.3),
        helper.make_node("LinearRegressor", ["x"], ["regression"], domain=ML, targets=2,
                         coefficients=rng.standard_normal(6).tolist(), intercepts=[0.5, -0.25]),
        helper.make_node("LinearClassifier", ["x"], ["label3", "prob3"], domain=ML, classlabels_ints=[7, 8, 9],
                         coefficients=coef3, intercepts=[0.1, 0.2, -0.3], post_transform="SOFTMAX"),
        helper.make_node("LinearClassifier", ["x"], ["label2", "prob2"], domain=ML, classlabels_ints=[0, 1],
                         coefficients=[0.7, -1.2, 0.4], intercepts=[0.05], post_transform="LOGISTIC"),
    ]
    outputs = [("scaled", F, [4, 3]), ("scaled_int", F, [4, 3]), ("norm_max", F, [4, 3]), ("norm_l1", F, [4, 3]),
               ("norm_l2", F, [4, 3]), ("binary", F, [4, 3]), ("regression", F, [4, 2]),
               ("label3", TensorProto.INT64, [4]), ("prob3", F, [4, 3]), ("label2", TensorProto.INT64, [4]),
               ("prob2", F, [4, 2])]
    graph = helper.make_graph(nodes, "ml_linear", [helper.make_tensor_value_info("x", F, [4, 3]),
                                                   helper.make_tensor_value_info("xi", TensorProto.INT64, [4, 3])],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])
    model.ir_version = 8
    save("linear", model, [("x", x), ("xi", xi)], [])
    subprocess.run(["node", ort_run, "linear"], check=True)


if __name__ == "__main__":
    linear(sys.argv[1])
