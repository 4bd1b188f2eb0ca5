#!/usr/bin/python3
"""Writes all_dtypes.onnx: a model whose outputs are constants of every dtype numpy can make
(float, double, float16, int8/16/32/64, uint8/64, bool, with extreme values), so the weights
of the generated code are returned unchanged: a test compares them between weight formats."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, mapping, numpy_helper

rng = np.random.default_rng(7)
constants = {
    "f32": rng.standard_normal(37).astype(np.float32),
    "f64": rng.standard_normal(5).astype(np.float64),
    "f16": rng.standard_normal(9).astype(np.float16),
    "i8": rng.integers(-128, 127, 11).astype(np.int8),
    "u8": rng.integers(0, 255, 13).astype(np.uint8),
    "i16": rng.integers(-30000, 30000, 3).astype(np.int16),
    "i32": rng.integers(-2**31, 2**31 - 1, 7).astype(np.int32),
    "i64": np.array([-2**63, 2**63 - 1, 0, 5], np.int64),
    "u64": np.array([2**64 - 1, 0, 3], np.uint64),
    "b": rng.integers(0, 2, 17).astype(bool),
}
# One computed output too, so the model has an input and a step.
nodes = [helper.make_node("Relu", ["x"], ["y"])]
outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
for name, value in constants.items():
    nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name + "_value")))
    outputs.append(helper.make_tensor_value_info(name, mapping.NP_TYPE_TO_TENSOR_TYPE[value.dtype], list(value.shape)))
graph = helper.make_graph(nodes, "all_dtypes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], outputs)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "all_dtypes.onnx"))
