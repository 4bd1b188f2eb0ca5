"""The operator sweep's cases: single-operator ONNX models over a grid of shapes and attributes.

Each generator yields Case records; a case builds its model (onnx.ModelProto) and its inputs
(numpy arrays) from its own parameters and a seed derived from its name, so the same name always
means the same model and values. The grids are sampled with a fixed-seed random subset of the
cross product plus hand-picked edges (1-wide planes, single channels, the largest sizes), and every
case is kept under MAX_MACS of work so a full sweep finishes in well under an hour on a busy
2-core machine.
"""
import hashlib
import itertools
import math
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
MAX_MACS = 250e6       # multiply-accumulates (or element operations) per case
MAX_ELEMENTS = 8e6     # elements of the largest tensor of a case


class Case:
    """One single-operator model: family (for the tables), a unique name, its work in MACs (or
    elements touched for the memory-bound ops), its tolerance, and build() -> (model, inputs)."""

    def __init__(self, family, name, macs, build, atol=1e-5, rtol=1e-3):
        self.family, self.name, self.macs, self.build = family, name, int(macs), build
        self.atol, self.rtol = atol, rtol


def rng_for(name):
    return np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:12], 16))


def normal(rng, shape, scale=1.0):
    """Standard normal float32 values, none subnormal (|x| below 1e-6 moved to 1e-6 with its sign):
    timing can depend on the values, and both runtimes get these same ones."""
    x = np.array(rng.standard_normal(shape) * scale, dtype=np.float32)
    tiny = np.abs(x) < 1e-6
    x[tiny] = np.where(x[tiny] < 0, -1e-6, 1e-6).astype(np.float32)
    return x


