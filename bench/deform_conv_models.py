#!/usr/bin/python3
"""Writes two DeformConv-19 layers as models in the backend-test layout, for bench/bench.py
(docs/performance.md, "DeformConv"): 3 x 3, pads 1, one offset group with a mask, on 64 channels
of 28 x 28 and on 128 channels of 14 x 14 (about 29 M multiply-accumulates each). Then write
ONNX Runtime's outputs and time both:

    /usr/bin/python3 bench/deform_conv_models.py /tmp/dcn
    for d in /tmp/dcn/*/; do node /work/ort/ort-run.mjs $d; done
    python3 bench/bench.py --onnxc build/onnxc --ort /work/ort --models /tmp/dcn --target native
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from testdata import save  # noqa: E402


def main(out):
    os.makedirs(out, exist_ok=True)
    os.chdir(out)
    rng = np.random.default_rng(5)
    F = TensorProto.FLOAT
    for name, channels, size in (("dcn_64x28", 64, 28), ("dcn_128x14", 128, 14)):
        x = rng.standard_normal((1, channels, size, size)).astype(np.float32)
        w = (rng.standard_normal((channels, channels, 3, 3)) * 0.05).astype(np.float32)
        offset = (rng.standard_normal((1, 18, size, size)) * 0.8).astype(np.float32)
        mask = rng.random((1, 9, size, size)).astype(np.float32)
        node = helper.make_node("DeformConv", ["x", "w", "offset", "", "mask"], ["y"], name="dcn", pads=[1, 1, 1, 1])
        inputs = [("x", x), ("offset", offset), ("mask", mask)]
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info(k, F, list(a.shape)) for k, a in inputs],
                                  [helper.make_tensor_value_info("y", F, [1, channels, size, size])],
                                  [numpy_helper.from_array(w, "w")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        model.ir_version = 9
        save(name, model, inputs, [], check=False)


if __name__ == "__main__":
    main(sys.argv[1])
