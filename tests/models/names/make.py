#!/usr/bin/python3
"""Writes models whose node names break the spec's uniqueness rule, as exporters write them, in the
backend-test layout with expected outputs computed in numpy. onnx's checker accepts them (ONNX
Runtime 1.30 refuses them: "two nodes with same node name"); onnxc compiles them with a warning
and refuses them with --strict. Run from this directory:
    /usr/bin/python3 make.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402


def duplicate_node_names():
    """Three nodes named 'dup' (one an If whose branch is inlined), one unnamed, and one named
    'dup_1', which a renaming by suffix must not collide with: y = -(relu(x) * x + x)."""
    then_g = helper.make_graph([helper.make_node("Neg", ["c"], ["t"], name="dup")], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Identity", ["c"], ["e"], name="dup")], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"], name="dup"),
         helper.make_node("Mul", ["a", "x"], ["b"], name="dup"),
         helper.make_node("Add", ["b", "x"], ["c"]),
         helper.make_node("Identity", ["cond_init"], ["cond"], name="dup_1"),
         helper.make_node("If", ["cond"], ["y"], name="dup", then_branch=then_g, else_branch=else_g)],
        "duplicate_node_names",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(True), "cond_init")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([[-1.5, 0.0, 2.0], [3.0, -0.25, 0.5]], dtype=np.float32)
    y = -(np.maximum(x, 0) * x + x)
    save("duplicate_node_names", model, [("x", x)], [("y", y.astype(np.float32))])


if __name__ == "__main__":
    duplicate_node_names()
