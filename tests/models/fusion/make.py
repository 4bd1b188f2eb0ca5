#!/usr/bin/python3
"""Writes models the rewriting passes change (fold-batchnorm: Conv/Gemm followed by
BatchNormalization; simplify: Transpose pairs, Identity, Cast to the same type), with expected
outputs computed independently in numpy; and eltwise_chains (fuse-elementwise), whose expected
outputs come from ONNX Runtime:

    node build/ort/ort-run.mjs tests/models/fusion/eltwise_chains     (see that script's header)

Run from this directory."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402

rng = np.random.default_rng(42)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def bn_params(c):
    return f32(c), f32(c), f32(c), (rng.random(c) + 0.5).astype(np.float32)


def batchnorm(y, scale, bias, mean, var, eps, axis=1):
    shape = [1] * y.ndim
    shape[axis] = -1
    r = lambda v: v.astype(np.float64).reshape(shape)
    return ((y - r(mean)) / np.sqrt(r(var) + eps) * r(scale) + r(bias)).astype(np.float32)


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i:i + kh, j:j + kw]
            y[:, :, i, j] = np.tensordot(patch, w.astype(np.float64), axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, -1, 1, 1)


def conv_bn():
    x, w, b = f32(1, 3, 6, 6), f32(4, 3, 3, 3, scale=0.5), f32(4)
    scale, bias, mean, var = bn_params(4)
    inits = [numpy_helper.from_array(v, n) for v, n in
             [(w, "w"), (b, "b"), (scale, "s"), (bias, "bb"), (mean, "m"), (var, "v")]]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["y"], epsilon=1e-3)],
        "conv_bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    y = batchnorm(conv2d(x, w, b, 1), scale, bias, mean, var, 1e-3)
    save("conv_bn", model, [("x", x)], [("y", y)])


def gemm_bn(name, c_shape):
    a, w = f32(3, 5), f32(4, 5)
    c = f32(*c_shape)
    scale, bias, mean, var = bn_params(4)
    inits = [numpy_helper.from_array(v, n) for v, n in
             [(w, "w"), (c, "c"), (scale, "s"), (bias, "bb"), (mean, "m"), (var, "v")]]
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["a", "w", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
         helper.make_node("BatchNormalization", ["g", "s", "bb", "m", "v"], ["y"])],
        name, [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    g = 0.5 * a.astype(np.float64) @ w.T.astype(np.float64) + 2.0 * c.astype(np.float64)
    save(name, model, [("a", a)], [("y", batchnorm(g, scale, bias, mean, var, 1e-5))])


def transpose_pairs():
    """Two Transpose pairs (one cancels, one composes to a single Transpose), an Identity and a
    Cast to float around a Relu and an Add."""
    x, w = f32(2, 3, 4), f32(3, 2, 4)
    t = lambda i, o, perm: helper.make_node("Transpose", [i], [o], perm=perm)
    graph = helper.make_graph(
        [t("x", "t1", [1, 2, 0]), t("t1", "t2", [2, 0, 1]),  # cancel: back to [2, 3, 4]
         helper.make_node("Relu", ["t2"], ["r"]),
         t("r", "t3", [0, 2, 1]), t("t3", "t4", [2, 0, 1]),  # compose: one Transpose of r, perm [1, 0, 2]
         helper.make_node("Identity", ["t4"], ["i"]),
         helper.make_node("Cast", ["i"], ["c"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["c", "w"], ["y"])],
        "transpose_pairs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2, 4])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    r = np.maximum(x, 0)
    y = np.transpose(np.transpose(r, (0, 2, 1)), (2, 0, 1)) + w
    save("transpose_pairs", model, [("x", x)], [("y", y)])


def eltwise_chains():
    """Elementwise chains for fuse-elementwise: a per-channel scale and exact GELU in one group
    (the scaled value is read twice inside it); GELU's output, read by three groups, stays a
    tensor; Clip with constant bounds, Greater, Neg, Where and a round trip through float16
    (rounded between the Casts) in one group; and an Add of a [1, 4, 1, 8] operand, which needs
    four loops and stays with the kernels. Writes the model and its input only: the outputs are
    ONNX Runtime's (see the module doc)."""
    x = f32(2, 4, 6, 8, scale=2.0)
    consts = {"scale": f32(4, 1, 1), "shift": f32(1, 4, 1, 8), "sqrt2": np.float32(np.sqrt(2)),
              "one": np.float32(1), "half": np.float32(0.5), "zero": np.float32(0), "lo": np.float32(-1),
              "hi": np.float32(3)}
    n = helper.make_node
    graph = helper.make_graph(
        [n("Mul", ["x", "scale"], ["s"]),
         n("Div", ["s", "sqrt2"], ["e"]), n("Erf", ["e"], ["f"]), n("Add", ["f", "one"], ["g"]),
         n("Mul", ["s", "g"], ["h"]), n("Mul", ["h", "half"], ["gelu"]),
         n("Sigmoid", ["gelu"], ["side"]),
         n("Greater", ["x", "zero"], ["positive"]), n("Clip", ["gelu", "lo", "hi"], ["c"]),
         n("Neg", ["gelu"], ["negated"]), n("Where", ["positive", "c", "negated"], ["w"]),
         n("Cast", ["w"], ["w16"], to=TensorProto.FLOAT16), n("Cast", ["w16"], ["back"], to=TensorProto.FLOAT),
         n("Add", ["back", "shift"], ["y"])],
        "eltwise_chains", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("side", TensorProto.FLOAT, x.shape)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    save("eltwise_chains", model, [("x", x)], [])


if __name__ == "__main__":
    conv_bn()
    gemm_bn("gemm_bn_vector_c", (4,))
    gemm_bn("gemm_bn_matrix_c", (3, 4))
    transpose_pairs()
    eltwise_chains()
