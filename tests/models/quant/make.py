#!/usr/bin/python3
"""Writes QDQ models (float Conv/MatMul between DequantizeLinear and QuantizeLinear, as ONNX
Runtime's quantizer produces them) for the lower-qdq pass, with input data sets. Run from this
directory. The expected outputs come from ONNX Runtime, which runs these models with its
integer kernels (QLinearConv, QLinearMatMul):

    node build-quant/ort/ort-run.mjs tests/models/quant/<model>     (see that script's header)

Scales are calibrated here on the data sets with a float forward pass (min/max of each
activation, uint8 asymmetric; weights int8 symmetric, per output channel where marked)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402

rng = np.random.default_rng(7)


def conv2d(x, w, b, pad, stride):
    """Float reference convolution (NCHW, one group), for calibration only."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, -1, 1, 1)


def activation_qparams(v):
    """uint8 asymmetric scale and zero point covering [min(v, 0), max(v, 0)]."""
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    return scale, np.uint8(np.clip(np.rint(-lo / scale), 0, 255))


def weight_qparams(w, axis):
    """int8 symmetric scales, per slice along `axis` (None: per tensor)."""
    if axis is None:
        return np.float32(np.abs(w).max() / 127.0)
    other = tuple(i for i in range(w.ndim) if i != axis)
    return (np.abs(w).max(axis=other) / 127.0).astype(np.float32)


def quantize_weight(w, scale, axis):
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = -1
    return np.clip(np.rint(w / np.reshape(scale, shape)), -127, 127).astype(np.int8)


class QdqGraph:
    """Collects nodes and initializers; every float tensor between ops goes through Q -> DQ."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qdq(self, name, value):
        """Q then DQ of activation `name` with parameters calibrated on its float value."""
        scale, zp = activation_qparams(value)
        s, z = self.const(f"{name}_scale", scale), self.const(f"{name}_zp", zp)
        self.nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [f"{name}_q"]))
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", s, z], [f"{name}_dq"]))
        return f"{name}_dq", scale

    def weight(self, name, w, axis):
        """DQ of an int8 weight; returns the DQ output, the dequantized weight and its scale."""
        scale = weight_qparams(w, axis)
        q = quantize_weight(w, scale, axis)
        zp = np.zeros_like(scale, dtype=np.int8) if axis is not None else np.int8(0)
        ins = [self.const(f"{name}_q", q), self.const(f"{name}_scale", scale), self.const(f"{name}_zp", zp)]
        self.nodes.append(helper.make_node("DequantizeLinear", ins, [f"{name}_dq"], **({"axis": axis} if axis is not None else {})))
        shape = [1] * w.ndim
        if axis is not None:
            shape[axis] = -1
        return f"{name}_dq", q.astype(np.float32) * np.reshape(scale, shape), scale

    def bias(self, name, b, x_scale, w_scale):
        """DQ of an int32 bias with scale x_scale * w_scale, zero point 0 (the QLinearConv convention)."""
        scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        q = np.rint(b / scale).astype(np.int32)
        self.nodes.append(helper.make_node("DequantizeLinear", [self.const(f"{name}_q", q), self.const(f"{name}_scale", scale)],
                                           [f"{name}_dq"], axis=0))
        return f"{name}_dq", q.astype(np.float32) * scale


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


if __name__ == "__main__":
    qdq_cnn()
