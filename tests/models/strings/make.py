#!/usr/bin/python3
"""Writes small models on string tensors in the backend-test layout, with expected outputs
computed independently (numpy's str() of float32, Python's str.upper). Run from this directory:
    /usr/bin/python3 make.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402


def numbers_text_roundtrip():
    """Constant strings read as floats, added to the input, written back as text and upper-cased
    (copied from the Cast's text storage into as much of its own); a constant string tensor with
    quotes, a backslash, a tab, a trigraph and UTF-8 passed through to an output."""
    words = np.array(['a"b\\c', "tab\there", "??=", "\u00fcn\u00ef"], dtype=object)
    numbers = np.array(["1.5", "-2e3", "nan", "0.1"], dtype=object)
    graph = helper.make_graph(
        [helper.make_node("Cast", ["numbers"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["f", "x"], ["sum"]),
         helper.make_node("Cast", ["sum"], ["text"], to=TensorProto.STRING),
         helper.make_node("StringNormalizer", ["text"], ["upper"], case_change_action="UPPER"),
         helper.make_node("Identity", ["words"], ["words_out"])],
        "numbers_text_roundtrip",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("upper", TensorProto.STRING, [4]),
         helper.make_tensor_value_info("words_out", TensorProto.STRING, [4])],
        [numpy_helper.from_array(words, "words"), numpy_helper.from_array(numbers, "numbers")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([1.0, 2.5, 3.0, 1e20], dtype=np.float32)
    total = np.array([1.5, -2e3, np.nan, 0.1], dtype=np.float32) + x
    upper = np.array([str(v).upper() for v in total], dtype=object)
    save("numbers_text_roundtrip", model, [("x", x)], [("upper", upper), ("words_out", words)])


def upper_input_strings():
    """The caller's strings without the stopword, upper-cased into text storage of --string-bytes
    per element: a bounded output (3 of at most 4 strings)."""
    graph = helper.make_graph(
        [helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER", stopwords=["stop"])],
        "upper_input_strings",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [4])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])
    x = np.array(["Hello", "onnx-2", "stop", "MiXeD"], dtype=object)
    y = np.array([s.upper() for s in x if s != "stop"], dtype=object)
    save("upper_input_strings", model, [("x", x)], [("y", y)])


if __name__ == "__main__":
    numbers_text_roundtrip()
    upper_input_strings()
