#!/usr/bin/python3
"""Writes small control-flow models (Loop, If with outer-scope reads, Scan-8) in the backend-test
layout, with expected outputs computed independently in numpy. Run from this directory:
    /usr/bin/python3 make.py
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402


def loop_static():
    """Loop with a constant trip count of 4: x += step each iteration, scan output 2 * x."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["x_in", "step"], ["x_out"]),
         helper.make_node("Mul", ["x_out", "two"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [3])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x0"], ["x_final", "scans"], body=body)],
        "loop_static",
        [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("step", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("x_final", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("scans", TensorProto.FLOAT, [4, 3])],
        [numpy_helper.from_array(np.array(4, dtype=np.int64), "M"),
         numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x0 = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    step = np.array([0.25, 1.0, -3.0], dtype=np.float32)
    x, scans = x0.copy(), []
    for _ in range(4):
        x = x + step
        scans.append(2 * x)
    save("loop_static", model, [("x0", x0), ("step", step)],
         [("x_final", x), ("scans", np.stack(scans).astype(np.float32))])


def if_outer_scope():
    """If whose branches read a tensor computed outside them (outer scope)."""
    then_g = helper.make_graph([helper.make_node("Relu", ["h"], ["r"])], "then", [],
                               [helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["h"], ["r2"])], "else", [],
                               [helper.make_tensor_value_info("r2", TensorProto.FLOAT, [2, 2])])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["h"]),
         helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        "if_outer_scope",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([[1.0, -1.5], [2.0, -0.25]], dtype=np.float32)
    save("if_outer_true", model, [("x", x), ("c", np.array(True))], [("y", np.maximum(2 * x, 0))])
    save("if_outer_false", model, [("x", x), ("c", np.array(False))], [("y", -(2 * x))])


def scan8_batched():
    """Scan-8 over a batch of 2: a running sum per batch entry, its input scanned in reverse."""
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "next"], ["sum_out"]),
         helper.make_node("Mul", ["sum_out", "next"], ["scan_out"])],
        "body",
        [helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("next", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["", "initial", "x"], ["final", "scanned"], body=body, num_scan_inputs=1,
                          directions=[1])],
        "scan8_batched",
        [helper.make_tensor_value_info("initial", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 2])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("scanned", TensorProto.FLOAT, [2, 3, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    initial = np.array([[1.0, 2.0], [-1.0, 0.5]], dtype=np.float32)
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 4 - 1
    final, scanned = initial.copy(), np.zeros_like(x)
    for b in range(2):
        for t in range(3):  # reverse: element 2, 1, 0; outputs in iteration order
            final[b] = final[b] + x[b, 2 - t]
            scanned[b, t] = final[b] * x[b, 2 - t]
    save("scan8_batched", model, [("initial", initial), ("x", x)], [("final", final), ("scanned", scanned)])


if __name__ == "__main__":
    loop_static()
    if_outer_scope()
    scan8_batched()
