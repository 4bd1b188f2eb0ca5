#!/usr/bin/python3
"""Writes QDQ models (float Conv/MatMul between DequantizeLinear and QuantizeLinear, as ONNX
Runtime's quantizer produces them) for the lower-qdq pass, with input data sets. Run from this
directory. The expected outputs come from ONNX Runtime, which runs these models with its
integer kernels (QLinearConv, QLinearMatMul):

    node build-quant/ort/ort-run.mjs tests/models/quant/<model>     (see that script's header)

Scales are calibrated here on the data sets with a float forward pass (min/max of each
activation, uint8 asymmetric; weights int8 symmetric, per output channel where marked)."""
import contextlib
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402
from qdq import QdqGraph, conv2d  # noqa: E402

rng = np.random.default_rng(7)


def qdq_cnn():
    """Conv(3->8, per-channel int8, int32 bias) -> Relu -> Conv(8->4, stride 2, per-tensor) ->
    Reshape -> MatMul(64->10, per-column); uint8 activations."""
    inputs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(2)]
    calib = np.concatenate(inputs)
    g = QdqGraph()
    x, x_scale = g.qdq("x", calib)
    w1, w1f, w1_scale = g.weight("w1", rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3, 0)
    b1, b1f = g.bias("b1", rng.standard_normal(8).astype(np.float32) * 0.2, x_scale, w1_scale)
    g.nodes.append(helper.make_node("Conv", [x, w1, b1], ["c1"], pads=[1, 1, 1, 1]))
    g.nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
    r1f = np.maximum(conv2d(calib, w1f, b1f, 1, 1), 0)
    r1, _ = g.qdq("r1", r1f)
    w2, w2f, _ = g.weight("w2", rng.standard_normal((4, 8, 3, 3)).astype(np.float32) * 0.2, None)
    g.nodes.append(helper.make_node("Conv", [r1, w2], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]))
    c2f = conv2d(r1f, w2f, np.zeros(4, np.float32), 1, 2)
    c2, _ = g.qdq("c2", c2f)
    g.nodes.append(helper.make_node("Reshape", [c2, g.const("flat_shape", np.array([-1, 64], np.int64))], ["flat"]))
    flat, _ = g.qdq("flat", c2f)
    w3, w3f, _ = g.weight("w3", rng.standard_normal((64, 10)).astype(np.float32) * 0.2, 1)
    g.nodes.append(helper.make_node("MatMul", [flat, w3], ["m3"]))
    m3f = c2f.reshape(-1, 64) @ w3f
    _, _ = g.qdq("m3", m3f)
    graph = helper.make_graph(
        g.nodes, "qdq_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("m3_q", TensorProto.UINT8, [1, 10]),
         helper.make_tensor_value_info("m3_dq", TensorProto.FLOAT, [1, 10])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    for i, x_value in enumerate(inputs):
        # Placeholder outputs: ort-run.mjs overwrites them with ONNX Runtime's.
        save("qdq_cnn", model, [("x", x_value)], [("m3_q", np.zeros((1, 10), np.uint8)),
                                                  ("m3_dq", np.zeros((1, 10), np.float32))], data_set=i)


def qdq_mlp():
    """Gemm(16->12, transB, per-row int8 weight, int32 bias) -> Relu -> Gemm(12->5, per-tensor,
    bias); uint8 activations, a batch of 2."""
    inputs = [rng.standard_normal((2, 16)).astype(np.float32) for _ in range(2)]
    calib = np.concatenate(inputs)
    g = QdqGraph()
    x, x_scale = g.qdq("x", calib)
    w1, w1f, w1_scale = g.weight("w1", rng.standard_normal((12, 16)).astype(np.float32) * 0.3, 0)
    b1, b1f = g.bias("b1", rng.standard_normal(12).astype(np.float32) * 0.2, x_scale, w1_scale)
    g.nodes.append(helper.make_node("Gemm", [x, w1, b1], ["g1"], transB=1))
    g.nodes.append(helper.make_node("Relu", ["g1"], ["r1"]))
    r1f = np.maximum(calib @ w1f.T + b1f, 0)
    r1, r1_scale = g.qdq("r1", r1f)
    w2, w2f, w2_scale = g.weight("w2", rng.standard_normal((12, 5)).astype(np.float32) * 0.3, None)
    b2, b2f = g.bias("b2", rng.standard_normal(5).astype(np.float32) * 0.2, r1_scale, np.full(5, w2_scale, np.float32))
    g.nodes.append(helper.make_node("Gemm", [r1, w2, b2], ["g2"]))
    g.qdq("g2", r1f @ w2f + b2f)
    graph = helper.make_graph(
        g.nodes, "qdq_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("g2_q", TensorProto.UINT8, [2, 5]),
         helper.make_tensor_value_info("g2_dq", TensorProto.FLOAT, [2, 5])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    for i, x_value in enumerate(inputs):
        save("qdq_mlp", model, [("x", x_value)], [("g2_q", np.zeros((2, 5), np.uint8)),
                                                  ("g2_dq", np.zeros((2, 5), np.float32))], data_set=i)


def qdq_activations():
    """Quantized activations and products, uint8: s = Sigmoid(x), m = x * s (Swish, with Mul),
    h = HardSwish(m), l = LeakyRelu(h, 0.1), c = Clip(l, -0.5, 2), t = Tanh(c), y = t + x (Add),
    p = MaxPool(y, 2x2); every tensor wrapped in Q -> DQ."""
    inputs = [rng.standard_normal((1, 4, 6, 6)).astype(np.float32) * 2 for _ in range(2)]
    xf = np.concatenate(inputs)
    g = QdqGraph()
    x, _ = g.qdq("x", xf)
    sf = 1 / (1 + np.exp(-xf))
    g.nodes.append(helper.make_node("Sigmoid", [x], ["s"]))
    s, _ = g.qdq("s", sf)
    mf = xf * sf
    g.nodes.append(helper.make_node("Mul", [x, s], ["m"]))
    m, _ = g.qdq("m", mf)
    hf = mf * np.clip(mf / 6 + 0.5, 0, 1)
    g.nodes.append(helper.make_node("HardSwish", [m], ["h"]))
    h, _ = g.qdq("h", hf)
    lf = np.where(hf < 0, 0.1 * hf, hf)
    g.nodes.append(helper.make_node("LeakyRelu", [h], ["l"], alpha=0.1))
    l, _ = g.qdq("l", lf)
    cf = np.clip(lf, -0.5, 2)
    g.nodes.append(helper.make_node("Clip", [l, g.const("lo", np.float32(-0.5)), g.const("hi", np.float32(2))], ["c"]))
    c, _ = g.qdq("c", cf)
    tf = np.tanh(cf)
    g.nodes.append(helper.make_node("Tanh", [c], ["t"]))
    t, _ = g.qdq("t", tf)
    g.nodes.append(helper.make_node("Add", [t, x], ["y"]))
    y, y_scale = g.qdq("y", tf + xf)
    # MaxPool keeps the scale: Q -> DQ with y's parameters around it.
    g.nodes.append(helper.make_node("MaxPool", [y], ["p"], kernel_shape=[2, 2], strides=[2, 2]))
    g.nodes.append(helper.make_node("QuantizeLinear", ["p", "y_scale", "y_zp"], ["p_q"]))
    g.nodes.append(helper.make_node("DequantizeLinear", ["p_q", "y_scale", "y_zp"], ["p_dq"]))
    graph = helper.make_graph(
        g.nodes, "qdq_activations", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y_q", TensorProto.UINT8, [1, 4, 6, 6]),
         helper.make_tensor_value_info("p_q", TensorProto.UINT8, [1, 4, 3, 3]),
         helper.make_tensor_value_info("p_dq", TensorProto.FLOAT, [1, 4, 3, 3])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7
    for i, x_value in enumerate(inputs):
        save("qdq_activations", model, [("x", x_value)], [("y_q", np.zeros((1, 4, 6, 6), np.uint8)),
                                                          ("p_q", np.zeros((1, 4, 3, 3), np.uint8)),
                                                          ("p_dq", np.zeros((1, 4, 3, 3), np.float32))], data_set=i)


def qdq_resize():
    """Linear and cubic Resizes of one uint8 activation [1, 3, 6, 7], each between DQ and Q (opset 13):
    r1 bilinear half_pixel x2 and r4 shrinking (pytorch_half_pixel) with the input's
    parameters, as ONNX Runtime's quantizer and PyTorch write Resize; r2 align_corners to 9 x 11,
    r3 bicubic asymmetric x1.5 (exclude_outside) and r6 tf_crop_and_resize (extrapolation 0.5) to parameters of
    their own; r5 blends the channels too (axis 1), which onnxc's integer kernel does not, so it
    stays float. Expected outputs: ONNX Runtime with graph optimisations off (ort_run_definition.mjs),
    the float definition, which the integer form matches within a step: the dequantized outputs
    are compared with an absolute tolerance of r3's scale, the largest (ctest model.quant.qdq_resize),
    one step of each output."""
    inputs = [rng.standard_normal((1, 3, 6, 7)).astype(np.float32) * 2 for _ in range(2)]
    xf = np.concatenate(inputs)
    g = QdqGraph()
    x, _ = g.qdq("x", xf)
    empty = g.const("no_roi", np.zeros(0, np.float32))
    no_scales = g.const("no_scales", np.zeros(0, np.float32))

    def resize(name, params, scales=None, sizes=None, roi=None, **attrs):
        ins = [x, g.const(name + "_roi", np.array(roi, np.float32)) if roi else empty,
               g.const(name + "_scales", np.array(scales, np.float32)) if scales else no_scales]
        if sizes:
            ins.append(g.const(name + "_sizes", np.array(sizes, np.int64)))
        g.nodes.append(helper.make_node("Resize", ins, [name], **attrs))
        if params is None:
            g.nodes.append(helper.make_node("QuantizeLinear", [name, "x_scale", "x_zp"], [name + "_q"]))
            g.nodes.append(helper.make_node("DequantizeLinear", [name + "_q", "x_scale", "x_zp"], [name + "_dq"]))
        else:
            print(name, "scale", g.qdq(name, params)[1])

    resize("r1", None, scales=[1, 1, 2, 2], mode="linear")
    resize("r2", xf * 0.9, sizes=[1, 3, 9, 11], mode="linear", coordinate_transformation_mode="align_corners")
    resize("r3", xf * 1.1, scales=[1, 1, 1.5, 1.5], mode="cubic", coordinate_transformation_mode="asymmetric",
           exclude_outside=1)
    resize("r4", None, sizes=[1, 3, 3, 4], mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
    resize("r5", xf, scales=[1, 2, 1, 1], mode="linear")
    resize("r6", xf, roi=[0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2], sizes=[1, 3, 4, 5], mode="linear",
           coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5)
    shapes = {"r1": [1, 3, 12, 14], "r2": [1, 3, 9, 11], "r3": [1, 3, 9, 10], "r4": [1, 3, 3, 4], "r5": [1, 6, 6, 7],
              "r6": [1, 3, 4, 5]}
    graph = helper.make_graph(
        g.nodes, "qdq_resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 7])],
        [helper.make_tensor_value_info(name + "_dq", TensorProto.FLOAT, shape) for name, shape in shapes.items()],
        g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    for i, x_value in enumerate(inputs):
        save("qdq_resize", model, [("x", x_value)],
             [(name + "_dq", np.zeros(shape, np.float32)) for name, shape in shapes.items()], data_set=i)


def qdq_residual():
    """TensorRT's residuals, whose product has no quantization of its own: Conv -> Add(DQ(r)) ->
    Q, in the orders and placements quantizers write it. c1: Conv(x) + x -> Relu -> Q (the product
    first; per-channel weights, int32 bias). c2: x + Conv(c1) -> Q -> DQ -> Relu -> Q of the same
    parameters (the DQ first; Relu after the Q; per-tensor weights, no bias). c3: Conv(c2) + c1 ->
    Clip(0, 1.5) -> Q (float bias, int8 output). g: Gemm(Flatten(c3)) + v -> Q (a second input v).
    m: MatMul(g) + bias + v -> Relu -> Q. Expected outputs from ONNX Runtime's definition run
    (ORT_DIR=/work/ort node ort_run_definition.mjs qdq_residual): its optimised run is 7 of m's 16
    outputs off by up to 0.93 (18 steps) on this model, where onnxc's float and integer paths both
    match the definition exactly."""
    inputs = [(rng.standard_normal((1, 8, 5, 5)).astype(np.float32), rng.standard_normal((1, 16)).astype(np.float32))
              for _ in range(2)]
    xs = np.concatenate([i[0] for i in inputs])
    vs = np.concatenate([i[1] for i in inputs])
    g = QdqGraph()
    x, x_scale = g.qdq("x", xs)
    v, _ = g.qdq("v", vs)
    w1, w1f, w1_scale = g.weight("w1", rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2, 0)
    b1, b1f = g.bias("b1", rng.standard_normal(8).astype(np.float32) * 0.2, x_scale, w1_scale)
    g.nodes.append(helper.make_node("Conv", [x, w1, b1], ["p1"], pads=[1, 1, 1, 1]))
    g.nodes.append(helper.make_node("Add", ["p1", x], ["s1"]))
    g.nodes.append(helper.make_node("Relu", ["s1"], ["c1"]))
    c1f = np.maximum(conv2d(xs, w1f, b1f, 1, 1) + xs, 0)
    c1, _ = g.qdq("c1", c1f)
    w2, w2f, _ = g.weight("w2", rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2, None)
    g.nodes.append(helper.make_node("Conv", [c1, w2], ["p2"], pads=[1, 1, 1, 1]))
    g.nodes.append(helper.make_node("Add", [x, "p2"], ["s2"]))
    s2f = conv2d(c1f, w2f, np.zeros(8, np.float32), 1, 1) + xs
    s2, _ = g.qdq("s2", s2f)
    scale, zp = g.inits[-2].name, g.inits[-1].name  # (s2's parameters, shared by the Relu's Q)
    g.nodes.append(helper.make_node("Relu", [s2], ["c2"]))
    g.nodes.append(helper.make_node("QuantizeLinear", ["c2", scale, zp], ["c2_q"]))
    g.nodes.append(helper.make_node("DequantizeLinear", ["c2_q", scale, zp], ["c2_dq"]))
    c2f = np.maximum(s2f, 0)
    w3, w3f, _ = g.weight("w3", rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2, 0)
    b3f = (rng.standard_normal(8) * 0.2).astype(np.float32)
    g.nodes.append(helper.make_node("Conv", ["c2_dq", w3, g.const("b3", b3f)], ["p3"], pads=[1, 1, 1, 1]))
    g.nodes.append(helper.make_node("Add", ["p3", c1], ["s3"]))
    g.nodes.append(helper.make_node("Clip", ["s3", g.const("lo", np.float32(0)), g.const("hi", np.float32(1.5))], ["c3"]))
    c3f = np.clip(conv2d(c2f, w3f, b3f, 1, 1) + c1f, 0, 1.5)
    c3_scale = np.float32(max(float(c3f.max()), 1e-3) / 127)
    g.nodes.append(helper.make_node("QuantizeLinear", ["c3", g.const("c3_scale", c3_scale), g.const("c3_zp", np.int8(0))],
                                    ["c3_q"]))
    g.nodes.append(helper.make_node("DequantizeLinear", ["c3_q", "c3_scale", "c3_zp"], ["c3_dq"]))
    g.nodes.append(helper.make_node("Flatten", ["c3_dq"], ["flat"]))
    flat, flat_scale = g.qdq("flat", c3f.reshape(2, -1))
    w4, w4f, w4_scale = g.weight("w4", rng.standard_normal((16, 200)).astype(np.float32) * 0.1, 0)
    b4, b4f = g.bias("b4", rng.standard_normal(16).astype(np.float32) * 0.2, flat_scale, w4_scale)
    g.nodes.append(helper.make_node("Gemm", [flat, w4, b4], ["p4"], transB=1))
    g.nodes.append(helper.make_node("Add", ["p4", v], ["s4"]))
    s4f = c3f.reshape(2, -1) @ w4f.T + b4f + vs
    s4, s4_scale = g.qdq("s4", s4f)
    w5, w5f, w5_scale = g.weight("w5", rng.standard_normal((16, 16)).astype(np.float32) * 0.3, 1)
    b5, b5f = g.bias("b5", rng.standard_normal(16).astype(np.float32) * 0.2, s4_scale, w5_scale)
    g.nodes.append(helper.make_node("MatMul", [s4, w5], ["p5"]))
    g.nodes.append(helper.make_node("Add", ["p5", b5], ["p5b"]))
    g.nodes.append(helper.make_node("Add", [v, "p5b"], ["s5"]))
    g.nodes.append(helper.make_node("Relu", ["s5"], ["m"]))
    g.qdq("m", np.maximum(s4f @ w5f + b5f + vs, 0))
    graph = helper.make_graph(
        g.nodes, "qdq_residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 5, 5]),
                                  helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("c3_dq", TensorProto.FLOAT, [1, 8, 5, 5]),
         helper.make_tensor_value_info("m_dq", TensorProto.FLOAT, [1, 16])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    for i, (x_value, v_value) in enumerate(inputs):
        save("qdq_residual", model, [("x", x_value), ("v", v_value)],
             [("c3_dq", np.zeros((1, 8, 5, 5), np.float32)), ("m_dq", np.zeros((1, 16), np.float32))], data_set=i)


MODELS = {"qdq_cnn": qdq_cnn, "qdq_mlp": qdq_mlp, "qdq_activations": qdq_activations, "qdq_resize": qdq_resize,
          "qdq_residual": qdq_residual}

if __name__ == "__main__":
    # Every model draws from one random stream, in this order: a model not named on the command
    # line (none named: all are written) is made in a scratch directory, for its draws only.
    wanted = set(sys.argv[1:]) or set(MODELS)
    for name, make in MODELS.items():
        if name in wanted:
            make()
            continue
        with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
            make()
