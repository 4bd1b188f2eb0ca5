#!/usr/bin/python3
"""Writes models the rewriting passes change (fold-batchnorm: Conv/Gemm followed by
BatchNormalization; fold-affine: Conv/Gemm/MatMul followed by Mul/Add/Sub/Div by constants;
fuse-activation: GELU, written out and as Gelu-20, after a Gemm and a Conv, and activations
after MatMuls; simplify: Transpose
pairs, Identity, Cast to the same type), with expected outputs computed independently in numpy; and eltwise_chains (fuse-elementwise), whose expected
outputs come from ONNX Runtime:

    node build/ort/ort-run.mjs tests/models/fusion/eltwise_chains     (see that script's header)

Run from this directory."""
import math
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


def erf(v):
    return np.vectorize(math.erf)(v)


def conv_affine():
    """A Conv followed by per-channel and scalar Mul, Add, Sub (both operand orders) and Div, then
    Relu: fold-affine folds all five into the Conv's weights, fuse-activation the Relu."""
    x, w, b = f32(1, 3, 6, 6), f32(4, 3, 3, 3, scale=0.5), f32(4)
    scale, shift, divisor = f32(4, 1, 1), f32(1, 4, 1, 1), (rng.random((4, 1, 1)) + 0.5).astype(np.float32)
    consts = {"w": w, "b": b, "scale": scale, "shift": shift, "three": np.float32(3), "divisor": divisor}
    n = helper.make_node
    graph = helper.make_graph(
        [n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         n("Mul", ["scale", "c"], ["m"]), n("Add", ["m", "shift"], ["a"]), n("Sub", ["a", "three"], ["s"]),
         n("Sub", ["three", "s"], ["r"]), n("Div", ["r", "divisor"], ["d"]), n("Relu", ["d"], ["y"])],
        "conv_affine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    d64 = lambda v: v.astype(np.float64)
    c = conv2d(x, w, b, 1)
    r = 3.0 - (d64(scale) * c + d64(shift) - 3.0)
    save("conv_affine", model, [("x", x)], [("y", np.maximum(r / d64(divisor), 0).astype(np.float32))])


def matmul_affine():
    """MatMul of a [2, 3, 5] input by constant weights, then a per-column Mul and Add (fold-affine:
    a Gemm between two Reshape views) and GELU written out as PyTorch exports it (fuse-activation
    through the view); a 2-d MatMul minus a [1, 4] constant (a Gemm); a Gemm divided by a [4]
    constant."""
    a3, a2 = f32(2, 3, 5), f32(3, 5)
    w, w2, wg, cg = f32(5, 4), f32(5, 4), f32(4, 5), f32(4)
    consts = {"w": w, "scale": f32(4), "bias": f32(4), "sqrt2": np.float32(np.sqrt(2)), "one": np.float32(1),
              "half": np.float32(0.5), "w2": w2, "sub": f32(1, 4), "wg": wg, "cg": cg,
              "div": (rng.random(4) + 0.5).astype(np.float32)}
    n = helper.make_node
    graph = helper.make_graph(
        [n("MatMul", ["a3", "w"], ["p"]), n("Mul", ["p", "scale"], ["ps"]), n("Add", ["bias", "ps"], ["x"]),
         n("Div", ["x", "sqrt2"], ["e"]), n("Erf", ["e"], ["f"]), n("Add", ["f", "one"], ["g"]),
         n("Mul", ["x", "g"], ["h"]), n("Mul", ["h", "half"], ["y"]),
         n("MatMul", ["a2", "w2"], ["q"]), n("Sub", ["q", "sub"], ["y2"]),
         n("Gemm", ["a2", "wg", "cg"], ["r"], transB=1, beta=0.5), n("Div", ["r", "div"], ["y3"])],
        "matmul_affine", [helper.make_tensor_value_info("a3", TensorProto.FLOAT, a3.shape),
                          helper.make_tensor_value_info("a2", TensorProto.FLOAT, a2.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("y3", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    d64 = lambda v: np.asarray(v).astype(np.float64)
    x = d64(a3) @ d64(w) * d64(consts["scale"]) + d64(consts["bias"])
    y = 0.5 * x * (1 + erf(x / np.sqrt(2)))
    y2 = d64(a2) @ d64(w2) - d64(consts["sub"])
    y3 = (d64(a2) @ d64(wg).T + 0.5 * d64(cg)) / d64(consts["div"])
    save("matmul_affine", model, [("a3", a3), ("a2", a2)],
         [("y", y.astype(np.float32)), ("y2", y2.astype(np.float32)), ("y3", y3.astype(np.float32))])


def conv_gelu():
    """Gelu-20 after a Conv (approximate='tanh') and after a Gemm (exact): fuse-activation merges
    both. Opset 20 is newer than Debian's onnx checker knows, so the model is not checked."""
    x, w, b = f32(1, 3, 6, 6), f32(4, 3, 3, 3, scale=0.5), f32(4)
    a, wg = f32(3, 5), f32(5, 4)
    n = helper.make_node
    graph = helper.make_graph(
        [n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), n("Gelu", ["c"], ["y"], approximate="tanh"),
         n("Gemm", ["a", "wg"], ["g"]), n("Gelu", ["g"], ["y2"])],
        "conv_gelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                      helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(v, k) for k, v in {"w": w, "b": b, "wg": wg}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    c = conv2d(x, w, b, 1)
    y = 0.5 * c * (1 + np.tanh(np.sqrt(2 / np.pi) * (c + 0.044715 * c ** 3)))
    g = a.astype(np.float64) @ wg.astype(np.float64)
    y2 = 0.5 * g * (1 + erf(g / np.sqrt(2)))
    save("conv_gelu", model, [("x", x), ("a", a)], [("y", y.astype(np.float32)), ("y2", y2.astype(np.float32))],
         check=False)


def matmul_activation():
    """Activations after MatMuls: constant weights and a [2, 3, 5] input (fuse-activation makes it
    a Gemm between Reshape views that takes the Relu), a 2-d one (a Gemm taking the Sigmoid), and
    weights that are an input (left a MatMul, the Tanh a node of its own)."""
    a3, a2, bt = f32(2, 3, 5), f32(3, 5), f32(5, 4)
    w, w2 = f32(5, 4), f32(5, 4)
    n = helper.make_node
    graph = helper.make_graph(
        [n("MatMul", ["a3", "w"], ["p"]), n("Relu", ["p"], ["y"]),
         n("MatMul", ["a2", "w2"], ["q"]), n("Sigmoid", ["q"], ["y2"]),
         n("MatMul", ["a2", "bt"], ["r"]), n("Tanh", ["r"], ["y3"])],
        "matmul_activation", [helper.make_tensor_value_info("a3", TensorProto.FLOAT, a3.shape),
                              helper.make_tensor_value_info("a2", TensorProto.FLOAT, a2.shape),
                              helper.make_tensor_value_info("bt", TensorProto.FLOAT, bt.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("y3", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    d64 = lambda v: v.astype(np.float64)
    y = np.maximum(d64(a3) @ d64(w), 0)
    y2 = 1 / (1 + np.exp(-(d64(a2) @ d64(w2))))
    y3 = np.tanh(d64(a2) @ d64(bt))
    save("matmul_activation", model, [("a3", a3), ("a2", a2), ("bt", bt)],
         [("y", y.astype(np.float32)), ("y2", y2.astype(np.float32)), ("y3", y3.astype(np.float32))])


def matrix_products():
    """The matrix-product kernels pack-weights chooses between: a Gemm by constant transposed
    weights with a bias and a Relu (rt::gemm_packed_b), a MatMul of a [37, 1, 19] input by
    constant weights (one Gemm of 37 rows), a deep one (K = 300: depth ranges), transA with
    constant weights, a Gemm of two inputs (rt::gemm_tiles reading B in place), a Gemm whose C is
    [M, N] (rt::gemm) and a batched 4-d MatMul broadcasting B (rt::matmul_tiles); then the
    dot-product kernel (rt::gemm_dots): a Gemm by a transposed input B, a batched MatMul to 3
    columns broadcasting B (rt::matmul_dots), a Gemm by constant [K, 2] weights with a bias
    (strided columns) and one by transposed constant [1, K] weights with a bias [1]; then
    products by a Transpose of a runtime input that fold-transpose removes: a batched MatMul
    broadcasting B^T [1, 3, 13, 19] (rt::matmul_tiles packing it a block at a time) and a Gemm whose
    transB it flips (rt::gemm_dots)."""
    x, a3, ad, at = f32(37, 70), f32(37, 1, 19), f32(4, 300), f32(23, 6)
    a2, b2, a4, b4 = f32(6, 11), f32(11, 17), f32(2, 3, 7, 9), f32(1, 3, 9, 5)
    wt, bias = f32(33, 70), f32(33)
    w3, wd, wa, cm = f32(19, 41), f32(300, 20), f32(23, 18), f32(6, 17)
    bt, a5, b5, w2, bias2, w1 = f32(13, 11), f32(2, 3, 7, 300), f32(1, 3, 300, 3), f32(70, 2), f32(2), f32(1, 70)
    bias1 = f32(1)
    local = np.random.default_rng(1121)  # the global generator's draws stay those of the models after this one
    a6, b6t, b7t = [local.standard_normal(s).astype(np.float32) for s in [(2, 3, 7, 19), (1, 3, 13, 19), (17, 11)]]
    n = helper.make_node
    inputs = [("x", x), ("a3", a3), ("ad", ad), ("at", at), ("a2", a2), ("b2", b2), ("a4", a4), ("b4", b4),
              ("bt", bt), ("a5", a5), ("b5", b5), ("a6", a6), ("b6t", b6t), ("b7t", b7t)]
    outputs = [("y", [37, 33]), ("y3", [37, 1, 41]), ("yd", [4, 20]), ("yt", [6, 18]), ("y2", [6, 17]),
               ("yc", [6, 17]), ("y4", [2, 3, 7, 5]), ("ytb", [6, 13]), ("y5", [2, 3, 7, 3]), ("yw2", [37, 2]),
               ("yw1", [37, 1]), ("y6", [2, 3, 7, 13]), ("y7", [6, 17])]
    graph = helper.make_graph(
        [n("Gemm", ["x", "wt", "bias"], ["g"], transB=1), n("Relu", ["g"], ["y"]),
         n("MatMul", ["a3", "w3"], ["y3"]), n("MatMul", ["ad", "wd"], ["yd"]),
         n("Gemm", ["at", "wa"], ["yt"], transA=1), n("Gemm", ["a2", "b2"], ["y2"]),
         n("Gemm", ["a2", "b2", "cm"], ["yc"], alpha=0.5, beta=2.0), n("MatMul", ["a4", "b4"], ["y4"]),
         n("Gemm", ["a2", "bt"], ["ytb"], transB=1), n("MatMul", ["a5", "b5"], ["y5"]),
         n("Gemm", ["x", "w2", "bias2"], ["yw2"]), n("Gemm", ["x", "w1", "bias1"], ["yw1"], transB=1),
         n("Transpose", ["b6t"], ["b6"], perm=[0, 1, 3, 2]), n("MatMul", ["a6", "b6"], ["y6"]),
         n("Transpose", ["b7t"], ["b7"], perm=[1, 0]), n("Gemm", ["a2", "b7"], ["y7"])],
        "matrix_products", [helper.make_tensor_value_info(name, TensorProto.FLOAT, v.shape) for name, v in inputs],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in outputs],
        [numpy_helper.from_array(v, name) for name, v in
         [("wt", wt), ("bias", bias), ("w3", w3), ("wd", wd), ("wa", wa), ("cm", cm), ("w2", w2), ("bias2", bias2),
          ("w1", w1), ("bias1", bias1)]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    d = lambda v: v.astype(np.float64)
    expected = [np.maximum(d(x) @ d(wt).T + d(bias), 0), d(a3) @ d(w3), d(ad) @ d(wd), d(at).T @ d(wa),
                d(a2) @ d(b2), 0.5 * (d(a2) @ d(b2)) + 2.0 * d(cm), d(a4) @ d(b4), d(a2) @ d(bt).T, d(a5) @ d(b5),
                d(x) @ d(w2) + d(bias2), d(x) @ d(w1).T + d(bias1), d(a6) @ np.swapaxes(d(b6t), 2, 3),
                d(a2) @ d(b7t).T]
    save("matrix_products", model, inputs,
         [(name, v.astype(np.float32)) for (name, _), v in zip(outputs, expected)])


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


def conv_winograd():
    """3 x 3 stride-1 Convs the compiler gives rt::conv_winograd on SIMD targets (16 -> 64
    channels, 27 x 27 outputs or more), with an odd output size (a last tile of one row and
    column), padding 1 and 0, and a fused Relu."""
    x, w1, b1, w2, b2 = f32(1, 16, 29, 29), f32(64, 16, 3, 3, scale=0.25), f32(64), f32(64, 16, 3, 3, scale=0.25), f32(64)
    inits = [numpy_helper.from_array(v, n) for v, n in [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
         helper.make_node("Relu", ["c1"], ["y1"]),
         helper.make_node("Conv", ["x", "w2", "b2"], ["y2"])],
        "conv_winograd", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 64, 29, 29]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 64, 27, 27])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    y1 = np.maximum(conv2d(x, w1, b1, 1), 0).astype(np.float32)
    y2 = conv2d(x, w2, b2, 0).astype(np.float32)
    save("conv_winograd", model, [("x", x)], [("y1", y1), ("y2", y2)])


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


def eltwise_libm():
    """Float chains with libm steps, which fuse-elementwise groups and SIMD targets run through
    the steps' vector forms: SiLU of a per-channel scale (s * Sigmoid(s)), then Tanh, Exp of the
    negation, Log(1 + .), Sqrt and Div; and Erf(x - 0.5), Relu. 35 elements per row (two vectors
    of 16 and a scalar tail of 3 on AVX-512), the scale a broadcast operand. Expected outputs in
    float64 numpy."""
    x = f32(2, 8, 5, 7, scale=3.0)
    x[0, 0, 0, :3] = [-100.0, 100.0, 0.0]  # the tails of Sigmoid and Tanh
    scale = f32(1, 8, 1, 1)
    consts = {"scale": scale, "one": np.float32(1), "half": np.float32(0.5)}
    n = helper.make_node
    graph = helper.make_graph(
        [n("Mul", ["x", "scale"], ["s"]), n("Sigmoid", ["s"], ["sig"]), n("Mul", ["s", "sig"], ["silu"]),
         n("Tanh", ["silu"], ["t"]), n("Neg", ["t"], ["nt"]), n("Exp", ["nt"], ["e"]),
         n("Add", ["e", "one"], ["e1"]), n("Log", ["e1"], ["l"]), n("Sqrt", ["e1"], ["r"]),
         n("Div", ["l", "r"], ["y"]),
         n("Sub", ["x", "half"], ["xh"]), n("Erf", ["xh"], ["er"]), n("Relu", ["er"], ["z"])],
        "eltwise_libm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, x.shape)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sd = x.astype(np.float64) * scale.astype(np.float64)
    silu = sd / (1.0 + np.exp(-sd))
    e1 = np.exp(-np.tanh(silu)) + 1.0
    y = (np.log(e1) / np.sqrt(e1)).astype(np.float32)
    z = np.maximum(erf(x.astype(np.float64) - 0.5), 0.0).astype(np.float32)
    save("eltwise_libm", model, [("x", x)], [("y", y), ("z", z)])


def depthwise(x, w, b, stride, pad, dilation):
    """Depthwise convolution in float64: pad = (top, left, bottom, right)."""
    n, c, h, wd = x.shape
    _, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, c, oh, ow)) + b.astype(np.float64).reshape(1, -1, 1, 1)
    for i in range(kh):
        for j in range(kw):
            tap = xp[:, :, i * dilation[0]:, j * dilation[1]:][:, :, ::stride[0], ::stride[1]][:, :, :oh, :ow]
            y += tap * w[:, 0, i, j].astype(np.float64).reshape(1, -1, 1, 1)
    return y


def depthwise_se():
    """Depthwise Convs of the shapes the row kernels had no fast path for (5 x 5 stride 2 on a
    29 x 29 plane: stride phases; on a 13 x 13 plane: channels in the lanes; 3 x 3 dilation 2
    stride 1 not 'same'; 1 x 7 stride 3) with HardSwish, Relu and Sigmoid after them, and a
    squeeze-excite block (GlobalAveragePool, Sigmoid, the [1, C, 1, 1] x [1, C, H, W] Mul with
    the scale first)."""
    c = 20
    x1, x2 = f32(1, c, 29, 29), f32(1, c, 13, 13)
    w1, w2, w3, w4 = (f32(c, 1, 5, 5, scale=0.4), f32(c, 1, 5, 5, scale=0.4), f32(c, 1, 3, 3, scale=0.5),
                      f32(c, 1, 1, 7, scale=0.4))
    b1, b2, b3, b4 = f32(c), f32(c), f32(c), f32(c)
    n = helper.make_node
    consts = {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "b3": b3, "w4": w4, "b4": b4}
    graph = helper.make_graph(
        [n("Conv", ["x1", "w1", "b1"], ["c1"], group=c, strides=[2, 2], pads=[2, 2, 2, 2]),
         n("HardSwish", ["c1"], ["h1"]), n("GlobalAveragePool", ["h1"], ["g1"]), n("Sigmoid", ["g1"], ["s1"]),
         n("Mul", ["s1", "h1"], ["y1"]),
         n("Conv", ["x2", "w2", "b2"], ["c2"], group=c, strides=[2, 2], pads=[2, 1, 2, 2]),
         n("Relu", ["c2"], ["y2"]),
         n("Conv", ["x1", "w3", "b3"], ["c3"], group=c, dilations=[2, 2], pads=[1, 1, 1, 1]),
         n("Sigmoid", ["c3"], ["y3"]),
         n("Conv", ["x1", "w4", "b4"], ["y4"], group=c, strides=[3, 3], pads=[0, 3, 0, 3])],
        "depthwise_se", [helper.make_tensor_value_info("x1", TensorProto.FLOAT, x1.shape),
                         helper.make_tensor_value_info("x2", TensorProto.FLOAT, x2.shape)],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, shape) for v, shape in
         (("y1", [1, c, 15, 15]), ("y2", [1, c, 7, 6]), ("y3", [1, c, 27, 27]), ("y4", [1, c, 10, 10]))],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    c1 = depthwise(x1, w1, b1, (2, 2), (2, 2, 2, 2), (1, 1))
    h1 = c1 * np.clip(c1 / 6 + 0.5, 0, 1)
    s1 = 1 / (1 + np.exp(-h1.mean(axis=(2, 3), keepdims=True)))
    y2 = np.maximum(depthwise(x2, w2, b2, (2, 2), (2, 1, 2, 2), (1, 1)), 0)
    y3 = 1 / (1 + np.exp(-depthwise(x1, w3, b3, (1, 1), (1, 1, 1, 1), (2, 2))))
    y4 = depthwise(x1, w4, b4, (3, 3), (0, 3, 0, 3), (1, 1))
    f = lambda v: v.astype(np.float32)
    save("depthwise_se", model, [("x1", x1), ("x2", x2)], [("y1", f(s1 * h1)), ("y2", f(y2)), ("y3", f(y3)), ("y4", f(y4))])


def conv_nd(x, w, b, group, stride, pad, dilation):
    """Grouped 1-d or 2-d convolution in float64 (x [N, C, *spatial], symmetric padding)."""
    spatial = x.ndim - 2
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    if spatial == 1:
        x64, w64 = x64[:, :, None, :], w64[:, :, None, :]
        stride, pad, dilation = (1, stride), (0, pad), (1, dilation)
    else:
        stride, pad, dilation = (stride, stride), (pad, pad), (dilation, dilation)
    n, c, h, wd = x64.shape
    m, cg, kh, kw = w64.shape
    mg = m // group
    xp = np.pad(x64, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, m, oh, ow))
    for g in range(group):
        xg, wg = xp[:, g * cg:(g + 1) * cg], w64[g * mg:(g + 1) * mg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dilation[0], j * dilation[1]
                tap = xg[:, :, r0:r0 + stride[0] * (oh - 1) + 1:stride[0], c0:c0 + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", tap, wg[:, :, i, j])
    y += b.astype(np.float64).reshape(1, -1, 1, 1)
    return y[:, :, 0, :] if spatial == 1 else y


def add_output(nodes, outputs, expected, name, conv_out, y, relu):
    """Output `name`: the node's conv_out, through a Relu when relu (y its float64 value)."""
    if relu:
        nodes.append(helper.make_node("Relu", [conv_out], [name]))
        y = np.maximum(y, 0)
    y = y.astype(np.float32)
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, y.shape))
    expected.append((name, y))


def save_x_row_model(name, nodes, inits, outputs, expected, x, row, more_inputs=()):
    """Saves an opset-13 model of inputs x and row (and more_inputs: (name, value) pairs)."""
    inputs = [("x", x), ("row", row)] + list(more_inputs)
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape)
                                            for n, v in inputs], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    save(name, model, inputs, expected)


def conv_grouped():
    """Grouped Convs, which the one-group kernels compute group by group (rt::conv_each_group,
    weights packed per group): group widths 2, 8, 16 (regnet_x_400mf's) and 24; stride 1 and 2,
    a 5 x 5 kernel, dilation 2, a fused Relu, narrow outputs (the packed direct kernel), a 1-d
    grouped Conv, and one input channel per group with two outputs each (the direct loops).
    Expected outputs in float64 numpy."""
    x = f32(1, 48, 15, 15)
    row = f32(2, 16, 37)
    specs = [  # name, input, out channels, group, kernel, stride, pad, dilation, relu
        ("w16", "x", 48, 3, 3, 1, 1, 1, True), ("w16s2", "x", 48, 3, 3, 2, 1, 1, False),
        ("w24", "x", 48, 2, 3, 1, 1, 1, False), ("w8k5", "x", 24, 6, 5, 1, 2, 1, True),
        ("w2d2", "x", 48, 24, 3, 1, 2, 2, False), ("w16small", "x", 48, 3, 3, 4, 0, 1, False),
        ("mult2", "x", 96, 48, 3, 1, 1, 1, False), ("grouped_row", "row", 32, 4, 5, 2, 2, 1, True)]
    nodes, inits, outputs, expected = [], [], [], []
    for name, src, m, group, k, stride, pad, dilation, relu in specs:
        xin = x if src == "x" else row
        spatial = xin.ndim - 2
        w = f32(*([m, xin.shape[1] // group] + [k] * spatial), scale=0.25)
        b = f32(m)
        inits += [numpy_helper.from_array(w, "w_" + name), numpy_helper.from_array(b, "b_" + name)]
        conv_out = name + "_conv" if relu else name
        nodes.append(helper.make_node("Conv", [src, "w_" + name, "b_" + name], [conv_out], group=group,
                                      kernel_shape=[k] * spatial, strides=[stride] * spatial,
                                      pads=[pad] * (2 * spatial), dilations=[dilation] * spatial))
        y = conv_nd(xin, w, b, group, stride, pad, dilation)
        add_output(nodes, outputs, expected, name, conv_out, y, relu)
    save_x_row_model("conv_grouped", nodes, inits, outputs, expected, x, row)


def conv_transpose_nd(x, w, b, group, stride, pads, dilation, output_padding):
    """Grouped 1-d or 2-d ConvTranspose in float64 by scattering every input pixel times every
    tap (x [N, C, *spatial], w [C, M / group, *kernel], pads [begin..., end...])."""
    spatial = x.ndim - 2
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    if spatial == 1:
        x64, w64 = x64[:, :, None, :], w64[:, :, None, :]
        stride, dilation, output_padding = (1, stride[0]), (1, dilation[0]), (0, output_padding[0])
        pads = (0, pads[0], 0, pads[1])
    n, c, h, wd = x64.shape
    _, mg, kh, kw = w64.shape
    cg = c // group
    out = [(size - 1) * stride[i] - pads[i] - pads[i + 2] + dilation[i] * (k - 1) + 1 + output_padding[i]
           for i, (size, k) in enumerate([(h, kh), (wd, kw)])]
    full = [max((size - 1) * stride[i] + dilation[i] * (k - 1) + 1, pads[i] + out[i])
            for i, (size, k) in enumerate([(h, kh), (wd, kw)])]
    y = np.zeros((n, mg * group, full[0], full[1]))
    for g in range(group):
        xg, wg = x64[:, g * cg:(g + 1) * cg], w64[g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dilation[0], j * dilation[1]
                y[:, g * mg:(g + 1) * mg, r0:r0 + stride[0] * (h - 1) + 1:stride[0],
                  c0:c0 + stride[1] * (wd - 1) + 1:stride[1]] += np.einsum("nchw,cm->nmhw", xg, wg[:, :, i, j])
    y = y[:, :, pads[0]:pads[0] + out[0], pads[1]:pads[1] + out[1]] + b.astype(np.float64).reshape(1, -1, 1, 1)
    return y[:, :, 0, :] if spatial == 1 else y


def conv_transpose():
    """ConvTransposes through the matrix product plus col2im (rt::conv_transpose_gemm, W^T packed
    per group): kernels 1-5, strides 1-4, dilation 2, symmetric and asymmetric pads,
    output_padding, groups, a 1x1 stride-1 one (the product alone), blocks of input rows (k3
    stride 1: the columns exceed the output), a batch of 2, a 1-d one, a Relu after, and a deep
    input to 2 channels (the columns on the stack). Expected outputs in float64 numpy."""
    x = f32(2, 24, 9, 11)
    row = f32(1, 16, 29)
    wide = f32(1, 2, 26, 26)
    specs = [  # name, input, out channels / group, group, kernel, stride, pads, dilation, output_padding, relu
        ("k3s2", "x", 16, 1, 3, 2, [1, 1, 1, 1], 1, 1, False), ("k4s2", "x", 8, 1, 4, 2, [1, 1, 1, 1], 1, 0, True),
        ("k5s3d2", "x", 5, 2, 5, 3, [2, 1, 0, 3], 2, 2, False), ("k2s2", "x", 12, 1, 2, 2, [0, 0, 0, 0], 1, 0, False),
        ("k3s1", "x", 32, 1, 3, 1, [1, 1, 1, 1], 1, 0, False), ("k1s1", "x", 40, 1, 1, 1, [0, 0, 0, 0], 1, 0, True),
        ("k1s4", "x", 6, 3, 1, 4, [0, 0, 0, 0], 1, 3, False), ("k3s4g4", "x", 3, 4, 3, 4, [1, 2, 1, 0], 1, 1, False),
        ("row_k5s2", "row", 7, 2, 5, 2, [2, 1], 1, 1, True),
        ("wide_k5", "wide", 64, 1, 5, 1, [2, 2, 2, 2], 1, 0, False)]  # columns over 4 MB: two blocks of rows
    nodes, inits, outputs, expected = [], [], [], []
    for name, src, mg, group, k, stride, pads, dilation, output_padding, relu in specs:
        xin = {"x": x, "row": row, "wide": wide}[src]
        spatial = xin.ndim - 2
        w = f32(*([xin.shape[1], mg] + [k] * spatial), scale=0.25)
        b = f32(mg * group)
        inits += [numpy_helper.from_array(w, "w_" + name), numpy_helper.from_array(b, "b_" + name)]
        conv_out = name + "_convt" if relu else name
        nodes.append(helper.make_node("ConvTranspose", [src, "w_" + name, "b_" + name], [conv_out], group=group,
                                      kernel_shape=[k] * spatial, strides=[stride] * spatial, pads=pads,
                                      dilations=[dilation] * spatial, output_padding=[output_padding] * spatial))
        y = conv_transpose_nd(xin, w, b, group, [stride] * 2, pads, [dilation] * 2, [output_padding] * 2)
        add_output(nodes, outputs, expected, name, conv_out, y, relu)
    # 96 input channels to 2 outputs: rt::conv_transpose_gemm_stacked on AVX-512 and AVX2 (the
    # cost model puts the phase kernel's one-row register tiles above the product's), a Relu after.
    local = np.random.default_rng(1229)  # the global generator's draws stay those of the models after this one
    deep = local.standard_normal((1, 96, 6, 7)).astype(np.float32)
    w = (local.standard_normal((96, 2, 3, 3)) * 0.25).astype(np.float32)
    b = local.standard_normal(2).astype(np.float32)
    inits += [numpy_helper.from_array(w, "w_deep_k3s2"), numpy_helper.from_array(b, "b_deep_k3s2")]
    nodes.append(helper.make_node("ConvTranspose", ["deep", "w_deep_k3s2", "b_deep_k3s2"], ["deep_k3s2_convt"],
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]))
    y = conv_transpose_nd(deep, w, b, 1, [2, 2], [1, 1, 1, 1], [1, 1], [1, 1])
    add_output(nodes, outputs, expected, "deep_k3s2", "deep_k3s2_convt", y, True)
    save_x_row_model("conv_transpose", nodes, inits, outputs, expected, x, row, [("wide", wide), ("deep", deep)])


def resize_axis(n_in, n_out, scale, mode, roi=(0.0, 1.0)):
    """Linear-interpolation weights [n_out, n_in] of one axis in float64, straight from the ONNX
    coordinate_transformation_mode formulas (length_resized: n_out, the output's length), and
    which outputs fall outside the input (tf_crop_and_resize)."""
    w, outside = np.zeros((n_out, n_in)), np.zeros(n_out, bool)
    for x in range(n_out):
        if mode == "half_pixel":
            c = (x + 0.5) / scale - 0.5
        elif mode == "pytorch_half_pixel":
            c = (x + 0.5) / scale - 0.5 if n_out > 1 else 0.0
        elif mode == "align_corners":
            c = x * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        elif mode == "asymmetric":
            c = x / scale
        else:  # tf_crop_and_resize
            start, end = roi
            c = (start * (n_in - 1) + x * (end - start) * (n_in - 1) / (n_out - 1) if n_out > 1
                 else 0.5 * (start + end) * (n_in - 1))
            if c < 0 or c > n_in - 1:
                outside[x] = True
                continue
        c = min(max(c, 0.0), n_in - 1.0)
        i0 = int(np.floor(c))
        i1 = min(i0 + 1, n_in - 1)
        w[x, i0] += 1 - (c - i0)
        w[x, i1] += c - i0
    return w, outside


def resize_modes():
    """Resize linear over H and W (the row-by-row path, rt::resize_interpolate) at non-integer
    scales, down and up, for every coordinate_transformation_mode, and with `sizes` (scale =
    sizes / input), including align_corners and tf_crop_and_resize with a roi reaching outside the
    input (extrapolation_value). Expected outputs in float64 numpy. With `scales`, the modes whose
    formula uses length_resized (align_corners, pytorch_half_pixel, tf_crop_and_resize) are given
    scales whose product with the input length is an integer: the ONNX reference implementation
    puts the unrounded product there, ONNX Runtime the output's length (onnx/onnx#2462)."""
    r = np.random.default_rng(7)
    x = r.standard_normal((1, 3, 7, 10)).astype(np.float32)
    specs = [  # name, mode, scales (H, W) or None, sizes (H, W) or None, roi (H, W) or None
        ("half_up", "half_pixel", (1.5, 1.75), None, None),
        ("half_down", "half_pixel", (0.6, 0.45), None, None),
        ("pytorch_down", "pytorch_half_pixel", (3 / 7, 0.3), None, None),
        ("asym_up", "asymmetric", (1.3, 2.25), None, None),
        ("align_up_int_length", "align_corners", (10 / 7, 1.5), None, None),
        ("align_sizes_up", "align_corners", None, (10, 17), None),
        ("align_sizes_down", "align_corners", None, (4, 6), None),
        ("half_sizes", "half_pixel", None, (11, 4), None),
        ("pytorch_sizes_one", "pytorch_half_pixel", None, (1, 13), None),
        ("asym_sizes", "asymmetric", None, (5, 15), None),
        ("crop_sizes", "tf_crop_and_resize", None, (9, 8), ((0.1, 0.9), (-0.2, 1.1))),
    ]
    nodes, inits, outputs, expected = [], [], [], []
    for name, mode, scales, sizes, roi in specs:
        h, w = x.shape[2:]
        if scales:
            oh, ow = int(np.floor(h * scales[0])), int(np.floor(w * scales[1]))
            sh, sw = (float(np.float32(s)) for s in scales)  # as the model stores them
        else:
            oh, ow = sizes
            sh, sw = oh / h, ow / w
        roi_h, roi_w = roi if roi else ((0.0, 1.0), (0.0, 1.0))
        wh, out_h = resize_axis(h, oh, sh, mode, roi_h)
        ww, out_w = resize_axis(w, ow, sw, mode, roi_w)
        y = np.einsum("ah,nchw,bw->ncab", wh, x.astype(np.float64), ww)
        attrs = {"mode": "linear", "coordinate_transformation_mode": mode}
        roi_name = ""
        if roi:
            attrs["extrapolation_value"] = -3.0
            y[:, :, out_h, :] = -3.0
            y[:, :, :, out_w] = -3.0
            roi_name = "roi_" + name
            inits.append(numpy_helper.from_array(
                np.array([0, 0, roi_h[0], roi_w[0], 1, 1, roi_h[1], roi_w[1]], np.float32), roi_name))
        if scales:
            inits.append(numpy_helper.from_array(np.array([1, 1, sh, sw], np.float32), "scales_" + name))
            inputs = ["x", roi_name, "scales_" + name]
        else:
            inits.append(numpy_helper.from_array(np.array([1, 3, oh, ow], np.int64), "sizes_" + name))
            inputs = ["x", roi_name, "", "sizes_" + name]
        nodes.append(helper.make_node("Resize", inputs, [name], **attrs))
        y = y.astype(np.float32)
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, y.shape))
        expected.append((name, y))
    graph = helper.make_graph(nodes, "resize_modes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    save("resize_modes", model, [("x", x)], expected)


def dropout_masks():
    """Dropouts that keep every element (inference mode; training mode with ratio 0, as torch
    exports attention dropout), with their masks read (cast to float and added) or not: the
    output is the input, every mask element true (found on torchvision's swin_t, whose unread
    masks were declared and never written, and a read one would have been garbage)."""
    x = f32(2, 3, 4)
    const = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(v, name))
    graph = helper.make_graph(
        [const("ratio0", np.array(0.0, np.float32)), const("ratio", np.array(0.25, np.float32)),
         const("train", np.array(True)), const("infer", np.array(False)),
         helper.make_node("Dropout", ["x", "ratio0", "train"], ["d1", "m1"]),  # mask unread
         helper.make_node("Relu", ["d1"], ["r1"]),
         helper.make_node("Dropout", ["r1", "ratio", "infer"], ["d2", "m2"]),  # mask read
         helper.make_node("Cast", ["m2"], ["m2f"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["d2", "m2f"], ["y"]),
         helper.make_node("Dropout", ["x", "ratio0", "train"], ["d3", "m3"]),  # mask read, training
         helper.make_node("Cast", ["m3"], ["m3f"], to=TensorProto.FLOAT),
         helper.make_node("Sub", ["d3", "m3f"], ["z"])],
        "dropout_masks", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, x.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    save("dropout_masks", model, [("x", x)], [("y", np.maximum(x, 0) + 1), ("z", x - 1)])


def conv_silu():
    """SiLU written out as exporters write it, Sigmoid(c) and Mul(c, Sigmoid(c)) (either operand
    order), after a Conv and after a Gemm: fuse-activation merges both into their epilogues."""
    x, w, b = f32(1, 8, 9, 9), f32(16, 8, 3, 3, scale=0.3), f32(16)
    a, wg = f32(5, 24), f32(24, 7)
    n = helper.make_node
    graph = helper.make_graph(
        [n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), n("Sigmoid", ["c"], ["s"]), n("Mul", ["c", "s"], ["y"]),
         n("Gemm", ["a", "wg"], ["g"]), n("Sigmoid", ["g"], ["t"]), n("Mul", ["t", "g"], ["y2"])],
        "conv_silu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                      helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 9, 9]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [5, 7])],
        [numpy_helper.from_array(v, k) for k, v in {"w": w, "b": b, "wg": wg}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    silu = lambda v: v / (1 + np.exp(-v))
    c = conv2d(x, w, b, 1)
    g = a.astype(np.float64) @ wg.astype(np.float64)
    save("conv_silu", model, [("x", x), ("a", a)], [("y", silu(c).astype(np.float32)), ("y2", silu(g).astype(np.float32))])

def split_steps():
    """The memory-bound steps that run_parallel splits into ranges (rt::parallel_ranges) once they
    stream at least 512 KiB: same-shape and per-channel elementwise (alone and fused), a unary
    map, GlobalAveragePool, Softmax, Transpose, Concat, BatchNormalization and
    LayerNormalization, on odd sizes (40 x 57 x 61 floats: no range ends on a whole vector); a
    bilinear Resize x2 (rt::resize_interpolate_rows: ranges of output rows, a scratch slot each)
    and a 1x1 Conv on the pooled 1 x 1 plane whose 640 KB of weights make it split (constant bytes
    count as streamed). Its own generator: the outputs of the models above do not move."""
    g = np.random.default_rng(21)
    r = lambda *s: g.standard_normal(s).astype(np.float32)
    x, x2, s, a = r(1, 40, 57, 61), r(1, 40, 57, 61), r(1, 40, 1, 1), r(1, 40, 57, 61)
    bn_scale, bn_bias, bn_mean = r(40), r(40), r(40)
    bn_var = (g.random(40) + 0.5).astype(np.float32)
    ln_scale, ln_bias = r(40), r(40)
    fc_w, fc_b = r(4000, 40, 1, 1), r(4000)
    n = helper.make_node
    graph = helper.make_graph(
        [n("Add", ["x", "x2"], ["sum"]), n("Relu", ["sum"], ["relu"]), n("Mul", ["relu", "s"], ["scaled"]),
         n("Sigmoid", ["a"], ["sig"]), n("GlobalAveragePool", ["scaled"], ["gap"]),
         n("Softmax", ["x"], ["soft"], axis=-1), n("Transpose", ["x2"], ["nhwc"], perm=[0, 2, 3, 1]),
         n("Concat", ["x", "a"], ["cat"], axis=1),
         n("BatchNormalization", ["x2", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"], epsilon=1e-5),
         n("LayerNormalization", ["nhwc", "ln_scale", "ln_bias"], ["ln"], axis=-1, epsilon=1e-5),
         n("Resize", ["x", "", "up_scales"], ["up"], mode="linear"), n("Conv", ["gap", "fc_w", "fc_b"], ["fc"])],
        "split_steps",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in {"x": x, "x2": x2, "a": a}.items()],
        [helper.make_tensor_value_info("scaled", TensorProto.FLOAT, [1, 40, 57, 61]),
         helper.make_tensor_value_info("sig", TensorProto.FLOAT, [1, 40, 57, 61]),
         helper.make_tensor_value_info("gap", TensorProto.FLOAT, [1, 40, 1, 1]),
         helper.make_tensor_value_info("soft", TensorProto.FLOAT, [1, 40, 57, 61]),
         helper.make_tensor_value_info("cat", TensorProto.FLOAT, [1, 80, 57, 61]),
         helper.make_tensor_value_info("bn", TensorProto.FLOAT, [1, 40, 57, 61]),
         helper.make_tensor_value_info("ln", TensorProto.FLOAT, [1, 57, 61, 40]),
         helper.make_tensor_value_info("up", TensorProto.FLOAT, [1, 40, 114, 122]),
         helper.make_tensor_value_info("fc", TensorProto.FLOAT, [1, 4000, 1, 1])],
        [numpy_helper.from_array(v, k) for k, v in {"s": s, "bn_scale": bn_scale, "bn_bias": bn_bias,
                                                     "bn_mean": bn_mean, "bn_var": bn_var,
                                                     "ln_scale": ln_scale, "ln_bias": ln_bias, "fc_w": fc_w,
                                                     "fc_b": fc_b,
                                                     "up_scales": np.array([1, 1, 2, 2], np.float32)}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    d = lambda v: v.astype(np.float64)
    scaled = np.maximum(d(x) + d(x2), 0) * d(s)
    e = np.exp(d(x) - d(x).max(axis=-1, keepdims=True))
    nhwc = d(x2).transpose(0, 2, 3, 1)
    mu, var = nhwc.mean(axis=-1, keepdims=True), nhwc.var(axis=-1, keepdims=True)

    def taps(n_in, n_out):  # half_pixel linear: source (o + 0.5) / 2 - 0.5, edges clamped
        c = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
        lo = np.floor(c)
        return np.clip(lo, 0, n_in - 1).astype(int), np.clip(lo + 1, 0, n_in - 1).astype(int), c - lo
    h0, h1, wh = taps(57, 114)
    w0, w1, ww = taps(61, 122)
    rows = d(x)[:, :, h0, :] * (1 - wh)[:, None] + d(x)[:, :, h1, :] * wh[:, None]
    up = rows[..., w0] * (1 - ww) + rows[..., w1] * ww
    gap = scaled.mean(axis=(2, 3), keepdims=True)
    fc = np.einsum("oc,nc->no", d(fc_w)[:, :, 0, 0], d(gap)[:, :, 0, 0]) + d(fc_b)
    outs = {"scaled": scaled, "sig": 1 / (1 + np.exp(-d(a))), "gap": gap,
            "soft": e / e.sum(axis=-1, keepdims=True), "cat": np.concatenate([d(x), d(a)], axis=1),
            "bn": batchnorm(x2, bn_scale, bn_bias, bn_mean, bn_var, 1e-5),
            "ln": (nhwc - mu) / np.sqrt(var + 1e-5) * d(ln_scale) + d(ln_bias),
            "up": up, "fc": fc.reshape(1, 4000, 1, 1)}
    save("split_steps", model, [("x", x), ("x2", x2), ("a", a)], [(k, v.astype(np.float32)) for k, v in outs.items()])


def inverted_residual():
    """Inverted-residual blocks whose expanded tensors are at least 1 MB, so fuse-block computes
    them band by band (rt::fused_block): 8 -> 64 -> 8 channels on 64 x 64, Clip 0..6, 3 x 3
    stride 1, residual Add with the block input first; then 8 -> 72 -> 12, HardSwish, 5 x 5 stride 2;
    and on an odd 61 x 69 plane 4 -> 64 with SiLU written out (Sigmoid, Mul) and Relu, a 3 x 3
    stride-2 depthwise with uneven padding and a 3 x 3 dilation-2 one with no projection (a
    MaxPool reads them)."""
    x, x3 = f32(1, 8, 64, 64), f32(1, 4, 61, 69)
    c = {
        "we1": f32(64, 8, 1, 1, scale=0.4), "be1": f32(64), "wd1": f32(64, 1, 3, 3, scale=0.4), "bd1": f32(64),
        "wp1": f32(8, 64, 1, 1, scale=0.2), "bp1": f32(8),
        "we2": f32(72, 8, 1, 1, scale=0.4), "be2": f32(72), "wd2": f32(72, 1, 5, 5, scale=0.3), "bd2": f32(72),
        "wp2": f32(12, 72, 1, 1, scale=0.2), "bp2": f32(12),
        "we3": f32(64, 4, 1, 1, scale=0.5), "be3": f32(64), "wd3": f32(64, 1, 3, 3, scale=0.4), "bd3": f32(64),
        "we4": f32(64, 4, 1, 1, scale=0.5), "be4": f32(64), "wd4": f32(64, 1, 3, 3, scale=0.4), "bd4": f32(64),
        "lo": np.array(0, np.float32), "hi": np.array(6, np.float32),
    }
    n = helper.make_node
    graph = helper.make_graph(
        [n("Conv", ["x", "we1", "be1"], ["e1"]), n("Clip", ["e1", "lo", "hi"], ["e1a"]),
         n("Conv", ["e1a", "wd1", "bd1"], ["d1"], group=64, pads=[1, 1, 1, 1]), n("Clip", ["d1", "lo", "hi"], ["d1a"]),
         n("Conv", ["d1a", "wp1", "bp1"], ["p1"]), n("Add", ["x", "p1"], ["y1"]),
         n("Conv", ["y1", "we2", "be2"], ["e2"]), n("HardSwish", ["e2"], ["e2a"]),
         n("Conv", ["e2a", "wd2", "bd2"], ["d2"], group=72, strides=[2, 2], pads=[2, 2, 2, 2]),
         n("HardSwish", ["d2"], ["d2a"]), n("Conv", ["d2a", "wp2", "bp2"], ["y2"]),
         n("Conv", ["x3", "we3", "be3"], ["e3"]), n("Sigmoid", ["e3"], ["s3"]), n("Mul", ["e3", "s3"], ["e3a"]),
         n("Conv", ["e3a", "wd3", "bd3"], ["d3"], group=64, strides=[2, 2], pads=[0, 1, 1, 0]),
         n("Relu", ["d3"], ["d3a"]), n("MaxPool", ["d3a"], ["y3"], kernel_shape=[2, 2], strides=[2, 2]),
         n("Conv", ["x3", "we4", "be4"], ["e4"]), n("Relu", ["e4"], ["e4a"]),
         n("Conv", ["e4a", "wd4", "bd4"], ["d4"], group=64, dilations=[2, 2], pads=[2, 2, 2, 2]),
         n("MaxPool", ["d4"], ["y4"], kernel_shape=[4, 4], strides=[4, 4])],
        "inverted_residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                              helper.make_tensor_value_info("x3", TensorProto.FLOAT, x3.shape)],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, shape) for v, shape in
         (("y1", [1, 8, 64, 64]), ("y2", [1, 12, 32, 32]), ("y3", [1, 64, 15, 17]), ("y4", [1, 64, 15, 17]))],
        [numpy_helper.from_array(v, k) for k, v in c.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    f = lambda v: v.astype(np.float32)
    relu6 = lambda v: np.clip(v, 0, 6)
    hswish = lambda v: v * np.clip(v / 6 + 0.5, 0, 1)
    relu = lambda v: np.maximum(v, 0)
    silu = lambda v: v / (1 + np.exp(-v))
    pw = lambda v, w, b: np.einsum("mc,nchw->nmhw", w[:, :, 0, 0].astype(np.float64), v.astype(np.float64)) + \
        b.astype(np.float64).reshape(1, -1, 1, 1)
    # Each step's output rounded to float, as the steps store them.
    e1 = f(relu6(pw(x, c["we1"], c["be1"])))
    d1 = f(relu6(depthwise(e1, c["wd1"], c["bd1"], (1, 1), (1, 1, 1, 1), (1, 1))))
    y1 = f(x.astype(np.float64) + f(pw(d1, c["wp1"], c["bp1"])))
    e2 = f(hswish(pw(y1, c["we2"], c["be2"])))
    d2 = f(hswish(depthwise(e2, c["wd2"], c["bd2"], (2, 2), (2, 2, 2, 2), (1, 1))))
    y2 = f(pw(d2, c["wp2"], c["bp2"]))
    e3 = f(silu(pw(x3, c["we3"], c["be3"])))
    d3 = relu(depthwise(e3, c["wd3"], c["bd3"], (2, 2), (0, 1, 1, 0), (1, 1)))
    y3 = d3[:, :, :30, :34].reshape(1, 64, 15, 2, 17, 2).max(axis=(3, 5))
    e4 = f(relu(pw(x3, c["we4"], c["be4"])))
    d4 = depthwise(e4, c["wd4"], c["bd4"], (1, 1), (2, 2, 2, 2), (2, 2))
    y4 = d4[:, :, :60, :68].reshape(1, 64, 15, 4, 17, 4).max(axis=(3, 5))
    save("inverted_residual", model, [("x", x), ("x3", x3)], [("y1", y1), ("y2", y2), ("y3", f(y3)), ("y4", f(y4))])


def dense_block():
    """A DenseNet block: each layer concatenates the block's input and every earlier layer's
    output (Concats of 1, 2, 3 inputs more), reads the Concat through a Relu (which must not run
    in place: the later Concats share its memory) and a 3x3 Conv of 4 channels (concat-in-place
    writes the whole block into the last Concat's buffer); a 1x1 Conv reads the last Concat."""
    x, w0, b0 = f32(1, 3, 6, 6), f32(8, 3, 1, 1, scale=0.5), f32(8)
    ws = [(f32(4, 8 + 4 * i, 3, 3, scale=0.25), f32(4)) for i in range(3)]
    wt, bt = f32(6, 20, 1, 1, scale=0.25), f32(6)
    inits = [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(b0, "b0"),
             numpy_helper.from_array(wt, "wt"), numpy_helper.from_array(bt, "bt")]
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["f0"], name="stem")]
    feats = ["f0"]
    ref = [conv2d(x, w0, b0, 0).astype(np.float32)]
    for i, (w, b) in enumerate(ws):
        inits += [numpy_helper.from_array(w, f"w{i + 1}"), numpy_helper.from_array(b, f"b{i + 1}")]
        src = feats[0]
        r_in = ref[0]
        if i > 0:
            src = f"cat{i}"
            nodes.append(helper.make_node("Concat", list(feats), [src], axis=1, name=src))
            r_in = np.concatenate(ref, axis=1)
        nodes.append(helper.make_node("Relu", [src], [f"r{i + 1}"], name=f"relu{i + 1}"))
        nodes.append(helper.make_node("Conv", [f"r{i + 1}", f"w{i + 1}", f"b{i + 1}"], [f"f{i + 1}"],
                                      pads=[1, 1, 1, 1], name=f"conv{i + 1}"))
        feats.append(f"f{i + 1}")
        ref.append(conv2d(np.maximum(r_in, 0), w, b, 1).astype(np.float32))
    nodes.append(helper.make_node("Concat", list(feats), ["cat3"], axis=1, name="cat3"))
    nodes.append(helper.make_node("Conv", ["cat3", "wt", "bt"], ["y"], name="transition"))
    graph = helper.make_graph(nodes, "dense_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 6, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    y = conv2d(np.concatenate(ref, axis=1), wt, bt, 0).astype(np.float32)
    save("dense_block", model, [("x", x)], [("y", y)])


if __name__ == "__main__":
    conv_bn()
    gemm_bn("gemm_bn_vector_c", (4,))
    gemm_bn("gemm_bn_matrix_c", (3, 4))
    transpose_pairs()
    eltwise_chains()
    eltwise_libm()
    conv_affine()
    matmul_affine()
    conv_gelu()
    matmul_activation()
    conv_winograd()
    depthwise_se()
    matrix_products()
    conv_grouped()
    resize_modes()
    conv_transpose()
    dropout_masks()
    conv_silu()
    split_steps()
    inverted_residual()
    dense_block()
