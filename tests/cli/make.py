#!/usr/bin/python3
"""Writes options_model/, the model the command-line tests pass every repeatable option for: an
input with a symbolic dim (--dim, --shape), one to fold (--constant), a sequence (--sequence) and an
optional one (--empty-optional), with one data set whose outputs are computed in numpy. Run from
this directory:
    /usr/bin/python3 make.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def options_model():
    """y = x * k + s[0]; h = OptionalHasElement(o)."""
    tensor3 = helper.make_tensor_type_proto(TensorProto.FLOAT, [3])
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["a"], name="scale"),
         helper.make_node("SequenceAt", ["s", "zero"], ["s0"], name="first"),
         helper.make_node("Add", ["a", "s0"], ["y"], name="shift"),
         helper.make_node("OptionalHasElement", ["o"], ["h"], name="has")],
        "options_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, [1]),
         helper.make_value_info("s", helper.make_sequence_type_proto(tensor3)),
         helper.make_value_info("o", helper.make_optional_type_proto(tensor3))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("h", TensorProto.BOOL, [])],
        [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    x = np.array([[1.0, -2.0, 0.5], [4.0, 0.0, -1.25]], dtype=np.float32)
    k = np.array([2.0], dtype=np.float32)
    s0 = np.array([0.25, 1.0, -3.0], dtype=np.float32)
    os.makedirs("options_model/test_data_set_0", exist_ok=True)
    onnx.save(model, "options_model/model.onnx")
    files = {
        "input_0.pb": numpy_helper.from_array(x, "x"),
        "input_1.pb": numpy_helper.from_array(k, "k"),
        "input_2.pb": numpy_helper.from_list([s0], "s"),
        "input_3.pb": numpy_helper.from_optional(None, "o", onnx.OptionalProto.TENSOR),
        "output_0.pb": numpy_helper.from_array((x * k + s0).astype(np.float32), "y"),
        "output_1.pb": numpy_helper.from_array(np.array(False), "h"),
    }
    for file, proto in files.items():
        with open(os.path.join("options_model/test_data_set_0", file), "wb") as f:
            f.write(proto.SerializeToString())


if __name__ == "__main__":
    options_model()
