#!/usr/bin/python3
"""Writes a model whose Reshape target shape is a graph input, with three data sets of which two
share a target shape, in the backend-test layout; expected outputs computed independently in
numpy. `onnxc validate --pin-shape-inputs` must pin only 'shape' (x stays a run-time input) and
compile twice. Run from this directory:
    /usr/bin/python3 make.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402


def reshape_shapes():
    """y = Relu(Reshape(x, shape)) for x of shape [2, 3, 4] and three target shapes."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["r"]),
         helper.make_node("Relu", ["r"], ["y"])],
        "reshape_shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    rng = np.random.default_rng(7)
    for data_set, target in enumerate([[4, 3, 2], [6, -1, 1], [4, 3, 2]]):
        x = rng.standard_normal((2, 3, 4)).astype(np.float32)
        shape = np.array(target, dtype=np.int64)
        y = np.maximum(x.reshape(target), 0)
        save("reshape_shapes", model, [("x", x), ("shape", shape)], [("y", y)], data_set)


if __name__ == "__main__":
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    reshape_shapes()
