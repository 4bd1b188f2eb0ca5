#!/usr/bin/python3
"""Writes models of operators from opsets newer than Debian's libonnx-testdata covers (it stops
at 17), in the backend-test layout, with ONNX Runtime's outputs as the reference. Run from this
directory:

    /usr/bin/python3 make.py /path/to/ort-run.mjs

onnx 1.12 does not know these opsets: the models are built with onnx.helper and saved unchecked.
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402

F = TensorProto.FLOAT


def swish(ort_run):
    """Swish-24: alone with alpha 0.7 (rt::Swish), and after a Conv with the default alpha 1,
    where it is SiLU and fuses into the Conv's epilogue."""
    rng = np.random.default_rng(24)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.5
    nodes = [helper.make_node("Swish", ["x"], ["y_alpha"], name="swish_alpha", alpha=0.7),
             helper.make_node("Conv", ["x", "w"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Swish", ["conv"], ["y_silu"], name="swish_silu")]
    graph = helper.make_graph(
        nodes, "swish", [helper.make_tensor_value_info("x", F, [1, 3, 6, 7])],
        [helper.make_tensor_value_info("y_alpha", F, [1, 3, 6, 7]),
         helper.make_tensor_value_info("y_silu", F, [1, 4, 6, 7])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 10
    x = (rng.standard_normal((1, 3, 6, 7)) * 4).astype(np.float32)
    save("swish", model, [("x", x)], [], check=False)
    subprocess.run(["node", ort_run, "swish"], check=True)


if __name__ == "__main__":
    swish(sys.argv[1])