def model(name, nodes, inputs, outputs, inits=(), opset=OPSET):
    """A graph of nodes; inputs maps name -> numpy array (its dtype and shape become the graph
    input's), outputs is a list of names (shape left to inference), inits are constant tensors."""
    def vi(n, a):
        return helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], list(a.shape))
    def float_output(n):
        v = onnx.ValueInfoProto()
        v.name = n
        v.type.tensor_type.elem_type = TensorProto.FLOAT
        return v
    g = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs.items()], [float_output(o) for o in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnxc-sweep")
    m.ir_version = 8
    # the outputs' shapes from ONNX's own shape inference (the checker wants them declared)
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    return m


# ---- activations following an operator (a separate node, as exporters write them) ----

ACTIVATIONS = ["none", "relu", "clip", "sigmoid", "silu", "hardswish"]


def activation_nodes(act, x, y):
    """Nodes computing y = act(x), and their constant initializers."""
    if act == "relu":
        return [helper.make_node("Relu", [x], [y])], []
    if act == "clip":
        return [helper.make_node("Clip", [x, "clip_lo", "clip_hi"], [y])], [
            ("clip_lo", np.array(0, np.float32)), ("clip_hi", np.array(6, np.float32))]
    if act == "sigmoid":
        return [helper.make_node("Sigmoid", [x], [y])], []
    if act == "silu":
        return [helper.make_node("Sigmoid", [x], [x + "_sig"]), helper.make_node("Mul", [x, x + "_sig"], [y])], []
    if act == "hardswish":
        return [helper.make_node("HardSwish", [x], [y])], []
    raise ValueError(act)


# ---- Conv ----

def conv_out(size, k, s, d, pad_total):
    return (size + pad_total - d * (k - 1) - 1) // s + 1


def conv_case(family, n, cin, cout, group, spatial, kernel, stride, dilation, padding, act, bias=True):
    """Conv over len(spatial) dims (1-D or 2-D) with kernel/stride/dilation tuples, 'same' (pads of
    (k_eff - 1) / 2, the lower half first) or 'valid' padding, followed by activation `act`."""
    pads_lo, pads_hi, out = [], [], []
    for size, k, s, d in zip(spatial, kernel, stride, dilation):
        total = d * (k - 1) if padding == "same" else 0
        pads_lo.append(total // 2)
        pads_hi.append(total - total // 2)
        out.append(conv_out(size, k, s, d, total))
    if min(out) < 1:
        return None
    macs = n * cout * int(np.prod(out)) * (cin // group) * int(np.prod(kernel))
    elements = n * max(cin * int(np.prod(spatial)), cout * int(np.prod(out)))
    if macs > MAX_MACS or elements > MAX_ELEMENTS:
        return None
    dims = "x".join(map(str, spatial))
    ks = "x".join(map(str, kernel))
    kind = "dw" if group == cin and group == cout and group > 1 else (f"g{group}" if group > 1 else "")
    name = (f"{family}_n{n}_c{cin}_o{cout}{'_' + kind if kind else ''}_{dims}_k{ks}_s{stride[0]}x{stride[-1]}"
            f"_d{dilation[0]}x{dilation[-1]}_{padding}_{act}")

    def build():
        rng = rng_for(name)
        x = normal(rng, [n, cin] + list(spatial))
        w = normal(rng, [cout, cin // group] + list(kernel), 1 / np.sqrt((cin // group) * np.prod(kernel)))
        inits = [("W", w)] + ([("B", normal(rng, [cout], 0.1))] if bias else [])
        conv_out_name = "Y" if act == "none" else "conv"
        conv = helper.make_node("Conv", ["X", "W"] + (["B"] if bias else []), [conv_out_name], kernel_shape=list(kernel),
                                strides=list(stride), dilations=list(dilation), pads=pads_lo + pads_hi, group=group)
        act_nodes, act_inits = activation_nodes(act, "conv", "Y") if act != "none" else ([], [])
        return model(name, [conv] + act_nodes, {"X": x}, ["Y"], inits + act_inits), {"X": x}
    reduction = (cin // group) * int(np.prod(kernel))
    return Case(family, name, macs, build, atol=1e-5 * max(1.0, np.sqrt(reduction) / 4))


def conv2d_cases(rnd, count):
    channels = [1, 3, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 256, 320, 512, 576, 768, 1024]
    planes = [1, 2, 3, 5, 7, 8, 13, 14, 17, 28, 32, 56, 64, 112, 224]
    kernels = [(1, 1), (3, 3), (5, 5), (7, 7), (1, 3), (3, 1), (1, 5), (5, 1), (1, 7), (7, 1)]
    group_widths = [2, 4, 8, 16, 24, 32, 48, 64]
    out = []
    seen = set()
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        kind = rnd.choice(["dense", "dense", "dense", "depthwise", "depthwise", "grouped", "grouped"])
        k = rnd.choice(kernels)
        s = rnd.choice([1, 1, 2])
        d = rnd.choice([1, 1, 1, 2])
        pad = rnd.choice(["same", "same", "valid"])
        h = rnd.choice(planes)
        w = h if rnd.random() < 0.8 else rnd.choice(planes)
        n = rnd.choice([1, 1, 1, 4])
        act = rnd.choice(ACTIVATIONS)
        if kind == "dense":
            cin, cout, g = rnd.choice(channels), rnd.choice(channels), 1
        elif kind == "depthwise":
            cin = cout = g = rnd.choice([c for c in channels if c > 1])
        else:
            gw = rnd.choice(group_widths)
            g = rnd.choice([2, 3, 4, 8, 16, 32])
            cin = gw * g
            cout = cin if rnd.random() < 0.7 else cin * 2
            if cin > 1024:
                continue
        c = conv_case("conv2d", n, cin, cout, g, (h, w), k, (s, s), (d, d), pad, act)
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


def conv2d_edges():
    """Shapes the random grid may miss: first layers, 1x1 on wide and narrow planes, 5x5 and 7x7
    depthwise with stride 2, dilated depthwise, 1-pixel planes, single channels, batch 4."""
    e = [
        ("conv2d", 1, 3, 16, 1, (224, 224), (3, 3), (2, 2), (1, 1), "same", "hardswish"),
        ("conv2d", 1, 3, 32, 1, (224, 224), (3, 3), (2, 2), (1, 1), "same", "relu"),
        ("conv2d", 1, 3, 64, 1, (224, 224), (7, 7), (2, 2), (1, 1), "same", "relu"),
        ("conv2d", 1, 1024, 1024, 1, (7, 7), (1, 1), (1, 1), (1, 1), "valid", "none"),
        ("conv2d", 1, 32, 32, 1, (112, 112), (1, 1), (1, 1), (1, 1), "valid", "clip"),
        ("conv2d", 1, 72, 72, 72, (56, 56), (5, 5), (2, 2), (1, 1), "same", "relu"),
        ("conv2d", 1, 96, 96, 96, (112, 112), (3, 3), (2, 2), (1, 1), "same", "clip"),
        ("conv2d", 1, 144, 144, 144, (56, 56), (5, 5), (1, 1), (1, 1), "same", "silu"),
        ("conv2d", 1, 240, 240, 240, (28, 28), (5, 5), (1, 1), (1, 1), "same", "hardswish"),
        ("conv2d", 1, 576, 576, 576, (14, 14), (5, 5), (1, 1), (2, 2), "same", "hardswish"),
        ("conv2d", 1, 32, 32, 32, (112, 112), (7, 7), (1, 1), (1, 1), "same", "none"),
        ("conv2d", 1, 1, 1, 1, (1, 1), (1, 1), (1, 1), (1, 1), "valid", "none"),
        ("conv2d", 1, 1, 8, 1, (224, 224), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 512, 512, 1, (1, 1), (1, 1), (1, 1), (1, 1), "valid", "sigmoid"),
        ("conv2d", 1, 512, 512, 1, (3, 3), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 4, 64, 64, 1, (56, 56), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 4, 32, 32, 32, (56, 56), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 96, 96, 4, (56, 56), (3, 3), (1, 1), (1, 1), "same", "relu"),      # regnet-like, width 24
        ("conv2d", 1, 192, 192, 12, (28, 28), (3, 3), (2, 2), (1, 1), "same", "relu"),
        ("conv2d", 1, 128, 128, 2, (28, 28), (3, 3), (1, 1), (1, 1), "same", "relu"),     # width 64
        ("conv2d", 1, 64, 64, 32, (28, 28), (3, 3), (1, 1), (1, 1), "same", "relu"),      # width 2
        ("conv2d", 1, 64, 64, 1, (56, 56), (1, 7), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 64, 64, 1, (56, 56), (7, 1), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 128, 128, 1, (17, 17), (3, 3), (1, 1), (2, 2), "same", "none"),
        ("conv2d", 1, 17, 33, 1, (31, 29), (3, 3), (2, 2), (1, 1), "valid", "none"),
        # deep products (C_in x k x k of 2304-12800): late stages of ResNet/VGG/DenseNet-style nets
        ("conv2d", 1, 512, 512, 1, (7, 7), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 256, 256, 1, (14, 14), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 256, 256, 1, (7, 7), (3, 3), (1, 1), (1, 1), "same", "none"),
        ("conv2d", 1, 1024, 256, 1, (14, 14), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 512, 512, 1, (14, 14), (3, 3), (2, 2), (1, 1), "same", "relu"),
        ("conv2d", 1, 256, 512, 1, (14, 14), (3, 3), (2, 2), (1, 1), "same", "relu"),
        ("conv2d", 1, 512, 128, 1, (7, 7), (5, 5), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 384, 384, 1, (13, 13), (3, 3), (1, 1), (1, 1), "same", "relu"),
        ("conv2d", 1, 320, 96, 1, (28, 28), (3, 3), (1, 1), (1, 1), "same", "relu"),
        # patch convolutions (kernel == stride): ViT's 16 x 16 and 32 x 32 patch embeddings, ConvNeXt's stem
        ("conv2d", 1, 3, 768, 1, (224, 224), (16, 16), (16, 16), (1, 1), "valid", "none"),
        ("conv2d", 1, 3, 768, 1, (224, 224), (32, 32), (32, 32), (1, 1), "valid", "none"),
        ("conv2d", 1, 3, 96, 1, (224, 224), (4, 4), (4, 4), (1, 1), "valid", "none"),
        # the same late layer at stride 1 and 2 onto 7 x 7, 1x1 stride-2 downsampling onto 7 x 7
        ("conv2d", 1, 256, 512, 1, (14, 14), (1, 1), (2, 2), (1, 1), "valid", "none"),
    ]
    return [c for c in (conv_case(*a) for a in e) if c is not None]


def conv1d_cases(rnd, count):
    out, seen = [], set()
    lengths = [1, 8, 16, 49, 100, 128, 250, 512, 1000, 1600, 4000, 16000]
    channels = [1, 2, 8, 16, 32, 40, 64, 128, 256, 512]
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        kind = rnd.choice(["dense", "dense", "depthwise", "grouped"])
        k = rnd.choice([1, 3, 5, 7, 9, 11])
        cin = rnd.choice(channels)
        if kind == "dense":
            cout, g = rnd.choice(channels), 1
        elif kind == "depthwise":
            cout = g = cin
        else:
            g = rnd.choice([2, 4, 8])
            if cin % g:
                continue
            cout = cin
        c = conv_case("conv1d", rnd.choice([1, 1, 4]), cin, cout, g, (rnd.choice(lengths),), (k,),
                      (rnd.choice([1, 1, 2]),), (rnd.choice([1, 1, 2]),), rnd.choice(["same", "valid"]),
                      rnd.choice(ACTIVATIONS))
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


def conv_transpose_case(n, cin, cout, group, h, k, s, pad, out_pad):
    oh = (h - 1) * s - 2 * pad + k + out_pad
    if oh < 1:
        return None
    macs = n * cin * h * h * (cout // group) * k * k
    if macs > MAX_MACS or n * cout * oh * oh > MAX_ELEMENTS:
        return None
    name = f"convtranspose_n{n}_c{cin}_o{cout}_g{group}_{h}x{h}_k{k}_s{s}_p{pad}_op{out_pad}"

    def build():
        rng = rng_for(name)
        x = normal(rng, [n, cin, h, h])
        w = normal(rng, [cin, cout // group, k, k], 1 / np.sqrt(cin // group * k * k / (s * s)))
        b = normal(rng, [cout], 0.1)
        node = helper.make_node("ConvTranspose", ["X", "W", "B"], ["Y"], kernel_shape=[k, k], strides=[s, s],
                                pads=[pad] * 4, output_padding=[out_pad] * 2, group=group)
        return model(name, [node], {"X": x}, ["Y"], [("W", w), ("B", b)]), {"X": x}
    return Case("convtranspose", name, macs, build, atol=1e-5 * max(1.0, np.sqrt(cin * k * k) / 4))


def conv_transpose_cases(rnd, count):
    out, seen = [], set()
    fixed = [(1, 64, 32, 1, 28, 2, 2, 0, 0), (1, 256, 128, 1, 14, 4, 2, 1, 0), (1, 16, 16, 16, 56, 4, 2, 1, 0),
             (1, 3, 8, 1, 32, 3, 2, 1, 1), (1, 512, 256, 1, 7, 3, 2, 1, 1), (4, 32, 16, 1, 32, 2, 2, 0, 0)]
    for a in fixed:
        c = conv_transpose_case(*a)
        if c:
            seen.add(c.name)
            out.append(c)
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        cin = rnd.choice([1, 8, 16, 32, 64, 128, 256, 512])
        cout = rnd.choice([1, 8, 16, 32, 64, 128, 256])
        g = 1
        if rnd.random() < 0.2:
            cout = g = cin
        k, s = rnd.choice([(2, 2), (3, 1), (3, 2), (4, 2), (5, 2), (1, 1), (4, 4)])
        pad = rnd.choice([0, (k - 1) // 2])
        op = 1 if s > 1 and rnd.random() < 0.3 else 0
        c = conv_transpose_case(rnd.choice([1, 1, 4]), cin, cout, g, rnd.choice([1, 4, 7, 14, 28, 56, 112]), k, s, pad, op)
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


# ---- Gemm / MatMul ----

def gemm_case(m, k, n, trans_a, trans_b, bias, weights_input=False):
    macs = m * n * k
    if macs > MAX_MACS:
        return None
    name = f"gemm_m{m}_k{k}_n{n}_ta{trans_a}_tb{trans_b}{'_bias' if bias else ''}{'_binput' if weights_input else ''}"

    def build():
        rng = rng_for(name)
        a = normal(rng, [k, m] if trans_a else [m, k])
        b = normal(rng, [n, k] if trans_b else [k, n], 1 / np.sqrt(k))
        inputs = {"A": a}
        inits = []
        if weights_input:
            inputs["B"] = b
        else:
            inits.append(("B", b))
        if bias:
            inits.append(("C", normal(rng, [n], 0.1)))
        node = helper.make_node("Gemm", ["A", "B"] + (["C"] if bias else []), ["Y"], transA=trans_a, transB=trans_b)
        return model(name, [node], inputs, ["Y"], inits), inputs
    return Case("gemm", name, macs, build, atol=1e-5 * max(1.0, np.sqrt(k) / 4))


def matmul_case(batch, m, k, n, b_const, b_transposed):
    """MatMul of (batch..., m, k) by (k, n) weights (b_const) or by a second input (batch..., k, n);
    b_transposed feeds the second input as (..., n, k) through a Transpose, as attention's Q K^T."""
    bdims = list(batch)
    macs = int(np.prod(bdims or [1])) * m * n * k
    if macs > MAX_MACS or int(np.prod(bdims or [1])) * max(m * k, k * n, m * n) > MAX_ELEMENTS:
        return None
    bs = "x".join(map(str, bdims)) or "1"
    name = f"matmul_b{bs}_m{m}_k{k}_n{n}_{'const' if b_const else 'input'}{'_bT' if b_transposed else ''}"

    def build():
        rng = rng_for(name)
        a = normal(rng, bdims + [m, k])
        inputs, inits, nodes = {"A": a}, [], []
        if b_const:
            inits.append(("B", normal(rng, [k, n], 1 / np.sqrt(k))))
            rhs = "B"
        elif b_transposed:
            inputs["Bt"] = normal(rng, bdims + [n, k], 1 / np.sqrt(k))
            perm = list(range(len(bdims))) + [len(bdims) + 1, len(bdims)]
            nodes.append(helper.make_node("Transpose", ["Bt"], ["B"], perm=perm))
            rhs = "B"
        else:
            inputs["B"] = normal(rng, bdims + [k, n], 1 / np.sqrt(k))
            rhs = "B"
        nodes.append(helper.make_node("MatMul", ["A", rhs], ["Y"]))
        return model(name, nodes, inputs, ["Y"], inits), inputs
    return Case("matmul", name, macs, build, atol=1e-5 * max(1.0, np.sqrt(k) / 4))


def gemm_cases(rnd, count):
    ms = [1, 2, 3, 7, 16, 31, 64, 100, 128, 197, 256, 384, 512]
    nks = [1, 3, 8, 16, 33, 64, 100, 127, 192, 256, 384, 511, 512, 768, 1000, 1024, 1536, 2048, 3072, 4095, 4096]
    out, seen = [], set()
    edges = [(1, 4096, 4096, 0, 1, 1), (1, 1024, 1000, 0, 1, 1), (512, 512, 512, 0, 0, 0), (1, 1, 1, 0, 0, 0),
             (512, 1, 4096, 0, 0, 1), (512, 4096, 1, 0, 0, 0), (197, 192, 768, 0, 1, 1), (7, 4095, 33, 1, 1, 1)]
    # Small M (tokens, a 7x7 or 14x14 plane's positions) against mid-size N and K, odd ones included (issue #21).
    for i, m in enumerate([1, 7, 37, 49, 50, 196, 197, 784]):
        k, n = [(192, 576), (768, 192), (160, 960), (400, 400), (127, 255), (1023, 65), (960, 160), (64, 1024)][i]
        edges.append((m, k, n, i % 2, (i // 2) % 2, 1))
        edges.append((m, n, k, 0, 0, 0))
    for a in edges:
        c = gemm_case(*a)
        if c:
            seen.add(c.name)
            out.append(c)
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        c = gemm_case(rnd.choice(ms), rnd.choice(nks), rnd.choice(nks), int(rnd.random() < 0.25),
                      int(rnd.random() < 0.5), int(rnd.random() < 0.7), rnd.random() < 0.15)
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


def matmul_cases(rnd, count):
    out, seen = [], set()
    edges = [((), 197, 192, 576, True, False), ((3,), 197, 64, 197, False, True), ((3,), 197, 197, 64, False, False),
             ((1, 3), 197, 64, 197, False, True), ((), 1, 4096, 1000, True, False), ((8,), 64, 64, 64, False, False),
             ((2, 12), 50, 64, 50, False, True), ((), 511, 257, 129, True, False),
             # attention's Q.K^T and P.V at 37, 49 and 197 tokens (K = 64), and token GEMMs with weights
             ((3,), 37, 64, 37, False, True), ((3,), 37, 37, 64, False, False), ((4,), 49, 64, 49, False, True),
             ((4,), 49, 49, 64, False, False), ((), 37, 192, 576, True, False), ((), 37, 768, 192, True, False)]
    for a in edges:
        c = matmul_case(*a)
        if c:
            seen.add(c.name)
            out.append(c)
    ms = [1, 4, 16, 49, 64, 128, 196, 197, 256, 512]
    ks = [1, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 3072, 4096]
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        batch = rnd.choice([(), (), (2,), (4,), (12,), (1, 3), (2, 4)])
        const = not batch or rnd.random() < 0.3
        c = matmul_case(batch, rnd.choice(ms), rnd.choice(ks), rnd.choice(ks + [10, 197]), const,
                        (not const) and rnd.random() < 0.5)
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


# ---- pooling ----

def pool_case(op, n, c, spatial, k, s, pad, extra):
    d = len(spatial)
    global_op = op.startswith("Global")
    out = [1] * d if global_op else [conv_out(x, k, s, 1, 2 * pad) for x in spatial]
    if min(out) < 1 or (not global_op and pad * 2 >= k and pad > 0):
        return None
    elements = n * c * int(np.prod(spatial))
    if elements > MAX_ELEMENTS:
        return None
    dims = "x".join(map(str, spatial))
    tag = "_".join(f"{a}{v}" for a, v in sorted(extra.items()))
    name = f"pool_{op}_n{n}_c{c}_{dims}" + ("" if global_op else f"_k{k}_s{s}_p{pad}") + (f"_{tag}" if tag else "")

    def build():
        rng = rng_for(name)
        x = normal(rng, [n, c] + list(spatial))
        attrs = dict(extra)
        if not global_op:
            attrs.update(kernel_shape=[k] * d, strides=[s] * d, pads=[pad] * (2 * d))
        node = helper.make_node(op, ["X"], ["Y"], **attrs)
        return model(name, [node], {"X": x}, ["Y"]), {"X": x}
    work = elements if global_op else n * c * int(np.prod(out)) * k ** d
    return Case("pool", name, work, build, atol=1e-5 * max(1.0, np.sqrt(np.prod(spatial)) / 4))


def pool_cases(rnd, count):
    out, seen = [], set()
    ops = [("MaxPool", {}), ("AveragePool", {}), ("AveragePool", {"count_include_pad": 1}), ("LpPool", {"p": 2}),
           ("MaxPool", {"ceil_mode": 1}), ("GlobalAveragePool", {}), ("GlobalMaxPool", {}), ("GlobalLpPool", {"p": 2})]
    edges = [("MaxPool", 1, 64, (112, 112), 3, 2, 1, {}), ("GlobalAveragePool", 1, 1280, (7, 7), 0, 0, 0, {}),
             ("GlobalAveragePool", 1, 16, (112, 112), 0, 0, 0, {}), ("AveragePool", 1, 32, (56, 56), 2, 2, 0, {}),
             ("MaxPool", 4, 96, (55, 55), 3, 2, 0, {}), ("GlobalAveragePool", 1, 960, (14, 14), 0, 0, 0, {}),
             ("MaxPool", 1, 8, (1000,), 3, 1, 1, {}), ("AveragePool", 1, 512, (7, 7), 7, 1, 0, {})]
    for a in edges:
        c = pool_case(*a)
        if c:
            seen.add(c.name)
            out.append(c)
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        op, extra = rnd.choice(ops)
        if rnd.random() < 0.2:
            spatial = (rnd.choice([16, 100, 1000, 8000]),)
        else:
            h = rnd.choice([1, 3, 7, 14, 15, 28, 56, 112, 224])
            spatial = (h, h)
        k = rnd.choice([2, 3, 5, 7])
        s = rnd.choice([1, 2, k])
        pad = rnd.choice([0, 0, (k - 1) // 2])
        c = pool_case(op, rnd.choice([1, 1, 4]), rnd.choice([1, 3, 16, 32, 64, 128, 256, 512, 1024]), spatial,
                      k, s, pad, extra)
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


# ---- Resize ----

def resize_case(n, c, h, w, scale, mode, ctm, nearest_mode=None):
    oh, ow = int(np.floor(h * scale)), int(np.floor(w * scale))
    if oh < 1 or ow < 1 or n * c * max(oh * ow, h * w) > MAX_ELEMENTS:
        return None
    name = f"resize_{mode}_{ctm}{'_' + nearest_mode if nearest_mode else ''}_n{n}_c{c}_{h}x{w}_x{scale:g}"

    def build():
        rng = rng_for(name)
        x = normal(rng, [n, c, h, w])
        attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
        if nearest_mode:
            attrs["nearest_mode"] = nearest_mode
        if mode == "cubic":
            attrs["cubic_coeff_a"] = -0.75
        node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **attrs)
        scales = np.array([1, 1, scale, scale], np.float32)
        return model(name, [node], {"X": x}, ["Y"], [("scales", scales)]), {"X": x}
    return Case("resize", name, n * c * oh * ow, build)


def resize_nd_case(shape, out, mode, ctm, nearest_mode=None, sizes=False):
    """Resize of any rank: `out` the output shape, given as sizes or as scales out / in."""
    if math.prod(shape) > MAX_ELEMENTS or math.prod(out) > MAX_ELEMENTS:
        return None
    tag = "_sizes" if sizes else ""
    name = (f"resize_{mode}_{ctm}{'_' + nearest_mode if nearest_mode else ''}{tag}_"
            f"{'x'.join(map(str, shape))}_to_{'x'.join(map(str, out))}")

    def build():
        rng = rng_for(name)
        x = normal(rng, list(shape))
        attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
        if nearest_mode:
            attrs["nearest_mode"] = nearest_mode
        if sizes:
            node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], **attrs)
            init = [("sizes", np.array(out, np.int64))]
        else:
            node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **attrs)
            init = [("scales", np.array([o / i for o, i in zip(out, shape)], np.float32))]
        return model(name, [node], {"X": x}, ["Y"], init), {"X": x}
    # Shrinking at a non-integer factor, ORT's float32 source coordinates put it up to 3.2e-5
    # from float64 numpy (1x8x120x160 -> 37x51 linear; onnxc within 3.3e-7): a looser atol there.
    shrinks = any(o < i for o, i in zip(out, shape))
    return Case("resize", name, math.prod(out), build, atol=1e-4 if shrinks else 1e-5)


# Shapes the random grid of resize_cases does not reach: ranks 3 and 5, 1 x 1 sources, odd and
# non-integer factors, downsampling, sizes instead of scales, cubic, wide tails. (No antialias: the
# onnx 1.12 that writes the models does not know the attribute; ORT cubic takes 2-D/4-D only.)
RESIZE_EDGES = [
    ((1, 21, 28, 28), (1, 21, 224, 224), "linear", "half_pixel", None, False),   # lraspp's head
    ((1, 128, 1, 1), (1, 128, 28, 28), "linear", "half_pixel", None, False),    # 1 x 1 -> H x W
    ((1, 64, 1, 1), (1, 64, 32, 32), "nearest", "asymmetric", "floor", False),
    ((1, 32, 17, 23), (1, 32, 51, 69), "linear", "align_corners", None, True),  # x3, odd sizes
    ((1, 16, 20, 20), (1, 16, 47, 33), "cubic", "half_pixel", None, True),       # non-integer, two factors
    ((1, 16, 96, 96), (1, 16, 29, 29), "cubic", "half_pixel", None, True),       # cubic downsample
    ((1, 8, 120, 160), (1, 8, 37, 51), "linear", "half_pixel", None, True),      # linear downsample
    ((1, 8, 120, 160), (1, 8, 37, 51), "nearest", "half_pixel", "round_prefer_ceil", True),
    ((2, 24, 250), (2, 24, 1000), "linear", "half_pixel", None, False),         # 1-D (audio)
    ((1, 4, 777), (1, 4, 300), "nearest", "asymmetric", "floor", True),          # 1-D downsample
    ((1, 8, 8, 16, 16), (1, 8, 16, 32, 32), "linear", "half_pixel", None, False),  # 5-D trilinear
    ((1, 4, 6, 10, 10), (1, 4, 12, 20, 20), "nearest", "asymmetric", "floor", False),  # 5-D nearest
    ((1, 4, 8, 12, 12), (1, 4, 13, 19, 19), "linear", "align_corners", None, True),  # 5-D, non-integer
    ((1, 4, 30, 30), (1, 4, 13, 19), "cubic", "align_corners", None, True),     # cubic, odd downsample
    ((1, 3, 3, 3), (1, 3, 224, 224), "linear", "align_corners", None, True),    # tiny plane, huge factor
    ((4, 3, 5, 7), (4, 3, 10, 14), "linear", "asymmetric", None, False),        # tiny planes, many
    ((1, 32, 56, 56), (1, 32, 56, 113), "linear", "half_pixel", None, True),    # width only
    ((1, 32, 56, 56), (1, 32, 113, 56), "nearest", "half_pixel", "round_prefer_floor", True),  # height only
]


def resize_cases(rnd, count):
    out, seen = [], set()
    modes = [("nearest", "asymmetric", "floor"), ("nearest", "half_pixel", "round_prefer_floor"),
             ("nearest", "asymmetric", "round_prefer_ceil"), ("linear", "half_pixel", None),
             ("linear", "align_corners", None), ("linear", "asymmetric", None), ("linear", "pytorch_half_pixel", None),
             ("cubic", "half_pixel", None), ("cubic", "align_corners", None), ("cubic", "asymmetric", None)]
    edges = [(1, 128, 28, 28, 2.0, "linear", "half_pixel"), (1, 19, 28, 28, 8.0, "linear", "half_pixel"),
             (1, 256, 13, 13, 2.0, "nearest", "asymmetric", "floor"), (1, 3, 224, 224, 0.5, "linear", "half_pixel"),
             (1, 64, 56, 56, 2.0, "cubic", "half_pixel")]
    for a in edges:
        c = resize_case(*a)
        if c:
            seen.add(c.name)
            out.append(c)
    nd = [resize_nd_case(*a) for a in RESIZE_EDGES]
    nd = [c for c in nd if c]
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        mode, ctm, nm = rnd.choice(modes)
        h = rnd.choice([1, 7, 13, 14, 28, 56, 112])
        c = resize_case(rnd.choice([1, 1, 4]), rnd.choice([1, 3, 16, 64, 256]), h, h if rnd.random() < 0.8 else h + 3,
                        rnd.choice([2.0, 2.0, 4.0, 0.5, 1.5, 3.0]), mode, ctm, nm)
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out + nd


# ---- elementwise ----

UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "HardSwish", "Erf", "Abs", "Sqrt", "LeakyRelu", "HardSigmoid", "Clip"]
BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"]


def broadcast_shapes(pattern, n, c, h, w):
    """(first shape, second shape) of each broadcast pattern."""
    return {
        "same": ([n, c, h, w], [n, c, h, w]),
        "scalar": ([n, c, h, w], []),
        "channel": ([n, c, h, w], [c, 1, 1]),          # per-channel scale/bias
        "se": ([n, c, h, w], [n, c, 1, 1]),            # squeeze-excite gate
        "row": ([n, c, h, w], [w]),                    # last axis
        "column": ([n, c, h, w], [h, 1]),
        "outer": ([n, c, h, 1], [1, 1, 1, w]),         # both sides broadcast
        "first": ([n, c, h, w], [n, 1, 1, 1]),
        "middle": ([n, c, h, w], [1, c, h, 1]),
    }[pattern]


def unary_case(op, shape):
    elements = int(np.prod(shape))
    name = f"unary_{op}_{'x'.join(map(str, shape))}"

    def build():
        rng = rng_for(name)
        x = normal(rng, shape)
        inputs = ["X"]
        inits = []
        if op == "Sqrt":
            x = np.abs(x) + np.float32(0.01)
        attrs = {"alpha": 0.1} if op == "LeakyRelu" else {}
        if op == "Clip":
            inputs += ["lo", "hi"]
            inits = [("lo", np.array(-1, np.float32)), ("hi", np.array(1, np.float32))]
        node = helper.make_node(op, inputs, ["Y"], **attrs)
        return model(name, [node], {"X": x}, ["Y"], inits), {"X": x}
    return Case("elementwise", name, elements, build)


def binary_case(op, pattern, n, c, h, w):
    sa, sb = broadcast_shapes(pattern, n, c, h, w)
    out = np.broadcast_shapes(tuple(sa), tuple(sb))
    elements = int(np.prod(out))
    if elements > MAX_ELEMENTS:
        return None
    name = f"binary_{op}_{pattern}_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb)) or 'scalar'}"

    def build():
        rng = rng_for(name)
        a, b = normal(rng, sa), normal(rng, sb)
        if op == "Div":
            b = np.where(np.abs(b) < 0.25, np.float32(0.25), b).astype(np.float32)
        if op == "Pow":
            a = np.abs(a) + np.float32(0.1)
            b = np.clip(b, -2, 2).astype(np.float32)
        node = helper.make_node(op, ["A", "B"], ["Y"])
        return model(name, [node], {"A": a, "B": b}, ["Y"]), {"A": a, "B": b}
    return Case("elementwise", name, elements, build)


def elementwise_cases(rnd, count):
    out, seen = [], set()
    shapes = [(1, 1, 1, 1), (1, 3, 7, 7), (1, 16, 112, 112), (1, 64, 56, 56), (1, 96, 28, 28), (4, 32, 28, 28),
              (1, 576, 14, 14), (1, 1024, 7, 7), (1, 17, 13, 11), (1, 1, 197, 192), (1, 3, 224, 224), (4, 256, 14, 14)]
    patterns = ["same", "scalar", "channel", "se", "row", "column", "outer", "first", "middle"]
    # every broadcast pattern once with Add and Mul on a mid-size shape, then a random sample
    for pattern in patterns:
        for op in ["Add", "Mul"]:
            c = binary_case(op, pattern, 1, 64, 56, 56)
            if c and c.name not in seen:
                seen.add(c.name)
                out.append(c)
    for op in UNARY:
        c = unary_case(op, [1, 64, 56, 56])
        seen.add(c.name)
        out.append(c)
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        n, ch, h, w = rnd.choice(shapes)
        if rnd.random() < 0.35:
            c = unary_case(rnd.choice(UNARY), [n, ch, h, w])
        else:
            c = binary_case(rnd.choice(BINARY), rnd.choice(patterns), n, ch, h, w)
        if c is not None and c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


# ---- normalisation and reductions ----

def softmax_case(op, shape, axis):
    name = f"norm_{op}_{'x'.join(map(str, shape))}_axis{axis}"

    def build():
        rng = rng_for(name)
        x = normal(rng, shape)
        inits = []
        if op == "LayerNormalization":
            norm_shape = shape[axis:]
            inits = [("scale", normal(rng, norm_shape)), ("bias", normal(rng, norm_shape, 0.1))]
            node = helper.make_node(op, ["X", "scale", "bias"], ["Y"], axis=axis, epsilon=1e-5)
        else:
            node = helper.make_node(op, ["X"], ["Y"], axis=axis)
        return model(name, [node], {"X": x}, ["Y"], inits), {"X": x}
    return Case("softmax_norm", name, int(np.prod(shape)), build)


def reduce_case(op, shape, axes, keepdims):
    name = f"reduce_{op}_{'x'.join(map(str, shape))}_axes{'_'.join(map(str, axes))}_keep{keepdims}"
    span = int(np.prod([shape[a] for a in axes]))

    def build():
        rng = rng_for(name)
        x = normal(rng, shape)
        inits = []
        if op == "ReduceSum":   # axes is an input from opset 13
            inits = [("axes", np.array(axes, np.int64))]
            node = helper.make_node(op, ["X", "axes"], ["Y"], keepdims=keepdims)
        else:
            node = helper.make_node(op, ["X"], ["Y"], axes=list(axes), keepdims=keepdims)
        return model(name, [node], {"X": x}, ["Y"], inits), {"X": x}
    return Case("reduce", name, int(np.prod(shape)), build, atol=1e-5 * max(1.0, np.sqrt(span) / 4))


def norm_cases(rnd, count):
    out, seen = [], set()
    shapes = [(1, 197, 192), (4, 50, 768), (1, 1000), (8, 10), (1, 12, 197, 197), (2, 4, 64, 64), (1, 64, 56, 56),
              (1, 1, 4096), (3, 7, 1, 33)]
    for shape in shapes:
        for axis in range(len(shape)):
            for op in ["Softmax", "LayerNormalization", "LogSoftmax"]:
                if op == "LogSoftmax" and axis != len(shape) - 1:
                    continue
                if op == "LayerNormalization" and axis == 0:
                    continue
                c = softmax_case(op, list(shape), axis)
                seen.add(c.name)
                out.append(c)
    rnd.shuffle(out)
    return out[:count]


def reduce_cases(rnd, count):
    out, seen = [], set()
    ops = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"]
    shapes = [(1, 64, 56, 56), (4, 128, 14, 14), (1, 197, 768), (1, 1000), (2, 3, 5, 7), (1, 1024, 7, 7)]
    for shape in shapes:
        # every single axis, the spatial pair and all axes, with ReduceMean; other ops sampled
        axes_list = [(a,) for a in range(len(shape))] + ([(2, 3)] if len(shape) == 4 else []) + \
                    [tuple(range(len(shape)))]
        for axes in axes_list:
            c = reduce_case("ReduceMean", list(shape), axes, 1)
            seen.add(c.name)
            out.append(c)
    tries = 0
    while len(out) < count and tries < count * 200:
        tries += 1
        shape = rnd.choice(shapes)
        axes = tuple(sorted(rnd.sample(range(len(shape)), rnd.choice([1, 1, 2]))))
        c = reduce_case(rnd.choice(ops), list(shape), axes, rnd.choice([0, 1]))
        if c.name not in seen:
            seen.add(c.name)
            out.append(c)
    # every reduction, over a middle axis (the last kept) and over the last axis (reduced contiguous)
    for op in ops + ["ReduceProd", "ReduceL1"]:
        for axes in [(1,), (3,)]:
            c = reduce_case(op, [2, 48, 20, 20], axes, 0)
            if c.name not in seen:
                seen.add(c.name)
                out.append(c)
    return out


# ---- data movement ----

def transpose_case(shape, perm):
    name = f"transpose_{'x'.join(map(str, shape))}_perm{''.join(map(str, perm))}"

    def build():
        x = normal(rng_for(name), shape)
        return model(name, [helper.make_node("Transpose", ["X"], ["Y"], perm=list(perm))], {"X": x}, ["Y"]), {"X": x}
    return Case("movement", name, int(np.prod(shape)), build)


def concat_case(shapes, axis):
    name = f"concat_axis{axis}_" + "_".join("x".join(map(str, s)) for s in shapes)

    def build():
        rng = rng_for(name)
        inputs = {f"X{i}": normal(rng, s) for i, s in enumerate(shapes)}
        node = helper.make_node("Concat", list(inputs), ["Y"], axis=axis)
        return model(name, [node], inputs, ["Y"]), inputs
    return Case("movement", name, sum(int(np.prod(s)) for s in shapes), build)


def slice_case(shape, starts, ends, axes, steps):
    name = (f"slice_{'x'.join(map(str, shape))}_s{'_'.join(map(str, starts))}_e{'_'.join(map(str, ends))}"
            f"_a{'_'.join(map(str, axes))}_st{'_'.join(map(str, steps))}")

    def build():
        x = normal(rng_for(name), shape)
        inits = [(k, np.array(v, np.int64)) for k, v in
                 [("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)]]
        node = helper.make_node("Slice", ["X", "starts", "ends", "axes", "steps"], ["Y"])
        return model(name, [node], {"X": x}, ["Y"], inits), {"X": x}
    return Case("movement", name, int(np.prod(shape)), build)


def pad_case(shape, pads, mode):
    name = f"pad_{mode}_{'x'.join(map(str, shape))}_p{'_'.join(map(str, pads))}"

    def build():
        x = normal(rng_for(name), shape)
        inits = [("pads", np.array(pads, np.int64))]
        node = helper.make_node("Pad", ["X", "pads"], ["Y"], mode=mode)
        return model(name, [node], {"X": x}, ["Y"], inits), {"X": x}
    return Case("movement", name, int(np.prod(shape)), build)


def gather_case(shape, axis, nidx, const_data):
    name = f"gather_{'x'.join(map(str, shape))}_axis{axis}_idx{nidx}_{'table' if const_data else 'input'}"

    def build():
        rng = rng_for(name)
        x = normal(rng, shape)
        idx = rng.integers(-shape[axis], shape[axis], size=[nidx]).astype(np.int64)
        node = helper.make_node("Gather", ["X", "I"], ["Y"], axis=axis)
        if const_data:
            return model(name, [node], {"I": idx}, ["Y"], [("X", x)]), {"I": idx}
        return model(name, [node], {"X": x, "I": idx}, ["Y"]), {"X": x, "I": idx}
    return Case("movement", name, nidx * int(np.prod(shape)) // shape[axis], build)


def movement_cases(rnd, count):
    out = [
        transpose_case([1, 64, 56, 56], [0, 2, 3, 1]), transpose_case([1, 56, 56, 64], [0, 3, 1, 2]),
        transpose_case([1, 197, 3, 3, 64], [2, 0, 3, 1, 4]), transpose_case([1, 197, 12, 64], [0, 2, 1, 3]),
        transpose_case([1, 12, 197, 64], [0, 1, 3, 2]), transpose_case([512, 1024], [1, 0]),
        transpose_case([3, 5, 7, 11], [3, 2, 1, 0]), transpose_case([1, 4, 29, 2, 29], [0, 2, 1, 4, 3]),
        concat_case([[1, 64, 56, 56], [1, 64, 56, 56]], 1), concat_case([[1, 16, 28, 28]] * 4, 1),
        concat_case([[1, 197, 192], [1, 197, 192]], 2), concat_case([[1, 1, 192], [1, 196, 192]], 1),
        concat_case([[4, 3, 5, 7], [4, 3, 5, 9]], 3), concat_case([[2, 128, 14, 14], [2, 128, 14, 14]], 0),
        slice_case([1, 64, 56, 56], [0], [32], [1], [1]), slice_case([1, 64, 56, 56], [0, 0], [56, 56], [2, 3], [2, 2]),
        slice_case([1, 197, 192], [1], [197], [1], [1]), slice_case([1, 197, 192], [0], [1], [1], [1]),
        slice_case([1, 3, 224, 224], [-1], [-225], [3], [-1]), slice_case([4, 7, 13, 11], [1, 2], [6, 11], [1, 3], [2, 3]),
        pad_case([1, 64, 56, 56], [0, 0, 1, 1, 0, 0, 1, 1], "constant"),
        pad_case([1, 32, 112, 112], [0, 0, 0, 0, 0, 0, 1, 1], "constant"),
        pad_case([1, 3, 224, 224], [0, 0, 3, 3, 0, 0, 3, 3], "reflect"),
        pad_case([1, 16, 56, 56], [0, 0, 2, 2, 0, 0, 2, 2], "edge"), pad_case([1, 64, 100], [0, 0, 4, 0, 0, 4], "reflect"),
        pad_case([2, 7, 13, 11], [0, 1, 2, 3, 0, 1, 2, 3], "constant"),
        gather_case([30522, 128], 0, 128, True), gather_case([1000, 512], 0, 64, True), gather_case([1, 197, 192], 1, 1, False),
        gather_case([4, 64, 56, 56], 1, 16, False), gather_case([50, 768], 0, 7, True), gather_case([3, 5, 7], 2, 9, False),
    ]
    rnd.shuffle(out)
    return out[:count]


# ---- attention: MatMul(Q, K^T) -> scale -> [mask] -> Softmax -> MatMul(., V), as exporters spell it ----

def attention_case(batch, heads, seq, dim, mask, layout, scale_on):
    """Scaled dot-product attention over (batch, heads, seq, dim). layout "bhsd": Q, K, V inputs as
    [B, H, S, D]; "bshd": as [B, S, H, D] with the head-split Transposes (perm 0,2,1,3) in the graph
    and the merge back after. K^T by a Transpose of K. scale_on "scores" (Mul after Q K^T) or "q"
    (Div of Q by sqrt(D)). mask: "none"; "padding" an additive [B, 1, 1, S] input (-inf on the last
    keys); "causal" a constant [S, S] of 0 / -inf; "bias" a constant [1, H, S, S] (relative bias)."""
    macs = batch * heads * seq * seq * 2 * dim
    if macs > MAX_MACS or batch * heads * seq * seq > MAX_ELEMENTS:
        return None
    name = f"attention_b{batch}_h{heads}_s{seq}_d{dim}_{mask}_{layout}_{scale_on}"

    def build():
        rng = rng_for(name)
        shape = [batch, heads, seq, dim] if layout == "bhsd" else [batch, seq, heads, dim]
        inputs = {"Q": normal(rng, shape), "K": normal(rng, shape), "V": normal(rng, shape)}
        inits, nodes = [], []
        q, k, v = "Q", "K", "V"
        if layout == "bshd":
            for x in ("Q", "K", "V"):
                nodes.append(helper.make_node("Transpose", [x], [x + "h"], perm=[0, 2, 1, 3]))
            q, k, v = "Qh", "Kh", "Vh"
        nodes.append(helper.make_node("Transpose", [k], ["Kt"], perm=[0, 1, 3, 2]))
        if scale_on == "q":
            inits.append(("sqrt_d", np.array(np.sqrt(dim), np.float32)))
            nodes.append(helper.make_node("Div", [q, "sqrt_d"], ["Qs"]))
            nodes.append(helper.make_node("MatMul", ["Qs", "Kt"], ["S"]))
        else:
            inits.append(("scale", np.array(1 / np.sqrt(dim), np.float32)))
            nodes.append(helper.make_node("MatMul", [q, "Kt"], ["S0"]))
            nodes.append(helper.make_node("Mul", ["S0", "scale"], ["S"]))
        scores = "S"
        if mask != "none":
            if mask == "padding":
                m = np.zeros([batch, 1, 1, seq], np.float32)
                m[..., seq - max(1, seq // 5):] = -np.inf
                inputs["M"] = m
            elif mask == "causal":
                inits.append(("M", np.triu(np.full([seq, seq], -np.inf, np.float32), 1)))
            else:
                inits.append(("M", normal(rng, [1, heads, seq, seq])))
            nodes.append(helper.make_node("Add", ["S", "M"], ["Sm"]))
            scores = "Sm"
        nodes.append(helper.make_node("Softmax", [scores], ["P"], axis=-1))
        if layout == "bshd":
            nodes.append(helper.make_node("MatMul", ["P", v], ["Oh"]))
            nodes.append(helper.make_node("Transpose", ["Oh"], ["Y"], perm=[0, 2, 1, 3]))
        else:
            nodes.append(helper.make_node("MatMul", ["P", v], ["Y"]))
        return model(name, nodes, inputs, ["Y"], inits), inputs
    return Case("attention", name, macs, build, atol=1e-5 * max(1.0, np.sqrt(dim) / 4))


def attention_edges():
    return [c for c in [
        attention_case(1, 1, 16, 32, "none", "bhsd", "scores"),
        attention_case(1, 3, 37, 64, "none", "bshd", "q"),           # vit-tiny's heads
        attention_case(1, 12, 50, 64, "none", "bshd", "q"),          # vit_b_32's
        attention_case(1, 4, 49, 32, "bias", "bhsd", "q"),           # a swin window
        attention_case(1, 1, 1024, 64, "causal", "bhsd", "scores"),
        attention_case(1, 2, 1024, 32, "padding", "bshd", "scores"),
        attention_case(1, 16, 128, 80, "causal", "bshd", "scores"),
        attention_case(2, 8, 77, 64, "padding", "bshd", "q"),
    ] if c is not None]


def attention_cases(rnd, count):
    seqs = [16, 31, 37, 50, 64, 77, 100, 128, 197, 256, 384, 512, 1024]
    dims = [32, 48, 64, 80, 96, 128]
    heads = [1, 2, 3, 4, 6, 8, 12, 16]
    out = []
    for seq, dim, h, mask, layout, scale_on in itertools.product(
            seqs, dims, heads, ["none", "padding", "causal", "bias"], ["bhsd", "bshd"], ["scores", "q"]):
        c = attention_case(1, h, seq, dim, mask, layout, scale_on)
        if c is not None:
            out.append(c)
    rnd.shuffle(out)
    return out[:count]


# ---- the whole sweep ----

# family -> (generator, number of cases); the rough split follows where models spend their time.
FAMILIES = {
    "conv2d": (lambda r, n: conv2d_edges() + conv2d_cases(r, n - len(conv2d_edges())), 150),
    "conv1d": (conv1d_cases, 30),
    "convtranspose": (conv_transpose_cases, 20),
    "gemm": (gemm_cases, 61),
    "matmul": (matmul_cases, 41),
    "pool": (pool_cases, 40),
    "resize": (resize_cases, 25),
    "elementwise": (elementwise_cases, 60),
    "softmax_norm": (norm_cases, 30),
    "reduce": (reduce_cases, 35),
    "movement": (movement_cases, 30),
    "attention": (lambda r, n: attention_edges() + attention_cases(r, n - len(attention_edges())), 30),
}


def all_cases(seed=2126):
    """Every case of the sweep, in a fixed order (each family from its own seeded generator)."""
    cases = []
    for family, (gen, count) in FAMILIES.items():
        rnd = random.Random(f"{seed}-{family}")
        cases += gen(rnd, count)
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    return cases
