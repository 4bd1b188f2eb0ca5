#!/usr/bin/python3
"""Writes models of operators from opsets newer than Debian's libonnx-testdata covers (it stops
at 17), in the backend-test layout, with ONNX Runtime's outputs as the reference. Run from this
directory:

    /usr/bin/python3 make.py /path/to/ort-run.mjs

onnx 1.12 does not know these opsets: the models are built with onnx.helper and saved unchecked.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
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


def attention_reference(q, k, v, q_heads, kv_heads, mask=None, causal=False, scale=None, past=None):
    """numpy float64: the operator's definition, for checking ONNX Runtime's outputs."""
    def heads(x, h):
        return x.reshape(x.shape[0], x.shape[1], h, -1).transpose(0, 2, 1, 3) if x.ndim == 3 else x
    qh, kh, vh = heads(q, q_heads).astype(np.float64), heads(k, kv_heads).astype(np.float64), heads(v, kv_heads)
    vh = vh.astype(np.float64)
    if past is not None:
        kh = np.concatenate([past[0], kh], axis=2)
        vh = np.concatenate([past[1], vh], axis=2)
    present = (kh, vh)
    group = qh.shape[1] // kh.shape[1]
    kq, vq = np.repeat(kh, group, axis=1), np.repeat(vh, group, axis=1)
    scale = 1 / np.sqrt(qh.shape[-1]) if scale is None else scale
    s = qh @ kq.transpose(0, 1, 3, 2) * scale
    if mask is not None:
        s = s + (np.where(mask, 0, -np.inf) if mask.dtype == np.bool_ else mask)
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    y = (p / p.sum(-1, keepdims=True)) @ vq
    if q.ndim == 3:
        y = y.transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
    return y, present


def attention(ort_run):
    """Attention-23 in the forms exporters write: 4-D with a boolean mask; 3-D grouped-query heads
    (4 query heads, 2 key/value heads) causal; 4-D with past key/value, a float mask, an explicit
    scale and the present outputs. Each is checked against a numpy float64 computation of the
    definition before ONNX Runtime's outputs are stored."""
    rng = np.random.default_rng(23)
    cases = []
    # 4-D, boolean mask broadcast over batch and heads.
    q, k, v = (rng.standard_normal((2, 3, 5, 8)).astype(np.float32) for _ in range(3))
    mask = rng.random((5, 5)) > 0.3
    mask[:, 0] = True
    cases.append(("attention_4d_bool_mask", [("q", q), ("k", k), ("v", v), ("mask", mask)], {},
                  attention_reference(q, k, v, 3, 3, mask=mask)[0:1], ["y"]))
    # 3-D, grouped-query heads, causal.
    q = rng.standard_normal((1, 6, 4 * 8)).astype(np.float32)
    k, v = (rng.standard_normal((1, 6, 2 * 8)).astype(np.float32) for _ in range(2))
    cases.append(("attention_3d_gqa_causal", [("q", q), ("k", k), ("v", v)],
                  {"q_num_heads": 4, "kv_num_heads": 2, "is_causal": 1},
                  attention_reference(q, k, v, 4, 2, causal=True)[0:1], ["y"]))
    # 4-D with a past, a float mask over past and new keys, scale 0.2, present outputs.
    q, k, v = (rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(3))
    pk, pv = (rng.standard_normal((1, 2, 5, 4)).astype(np.float32) for _ in range(2))
    fmask = (rng.standard_normal((1, 1, 3, 8)) * 2).astype(np.float32)
    y, (present_k, present_v) = attention_reference(q, k, v, 2, 2, mask=fmask, scale=0.2, past=(pk, pv))
    cases.append(("attention_4d_past", [("q", q), ("k", k), ("v", v), ("mask", fmask), ("past_k", pk), ("past_v", pv)],
                  {"scale": 0.2}, [y, present_k, present_v], ["y", "present_k", "present_v"]))
    for name, inputs, attrs, expected, outputs in cases:
        node = helper.make_node("Attention", [n for n, _ in inputs], outputs, name="attention", **attrs)
        kinds = {np.float32: F, np.bool_: TensorProto.BOOL}
        graph = helper.make_graph(
            [node], name, [helper.make_tensor_value_info(n, kinds[a.dtype.type], list(a.shape)) for n, a in inputs],
            [helper.make_tensor_value_info(o, F, list(e.shape)) for o, e in zip(outputs, expected)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        model.ir_version = 10
        save(name, model, inputs, [], check=False)
        subprocess.run(["node", ort_run, name], check=True)
        for i, e in enumerate(expected):
            got = numpy_helper.to_array(onnx.load_tensor(f"{name}/test_data_set_0/output_{i}.pb"))
            err = np.abs(got - e).max()
            assert err < 1e-5, f"{name} output {i}: ONNX Runtime differs from the definition by {err}"


def rotary_reference(x, cos, sin, pos=None, interleaved=False, rot=0, heads=0):
    """numpy float64: the operator's definition, for checking ONNX Runtime's outputs."""
    x = x.astype(np.float64)
    b = x.reshape(x.shape[0], x.shape[1], heads, -1) if x.ndim == 3 else x.transpose(0, 2, 1, 3)
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    cos, sin = cos[:, :, None, :].astype(np.float64), sin[:, :, None, :].astype(np.float64)
    rot = rot or b.shape[-1]
    r, rest = b[..., :rot], b[..., rot:]
    x1, x2 = (r[..., 0::2], r[..., 1::2]) if interleaved else (r[..., :rot // 2], r[..., rot // 2:])
    real, imag = x1 * cos - x2 * sin, x2 * cos + x1 * sin
    y = np.stack([real, imag], -1).reshape(r.shape) if interleaved else np.concatenate([real, imag], -1)
    y = np.concatenate([y, rest], -1)
    return y.reshape(x.shape) if x.ndim == 3 else y.transpose(0, 2, 1, 3)


def rotary(ort_run):
    """RotaryEmbedding-23: 4-D with per-token cos/sin, halves rotated; 3-D with position_ids,
    interleaved pairs, half the channels rotated. Checked against numpy float64 when made."""
    rng = np.random.default_rng(123)
    x4 = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
    angles = rng.standard_normal((2, 5, 4))
    cos4, sin4 = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    x3 = rng.standard_normal((1, 6, 2 * 8)).astype(np.float32)
    table = np.arange(10)[:, None] * np.array([1.0, 0.1])[None, :]
    cos3, sin3 = np.cos(table).astype(np.float32), np.sin(table).astype(np.float32)
    pos = np.array([[3, 1, 4, 1, 5, 9]], dtype=np.int64)
    cases = [
        ("rotary_4d_halves", [("x", x4), ("cos", cos4), ("sin", sin4)], {}, rotary_reference(x4, cos4, sin4)),
        ("rotary_3d_interleaved_partial", [("x", x3), ("cos", cos3), ("sin", sin3), ("pos", pos)],
         {"interleaved": 1, "rotary_embedding_dim": 4, "num_heads": 2},
         rotary_reference(x3, cos3, sin3, pos, True, 4, 2)),
    ]
    for name, inputs, attrs, expected in cases:
        node = helper.make_node("RotaryEmbedding", [n for n, _ in inputs], ["y"], name="rope", **attrs)
        kinds = {np.float32: F, np.int64: TensorProto.INT64}
        graph = helper.make_graph(
            [node], name, [helper.make_tensor_value_info(n, kinds[a.dtype.type], list(a.shape)) for n, a in inputs],
            [helper.make_tensor_value_info("y", F, list(expected.shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        model.ir_version = 10
        save(name, model, inputs, [], check=False)
        subprocess.run(["node", ort_run, name], check=True)
        got = numpy_helper.to_array(onnx.load_tensor(f"{name}/test_data_set_0/output_0.pb"))
        err = np.abs(got - expected).max()
        assert err < 1e-5, f"{name}: ONNX Runtime differs from the definition by {err}"


def center_crop_pad(ort_run):
    """CenterCropPad-18 cropping one axis (odd difference) and padding another (odd difference),
    the third left alone; checked against a numpy computation of the definition when made."""
    rng = np.random.default_rng(18)
    x = rng.standard_normal((2, 7, 4, 3)).astype(np.float32)
    shape = np.array([4, 7], dtype=np.int64)  # axes 1 and 2: 7 -> 4 (crop), 4 -> 7 (pad)
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], name="crop_pad", axes=[1, -2])
    graph = helper.make_graph([node], "center_crop_pad", [helper.make_tensor_value_info("x", F, list(x.shape))],
                              [helper.make_tensor_value_info("y", F, [2, 4, 7, 3])],
                              [numpy_helper.from_array(shape, "shape")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    save("center_crop_pad", model, [("x", x)], [], check=False)
    subprocess.run(["node", ort_run, "center_crop_pad"], check=True)
    expected = np.zeros((2, 4, 7, 3), dtype=np.float32)
    expected[:, :, 1:5, :] = x[:, 1:5, :, :]
    got = numpy_helper.to_array(onnx.load_tensor("center_crop_pad/test_data_set_0/output_0.pb"))
    assert np.array_equal(got, expected), "ONNX Runtime differs from the definition"


def affine_grid(ort_run):
    """AffineGrid-20, 2-D with align_corners 0 and 3-D with align_corners 1; checked against a
    numpy float64 computation of the definition when made."""
    rng = np.random.default_rng(20)

    def coords(length, align):
        i = np.arange(length, dtype=np.float64)
        if align:
            return -1 + 2 * i / (length - 1) if length > 1 else np.zeros(1)
        return (2 * i + 1) / length - 1

    def reference(theta, size, align):
        spatial = size[2:]
        axes = [coords(n, align) for n in spatial]  # (D,) H, W
        mesh = np.meshgrid(*axes, indexing="ij")
        base = np.stack([m.ravel() for m in reversed(mesh)] + [np.ones(mesh[0].size)], -1)  # x, y[, z], 1
        grid = np.einsum("pk,njk->npj", base, theta.astype(np.float64))
        return grid.reshape(size[0], *spatial, len(spatial)).astype(np.float32)

    for name, size, align in (("affine_grid_2d", [2, 3, 4, 5], 0), ("affine_grid_3d_align", [1, 1, 2, 3, 4], 1)):
        dims = len(size) - 2
        theta = rng.standard_normal((size[0], dims, dims + 1)).astype(np.float32)
        node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="grid", align_corners=align)
        expected = reference(theta, size, align)
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info("theta", F, list(theta.shape))],
                                  [helper.make_tensor_value_info("grid", F, list(expected.shape))],
                                  [numpy_helper.from_array(np.array(size, dtype=np.int64), "size")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        model.ir_version = 9
        save(name, model, [("theta", theta)], [], check=False)
        subprocess.run(["node", ort_run, name], check=True)
        got = numpy_helper.to_array(onnx.load_tensor(f"{name}/test_data_set_0/output_0.pb"))
        err = np.abs(got - expected).max()
        assert err < 1e-5, f"{name}: ONNX Runtime differs from the definition by {err}"


def col2im_reference(x, image, block, strides, dilations, pads):
    """numpy float64: every column's taps added into the padded image, the padding cut off."""
    n, ck, _ = x.shape
    taps = int(np.prod(block))
    c = ck // taps
    padded = [image[d] + pads[d] + pads[d + len(image)] for d in range(len(image))]
    counts = [(padded[d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(len(image))]
    out = np.zeros((n, c, *padded))
    cols = x.astype(np.float64).reshape(n, c, *block, *counts)
    for pos in np.ndindex(*counts):
        for tap in np.ndindex(*block):
            at = tuple(pos[d] * strides[d] + tap[d] * dilations[d] for d in range(len(image)))
            out[(slice(None), slice(None)) + at] += cols[(slice(None), slice(None)) + tap + pos]
    inner = tuple(slice(pads[d], pads[d] + image[d]) for d in range(len(image)))
    return out[(slice(None), slice(None)) + inner].astype(np.float32)


def col2im(ort_run):
    """Col2Im-18, two nodes in one model: strides 2 with asymmetric pads (a remainder the
    ConvTranspose's output_padding covers), and dilation 2. Checked against numpy when made."""
    rng = np.random.default_rng(180)
    cases = [("a", [5, 6], [2, 3], [2, 2], [1, 1], [1, 0, 0, 1]), ("b", [6, 5], [2, 2], [1, 1], [2, 2], [0, 0, 0, 0])]
    nodes, inputs, outputs, inits, expected = [], [], [], [], []
    for tag, image, block, strides, dilations, pads in cases:
        padded = [image[d] + pads[d] + pads[d + 2] for d in range(2)]
        counts = [(padded[d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(2)]
        x = rng.standard_normal((2, 3 * block[0] * block[1], counts[0] * counts[1])).astype(np.float32)
        y = col2im_reference(x, image, block, strides, dilations, pads)
        nodes.append(helper.make_node("Col2Im", [f"x_{tag}", f"image_{tag}", f"block_{tag}"], [f"y_{tag}"],
                                      name=f"col2im_{tag}", strides=strides, dilations=dilations, pads=pads))
        inputs.append((f"x_{tag}", x))
        inits += [numpy_helper.from_array(np.array(image, dtype=np.int64), f"image_{tag}"),
                  numpy_helper.from_array(np.array(block, dtype=np.int64), f"block_{tag}")]
        outputs.append(helper.make_tensor_value_info(f"y_{tag}", F, list(y.shape)))
        expected.append(y)
    graph = helper.make_graph(nodes, "col2im", [helper.make_tensor_value_info(n, F, list(a.shape)) for n, a in inputs],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    save("col2im", model, inputs, [], check=False)
    subprocess.run(["node", ort_run, "col2im"], check=True)
    for i, e in enumerate(expected):
        got = numpy_helper.to_array(onnx.load_tensor(f"col2im/test_data_set_0/output_{i}.pb"))
        err = np.abs(got - e).max()
        assert err < 1e-5, f"col2im output {i}: ONNX Runtime differs from the definition by {err}"


def lp_normalization(ort_run):
    """LpNormalization at opset 22 (L2 over axis 1) and at opset 13 (L1 over the last axis, the
    reductions' axes an attribute there), one model each; checked against numpy when made."""
    rng = np.random.default_rng(22)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    for name, opset, p, axis in (("lp_norm_l2_opset22", 22, 2, 1), ("lp_norm_l1_opset13", 13, 1, -1)):
        x64 = x.astype(np.float64)
        norm = np.sqrt((x64 ** 2).sum(axis, keepdims=True)) if p == 2 else np.abs(x64).sum(axis, keepdims=True)
        expected = (x64 / norm).astype(np.float32)
        node = helper.make_node("LpNormalization", ["x"], ["y"], name="lp", p=p, axis=axis)
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", F, list(x.shape))],
                                  [helper.make_tensor_value_info("y", F, list(x.shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10 if opset > 17 else 7
        save(name, model, [("x", x)], [], check=False)
        subprocess.run(["node", ort_run, name], check=True)
        got = numpy_helper.to_array(onnx.load_tensor(f"{name}/test_data_set_0/output_0.pb"))
        err = np.abs(got - expected).max()
        assert err < 1e-6, f"{name}: ONNX Runtime differs from the definition by {err}"


def tensor_scatter(ort_run):
    """TensorScatter-24, two nodes in one model: linear with write_indices on the default axis
    (-2), circular wrapping past the cache's end; checked against the definition's loops."""
    rng = np.random.default_rng(24)
    past = rng.standard_normal((2, 3, 6, 4)).astype(np.float32)
    update = rng.standard_normal((2, 3, 2, 4)).astype(np.float32)
    starts = np.array([1, 4], dtype=np.int64)
    circular_starts = np.array([5, 0], dtype=np.int64)

    def reference(starts, circular):
        out = past.copy()
        for b in range(2):
            for s in range(2):
                at = starts[b] + s
                out[b, :, at % 6 if circular else at, :] = update[b, :, s, :]
        return out

    nodes = [helper.make_node("TensorScatter", ["past", "update", "starts"], ["linear"], name="linear"),
             helper.make_node("TensorScatter", ["past", "update", "circular_starts"], ["circular"], name="circular",
                              mode="circular", axis=2)]
    inputs = [("past", past), ("update", update), ("starts", starts), ("circular_starts", circular_starts)]
    kinds = {np.float32: F, np.int64: TensorProto.INT64}
    graph = helper.make_graph(
        nodes, "tensor_scatter", [helper.make_tensor_value_info(k, kinds[a.dtype.type], list(a.shape)) for k, a in inputs],
        [helper.make_tensor_value_info(o, F, list(past.shape)) for o in ("linear", "circular")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 10
    save("tensor_scatter", model, inputs, [], check=False)
    subprocess.run(["node", ort_run, "tensor_scatter"], check=True)
    for i, e in enumerate((reference(starts, False), reference(circular_starts, True))):
        got = numpy_helper.to_array(onnx.load_tensor(f"tensor_scatter/test_data_set_0/output_{i}.pb"))
        assert np.array_equal(got, e), f"tensor_scatter output {i}: ONNX Runtime differs from the definition"


def pack_4bit(values):
    """Two 4-bit values per byte, the first in the low nibble (an odd count pads a zero)."""
    v = (np.asarray(values, dtype=np.int64).ravel() & 0xF).astype(np.uint8)
    if v.size % 2:
        v = np.append(v, np.uint8(0))
    return (v[0::2] | (v[1::2] << 4)).tobytes()


def int4_weights(ort_run):
    """Weight-only 4-bit MatMuls as quantizers write them: int4 weights with blocked scales and
    zero points (DequantizeLinear-21, block_size 4 along the rows, raw_data) and uint4 weights
    per output column (int32_data, one packed byte per entry; an odd count of zero points). Checked against
    numpy when made."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    w1 = rng.integers(-8, 8, (8, 6))
    s1 = (rng.random((2, 6)) * 0.1 + 0.01).astype(np.float32)
    z1 = rng.integers(-8, 8, (2, 6))
    w2 = rng.integers(0, 16, (8, 5))
    s2 = (rng.random(5) * 0.1 + 0.01).astype(np.float32)
    z2 = rng.integers(0, 16, 5)

    def t4(name, kind, values, dims, raw):
        t = TensorProto(name=name, data_type=kind, dims=list(dims))
        if raw:
            t.raw_data = pack_4bit(values)
        else:
            t.int32_data.extend(np.frombuffer(pack_4bit(values), dtype=np.uint8).tolist())
        return t

    INT4, UINT4 = 22, 21
    inits = [t4("w1", INT4, w1, w1.shape, True), numpy_helper.from_array(s1, "s1"), t4("z1", INT4, z1, z1.shape, True),
             t4("w2", UINT4, w2, w2.shape, False), numpy_helper.from_array(s2, "s2"), t4("z2", UINT4, z2, z2.shape, False)]
    nodes = [helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1f"], name="dq1", axis=0, block_size=4),
             helper.make_node("MatMul", ["x", "w1f"], ["y1"], name="mm1"),
             helper.make_node("DequantizeLinear", ["w2", "s2", "z2"], ["w2f"], name="dq2", axis=1),
             helper.make_node("MatMul", ["x", "w2f"], ["y2"], name="mm2")]
    graph = helper.make_graph(nodes, "int4_weights", [helper.make_tensor_value_info("x", F, [3, 8])],
                              [helper.make_tensor_value_info("y1", F, [3, 6]), helper.make_tensor_value_info("y2", F, [3, 5])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    save("int4_weights", model, [("x", x)], [], check=False)
    # Unoptimised: ORT's optimiser turns DequantizeLinear -> MatMul into its MatMulNBits kernel,
    # which rounds the activations (0.004 off the definition here).
    definition = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "quant", "ort_run_definition.mjs")
    subprocess.run(["node", definition, "int4_weights"], check=True,
                   env={**os.environ, "ORT_DIR": os.path.dirname(os.path.abspath(ort_run))})
    w1f = (w1 - np.repeat(z1, 4, axis=0)) * np.repeat(s1, 4, axis=0).astype(np.float64)
    w2f = (w2 - z2[None, :]) * s2[None, :].astype(np.float64)
    for i, e in enumerate((x.astype(np.float64) @ w1f, x.astype(np.float64) @ w2f)):
        got = numpy_helper.to_array(onnx.load_tensor(f"int4_weights/test_data_set_0/output_{i}.pb"))
        err = np.abs(got - e).max()
        assert err < 1e-5, f"int4_weights output {i}: ONNX Runtime differs from the definition by {err}"


def opset26(ort_run):
    """The two operators of opset 26 in one model: CumProd-26 along a constant axis (plain, and
    exclusive + reverse on int32) and along an axis given at run time; BitCast-26 float <-> int32
    and uint8 -> int8. Checked against numpy (cumprod, view) when made."""
    rng = np.random.default_rng(26)
    x = (rng.random((2, 5, 3)) + 0.5).astype(np.float32) * np.where(rng.random((2, 5, 3)) < 0.3, -1, 1).astype(np.float32)
    xi = rng.integers(-3, 4, (4, 3)).astype(np.int32)
    bits = rng.integers(0, 256, (7,)).astype(np.uint8)
    axis = np.array(-1, dtype=np.int64)
    I32, I64, U8, I8 = TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8, TensorProto.INT8
    const_axis = numpy_helper.from_array(np.array(1, dtype=np.int64), "axis1")
    nodes = [helper.make_node("CumProd", ["x", "axis1"], ["prod"], name="cumprod"),
             helper.make_node("CumProd", ["xi", "axis1"], ["prod_ex_rev"], name="cumprod_ex_rev", exclusive=1,
                              reverse=1),
             helper.make_node("CumProd", ["x", "axis"], ["prod_runtime_axis"], name="cumprod_axis_input"),
             helper.make_node("BitCast", ["x"], ["x_bits"], name="float_bits", to=I32),
             helper.make_node("BitCast", ["xi"], ["xi_float"], name="bits_float", to=F),
             helper.make_node("BitCast", ["bits"], ["bits_signed"], name="u8_i8", to=I8)]
    inputs = [("x", x), ("xi", xi), ("bits", bits), ("axis", axis)]
    kinds = {np.float32: F, np.int32: I32, np.uint8: U8, np.int64: I64}
    rev_ex = np.flip(np.cumprod(np.flip(xi, 1), 1), 1)
    rev_ex = np.concatenate([rev_ex[:, 1:], np.ones((4, 1), np.int32)], 1).astype(np.int32)
    expected = [np.cumprod(x.astype(np.float64), 1), rev_ex, np.cumprod(x.astype(np.float64), -1),
                x.view(np.int32), xi.view(np.float32), bits.view(np.int8)]
    outputs = ["prod", "prod_ex_rev", "prod_runtime_axis", "x_bits", "xi_float", "bits_signed"]
    out_kinds = [F, I32, F, I32, F, I8]
    graph = helper.make_graph(
        nodes, "opset26", [helper.make_tensor_value_info(k, kinds[a.dtype.type], list(a.shape)) for k, a in inputs],
        [helper.make_tensor_value_info(o, t, list(e.shape)) for o, t, e in zip(outputs, out_kinds, expected)],
        [const_axis])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    model.ir_version = 13
    save("opset26", model, inputs, [], check=False)
    subprocess.run(["node", ort_run, "opset26"], check=True)
    for i, e in enumerate(expected):
        got = numpy_helper.to_array(onnx.load_tensor(f"opset26/test_data_set_0/output_{i}.pb"))
        if e.dtype.kind == "f" and got.dtype == np.float32 and e.dtype == np.float64:
            assert np.abs(got - e).max() < 1e-5, f"opset26 output {i}: ONNX Runtime differs from numpy"
        else:
            assert np.array_equal(got.view(np.uint8), e.view(np.uint8)), f"opset26 output {i}: ONNX Runtime differs"


def newest_versions(ort_run, opset=26, name="newest_versions"):
    """One model importing opset 26, so that each node resolves to its operator's newest version:
    the operators whose versions after 17 only widened their types (bfloat16 at 22, float8,
    4-bit and 2-bit at 19-25) or changed attributes onnxc checks (Reduce* axes as an input at 18,
    Split's num_outputs, QuantizeLinear's precision, DequantizeLinear's output_dtype), one node
    each on float32 or int32 data. ONNX Runtime's outputs; tools/opset_table.py lists this test
    against every version it uses. The same nodes at opset 18 and 21 (versions_at_18, _21) test
    the versions in force there: only the operators with a version from 18 up to that opset (the
    others resolve to versions of 17 or older, which Debian's backend tests cover), without
    attributes newer than the opset (precision, output_dtype 23)."""
    text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "compiler", "ops",
                             "onnx_versions.cpp")).read()
    since = {m.group(1): [int(v) for v in m.group(2).split(",")]
             for m in re.finditer(r'\{"", "(\w+)", \{([0-9, ]+)\}', text)}
    rng = np.random.default_rng(2026)
    I32, I64, U8 = TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8
    x = (rng.random((2, 3, 4, 5)) * 1.6 - 0.8).astype(np.float32)
    xi = rng.integers(-50, 50, (3, 4)).astype(np.int32)
    yi = rng.integers(-50, 50, (3, 4)).astype(np.int32)
    m = (rng.standard_normal((3, 3)) + 2 * np.eye(3)).astype(np.float32)
    nodes, outputs, inits = [], [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def add(op, inputs, kind=F, outs=1, **attrs):
        if opset < 26 and not any(18 <= v <= opset for v in since[op]):
            return inputs[0] if inputs else None  # a pass-through: later nodes still have their input
        names = [f"{op.lower()}_{len(nodes)}_{k}" for k in range(outs)]
        nodes.append(helper.make_node(op, inputs, names, name=f"{op}_{len(nodes)}", **attrs))
        kinds = kind if isinstance(kind, list) else [kind] * outs
        outputs.extend(helper.make_tensor_value_info(o, t, None) for o, t in zip(names, kinds))
        return names[0]

    # Unary float operators (versions 22; Mish 22, Gelu 20, IsInf/IsNaN 20, Round 22).
    for op in ("Acos", "Asin", "Asinh", "Atan", "Atanh", "Cos", "Cosh", "Sin", "Sinh", "Tan", "Elu", "HardSigmoid",
               "HardSwish", "Mish", "Round", "Selu", "Softplus", "Softsign", "Gelu"):
        add(op, ["x"])
    nodes.append(helper.make_node("Abs", ["x"], ["x_abs"], name="abs"))
    nodes.append(helper.make_node("Add", ["x_abs", const("one", np.float32(1))], ["x_ge1"], name="add1"))
    add("Acosh", ["x_ge1"])
    add("ThresholdedRelu", ["x"], alpha=0.3)
    add("Gelu", ["x"], approximate="tanh")
    add("IsInf", ["x"], TensorProto.BOOL)
    add("IsNaN", ["x"], TensorProto.BOOL)
    # Bitwise (18) and Equal (19) on int32.
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        add(op, ["xi", "yi"], I32)
    add("BitwiseNot", ["xi"], I32)
    add("Equal", ["xi", "yi"], TensorProto.BOOL)
    # Shapes and views (25), Cast/CastLike (25), Constant/ConstantOfShape (25), Pad (25).
    add("Identity", ["x"])
    add("Reshape", ["x", const("shape", np.array([6, -1], np.int64))])
    add("Flatten", ["x"], axis=2)
    add("Unsqueeze", ["x", const("ax0", np.array([0], np.int64))])
    add("Squeeze", [add("Unsqueeze", ["x", const("ax3", np.array([3], np.int64))]), const("ax3b", np.array([3], np.int64))])
    add("Transpose", ["x"], perm=[0, 2, 3, 1])
    add("Shape", ["x"], I64, start=1)
    add("Size", ["x"], I64)
    add("Cast", ["x"], I32, to=I32)
    add("CastLike", ["xi", "x"])
    add("ConstantOfShape", [const("cs_shape", np.array([2, 3], np.int64))], I32,
        value=numpy_helper.from_array(np.array([7], np.int32)))
    add("Constant", [], F, value=numpy_helper.from_array(np.array([1.5, -2.5], np.float32)))
    add("Pad", ["x", const("pads", np.array([0, 1, 0, 2, 0, 0, 1, 0], np.int64))], mode="reflect")
    add("Pad", ["x", const("pads2", np.array([1, 2], np.int64)), const("pv", np.float32(0.5)),
                const("pad_axes", np.array([-1], np.int64))])
    # Reductions with axes as an input (18; ReduceMax and ReduceMin 20).
    for op in ("ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
               "ReduceSumSquare"):
        add(op, ["x", const(f"axes_{op}", np.array([1, -1], np.int64))], keepdims=0)
    add("ReduceLogSum", ["x_ge1", const("axes_ls", np.array([2], np.int64))])
    add("ReduceMax", ["x"], noop_with_empty_axes=0)
    # Split (18) with num_outputs, uneven; TopK (24); Det, EyeLike, Dropout (22).
    add("Split", ["x"], F, outs=3, axis=3, num_outputs=3)
    add("TopK", ["x", const("k", np.array([2], np.int64))], [F, I64], outs=2, axis=2, largest=0)
    add("Det", ["m"])
    add("EyeLike", ["m"], k=1)
    add("Dropout", ["x"])
    # Pools and normalisations (22; LpPool 22; GroupNormalization 21; RMSNormalization 23).
    add("MaxPool", ["x"], kernel_shape=[2, 2], strides=[1, 2])
    add("AveragePool", ["x"], kernel_shape=[3, 2], pads=[1, 0, 1, 1], count_include_pad=1)
    add("LpPool", ["x"], kernel_shape=[2, 3], p=3)
    add("GlobalAveragePool", ["x"])
    add("GlobalMaxPool", ["x"])
    add("InstanceNormalization", ["x", const("in_s", rng.random(3).astype(np.float32)),
                                  const("in_b", rng.random(3).astype(np.float32))])
    add("GroupNormalization", ["x", const("gn_s", rng.random(3).astype(np.float32)),
                               const("gn_b", rng.random(3).astype(np.float32))], num_groups=3, epsilon=1e-3)
    add("RMSNormalization", ["x", const("rms_s", rng.random(5).astype(np.float32))], axis=-1)
    add("LpNormalization", ["x"], axis=2, p=1)
    # Convolutions (22), GridSample (22), Resize (19), Scatter (18).
    add("Conv", ["x", const("cw", rng.standard_normal((2, 3, 2, 2)).astype(np.float32))], dilations=[1, 2])
    add("ConvTranspose", ["x", const("tw", rng.standard_normal((3, 2, 2, 2)).astype(np.float32))], strides=[2, 1])
    grid = (rng.random((2, 3, 2, 2)) * 2.2 - 1.1).astype(np.float32)
    add("GridSample", ["x", const("grid", grid)], mode="linear" if opset >= 20 else "bilinear", padding_mode="border")
    add("Resize", ["x", "", const("scales", np.array([1, 1, 1.5, 0.6], np.float32))], mode="linear",
        antialias=0)
    add("ScatterElements", ["xi", const("se_idx", np.array([[1, 0], [2, 3], [0, 0]], np.int64)),
                            const("se_upd", np.array([[5, 6], [7, 8], [9, 10]], np.int32))], I32, axis=1,
        reduction="add")
    add("ScatterND", ["xi", const("snd_idx", np.array([[0, 1], [2, 3]], np.int64)),
                      const("snd_upd", np.array([3, 4], np.int32))], I32, reduction="mul")
    # QuantizeLinear / DequantizeLinear (25) with precision and output_dtype as the scale's type.
    late = {"precision": F} if opset >= 23 else {}
    q = add("QuantizeLinear", ["x", const("qs", np.float32(0.01)), const("qz", np.int8(3))], TensorProto.INT8, **late)
    add("DequantizeLinear", [q, "qs", "qz"], **({"output_dtype": F} if opset >= 23 else {}))
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", F, list(x.shape)), helper.make_tensor_value_info("xi", I32, [3, 4]),
         helper.make_tensor_value_info("yi", I32, [3, 4]), helper.make_tensor_value_info("m", F, [3, 3])],
        outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 13 if opset > 21 else 8
    save(name, model, [("x", x), ("xi", xi), ("yi", yi), ("m", m)], [], check=False)
    subprocess.run(["node", ort_run, name], check=True)


def attention_extras(ort_run):
    """Attention-24's softcap, qk_matmul_output (modes 0 to 3), is_causal with a past (the
    triangle aligned to the last key) and nonpad_kv_seqlen, five nodes in one model; checked against numpy float64
    when made. softcap comes after the mask, as the operator defines it (qk_matmul_output_mode 1 is
    the scores with the mask, 2 after softcap): a masked score becomes -softcap. ONNX Runtime 1.30
    applies softcap first, so for the node with both (ya) the expected output is numpy's of the
    operator's order, and ONNX Runtime's distance from it is printed; every other output is ONNX
    Runtime's, checked against numpy. The qk outputs compared have no masked entries (ONNX Runtime
    writes the lowest float there, onnxc -inf)."""
    rng = np.random.default_rng(2323)

    def reference(q, k, v, mask=None, causal=False, softcap=0.0, past=None, mode=0):
        q, k, v = (a.astype(np.float64) for a in (q, k, v))
        if past is not None:
            k, v = np.concatenate([past[0], k], 2), np.concatenate([past[1], v], 2)
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
        stages = [s]
        if mask is not None:
            s = s + np.where(mask, 0, -np.inf)
        if causal:
            ql, kl = s.shape[-2:]
            s = s + np.triu(np.full((ql, kl), -np.inf), 1 + kl - ql)
        stages.append(s)
        if softcap:
            s = softcap * np.tanh(s / softcap)
        stages.append(s)
        p = np.exp(s - s.max(-1, keepdims=True))
        p = p / p.sum(-1, keepdims=True)
        stages.append(p)
        return p @ v, stages[mode]

    nodes, inputs, outputs, expected = [], [], [], []
    # a: softcap 1.5 with a boolean mask, qk output of the scaled product (mode 0).
    qa, ka, va = (rng.standard_normal((1, 2, 3, 4)).astype(np.float32) * 2 for _ in range(3))
    mask = rng.random((3, 3)) > 0.3
    mask[:, 0] = True
    ya, qka = reference(qa, ka, va, mask=mask, softcap=1.5, mode=0)
    # b: causal with a past of 3 (2 new queries), qk output after softmax (mode 3); c the same, raw
    # scores (mode 0); d softcap 0.8 without a mask, its scores (mode 2).
    qb, kb, vb = (rng.standard_normal((1, 2, 2, 4)).astype(np.float32) for _ in range(3))
    pk, pv = (rng.standard_normal((1, 2, 3, 4)).astype(np.float32) for _ in range(2))
    yb, qkb = reference(qb, kb, vb, causal=True, past=(pk, pv), mode=3)
    _, qkc = reference(qb, kb, vb, causal=True, past=(pk, pv), mode=0)
    yd, qkd = reference(qa, ka, va, softcap=0.8, mode=2)
    nodes.append(helper.make_node("Attention", ["qa", "ka", "va", "mask"], ["ya", "", "", "qk_a"], name="softcap",
                                  softcap=1.5))
    nodes.append(helper.make_node("Attention", ["qb", "kb", "vb", "", "pk", "pv"], ["yb", "present_kb", "present_vb", "qk_b"],
                                  name="causal_past", is_causal=1, qk_matmul_output_mode=3))
    nodes.append(helper.make_node("Attention", ["qb", "kb", "vb", "", "pk", "pv"], ["yc", "present_kc", "present_vc", "qk_c"],
                                  name="causal_past_scores", is_causal=1))
    nodes.append(helper.make_node("Attention", ["qa", "ka", "va"], ["yd", "", "", "qk_d"], name="softcap_scores",
                                  softcap=0.8, qk_matmul_output_mode=2))
    # e (Attention-24): nonpad_kv_seqlen, batch 0 attending to its first 3 of 5 keys, batch 1 to all.
    qe = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)
    ke, ve = (rng.standard_normal((2, 2, 5, 4)).astype(np.float32) for _ in range(2))
    lengths = np.array([3, 5], np.int64)
    pad_mask = np.arange(5)[None, None, None, :] < lengths[:, None, None, None]
    ye, _ = reference(qe, ke, ve, mask=pad_mask)
    nodes.append(helper.make_node("Attention", ["qe", "ke", "ve", "", "", "", "lengths"], ["ye"], name="nonpad"))
    inputs = [("qa", qa), ("ka", ka), ("va", va), ("mask", mask), ("qb", qb), ("kb", kb), ("vb", vb), ("pk", pk),
              ("pv", pv), ("qe", qe), ("ke", ke), ("ve", ve), ("lengths", lengths)]
    present = [np.concatenate([pk, kb], 2), np.concatenate([pv, vb], 2)]
    expected = [("ya", ya), ("qk_a", qka), ("yb", yb), ("present_kb", present[0]), ("present_vb", present[1]),
                ("qk_b", qkb), ("yc", yb), ("present_kc", present[0]), ("present_vc", present[1]), ("qk_c", qkc),
                ("yd", yd), ("qk_d", qkd), ("ye", ye)]
    kinds = {np.float32: F, np.bool_: TensorProto.BOOL, np.int64: TensorProto.INT64}
    graph = helper.make_graph(
        nodes, "attention_extras",
        [helper.make_tensor_value_info(k, kinds[a.dtype.type], list(a.shape)) for k, a in inputs],
        [helper.make_tensor_value_info(k, F, list(e.shape)) for k, e in expected])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 10
    save("attention_extras", model, inputs, [], check=False)
    subprocess.run(["node", ort_run, "attention_extras"], check=True)
    for i, (name, e) in enumerate(expected):
        path = f"attention_extras/test_data_set_0/output_{i}.pb"
        got = numpy_helper.to_array(onnx.load_tensor(path))
        if name == "ya":  # softcap with a mask: ONNX Runtime's order is not the operator's
            print(f"attention_extras ya: ONNX Runtime (softcap before the mask) differs from the operator by "
                  f"{np.abs(got - e).max():.3g}; expected output written from numpy float64")
            with open(path, "wb") as f:
                f.write(numpy_helper.from_array(e.astype(np.float32), name).SerializeToString())
            continue
        finite = np.isfinite(e)
        assert np.array_equal(finite, np.isfinite(got)), f"attention_extras {name}: -inf at other places"
        err = np.abs(got[finite] - e[finite]).max()
        assert err < 1e-5, f"attention_extras {name}: ONNX Runtime differs from the definition by {err}"


def deform_conv_reference(x, w, offset, bias=None, mask=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1),
                          group=1, offset_group=1):
    """numpy float64: every output position's taps sampled bilinearly (zero outside) at their
    offsets, times the mask, then the grouped convolution's sums."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    x = x.astype(np.float64)

    def sample(plane, r, q):
        if r <= -1 or r >= h or q <= -1 or q >= wd:
            return 0.0
        r0, q0 = int(np.floor(r)), int(np.floor(q))
        total = 0.0
        for rr, wr in ((r0, 1 - (r - r0)), (r0 + 1, r - r0)):
            for qq, wq in ((q0, 1 - (q - q0)), (q0 + 1, q - q0)):
                if 0 <= rr < h and 0 <= qq < wd:
                    total += wr * wq * plane[rr, qq]
        return total

    cols = np.zeros((n, c, kh * kw, oh, ow))
    per_group = c // offset_group
    for b in range(n):
        for ch in range(c):
            g = ch // per_group
            for t in range(kh * kw):
                i, j = divmod(t, kw)
                for y in range(oh):
                    for z in range(ow):
                        dy = offset[b, g * 2 * kh * kw + 2 * t, y, z]
                        dz = offset[b, g * 2 * kh * kw + 2 * t + 1, y, z]
                        v = sample(x[b, ch], y * strides[0] - pads[0] + i * dilations[0] + dy,
                                   z * strides[1] - pads[1] + j * dilations[1] + dz)
                        if mask is not None:
                            v *= mask[b, g * kh * kw + t, y, z]
                        cols[b, ch, t, y, z] = v
    out = np.zeros((n, m, oh, ow))
    mg = m // group
    for k in range(group):
        cg_cols = cols[:, k * cg:(k + 1) * cg].reshape(n, cg * kh * kw, oh * ow)
        wk = w[k * mg:(k + 1) * mg].reshape(mg, cg * kh * kw).astype(np.float64)
        out[:, k * mg:(k + 1) * mg] = np.einsum("mk,nkp->nmp", wk, cg_cols).reshape(n, mg, oh, ow)
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return out


def deform_conv(ort_run):
    """DeformConv-19, two nodes in one model: groups 2, offset groups 2, stride 2, pads, a mask
    and a bias, offsets reaching outside the image; and a dilated 3 x 3 without a mask on a
    constant weight. Checked against numpy float64 when made."""
    rng = np.random.default_rng(1919)
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    wa = rng.standard_normal((6, 2, 3, 3)).astype(np.float32) * 0.3
    ba = rng.standard_normal(6).astype(np.float32)
    offa = (rng.standard_normal((2, 2 * 2 * 9, 4, 3)) * 1.5).astype(np.float32)
    maska = rng.random((2, 2 * 9, 4, 3)).astype(np.float32)
    ya = deform_conv_reference(x, wa, offa, ba, maska, strides=(2, 2), pads=(1, 1, 1, 0), group=2, offset_group=2)
    wb = rng.standard_normal((3, 4, 3, 2)).astype(np.float32) * 0.3
    offb = (rng.standard_normal((2, 2 * 6, 3, 4)) * 0.7).astype(np.float32)
    yb = deform_conv_reference(x, wb, offb, dilations=(2, 2))
    nodes = [helper.make_node("DeformConv", ["x", "wa", "offa", "ba", "maska"], ["ya"], name="grouped_masked",
                              strides=[2, 2], pads=[1, 1, 1, 0], group=2, offset_group=2),
             helper.make_node("DeformConv", ["x", "wb", "offb"], ["yb"], name="dilated", dilations=[2, 2],
                              kernel_shape=[3, 2])]
    inputs = [("x", x), ("wa", wa), ("offa", offa), ("maska", maska), ("offb", offb)]
    graph = helper.make_graph(
        nodes, "deform_conv", [helper.make_tensor_value_info(k, F, list(a.shape)) for k, a in inputs],
        [helper.make_tensor_value_info("ya", F, list(ya.shape)), helper.make_tensor_value_info("yb", F, list(yb.shape))],
        [numpy_helper.from_array(ba, "ba"), numpy_helper.from_array(wb, "wb")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    save("deform_conv", model, inputs, [], check=False)
    subprocess.run(["node", ort_run, "deform_conv"], check=True)
    for i, e in enumerate((ya, yb)):
        got = numpy_helper.to_array(onnx.load_tensor(f"deform_conv/test_data_set_0/output_{i}.pb"))
        err = np.abs(got - e).max()
        assert err < 1e-4, f"deform_conv output {i}: ONNX Runtime differs from the definition by {err}"


def float8_casts(ort_run):
    """Cast-19 float -> each 8-bit float -> float, saturating and not (saturate = 0), CastLike
    into float8e4m3fn, and QuantizeLinear -> DequantizeLinear-19 through each, on the values where the formats differ: zeros, subnormals and the ties
    between them, the largest finite values and the ties beyond, infinities, NaN. ONNX Runtime's
    outputs (the round trip gives every float8 value exactly, so the bits are compared)."""
    rng = np.random.default_rng(819)
    special = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2.0 ** -6, 2.0 ** -7, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11,
               2.0 ** -14, 2.0 ** -16, 2.0 ** -17, 1.5 * 2.0 ** -17, 2.0 ** -18, 240, 241, 248, 256, 447, 448, 449,
               464, 465, 479, 500, 1e4, 57344, 61439, 65536, 1e6, -1e6, np.inf, -np.inf, np.nan, -448, -464, -61439]
    # Left out: E4M3FN's 480 and E5M2's [61440, 65536) without saturation, where ONNX Runtime
    # 1.30 and the operator text disagree (docs/conformance.md): onnxc follows the text (NaN for
    # 480, infinity for what rounds to 65536); ONNX Runtime gives 448 and NaN.
    x = np.concatenate([np.array(special, np.float64), rng.standard_normal(24) * 50]).astype(np.float32)
    kinds = [(17, "e4m3fn"), (18, "e4m3fnuz"), (19, "e5m2"), (20, "e5m2fnuz")]  # onnx 1.12 does not name them
    nodes, outputs = [], []
    for code, name in kinds:
        for saturate in (1, 0):
            tag = f"{name}_{'sat' if saturate else 'nosat'}"
            nodes += [helper.make_node("Cast", ["x"], [f"f8_{tag}"], name=f"to_{tag}", to=code, saturate=saturate),
                      helper.make_node("Cast", [f"f8_{tag}"], [tag], name=f"from_{tag}", to=F)]
            outputs.append(tag)
    like = numpy_helper.from_array(np.zeros(1, np.uint8), "like_e4m3fn")
    like.data_type = 17
    nodes += [helper.make_node("CastLike", ["x", "like_e4m3fn"], ["f8_like"], name="castlike"),
              helper.make_node("Cast", ["f8_like"], ["like"], name="from_like", to=F)]
    outputs.append("like")
    # QuantizeLinear -> DequantizeLinear through each 8-bit float, per tensor with a zero point
    # of 0, saturating; and E4M3FN without saturating.
    inits = [like, numpy_helper.from_array(np.array(0.25, np.float32), "q_scale")]
    for code, name in kinds:
        zero = TensorProto(name=f"zero_{name}", data_type=code, dims=[], raw_data=b"\x00")
        inits.append(zero)
        for saturate in ((1, 0) if name == "e4m3fn" else (1,)):
            tag = f"qdq_{name}" + ("" if saturate else "_nosat")
            nodes += [helper.make_node("QuantizeLinear", ["x", "q_scale", zero.name], [f"q_{tag}"], name=f"q_{tag}",
                                       saturate=saturate),
                      helper.make_node("DequantizeLinear", [f"q_{tag}", "q_scale", zero.name], [tag], name=f"dq_{tag}")]
            outputs.append(tag)
    graph = helper.make_graph(nodes, "float8_casts", [helper.make_tensor_value_info("x", F, list(x.shape))],
                              [helper.make_tensor_value_info(o, F, list(x.shape)) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    save("float8_casts", model, [("x", x)], [], check=False)
    subprocess.run(["node", ort_run, "float8_casts"], check=True)


if __name__ == "__main__":
    swish(sys.argv[1])
    attention(sys.argv[1])
    attention_extras(sys.argv[1])
    rotary(sys.argv[1])
    center_crop_pad(sys.argv[1])
    affine_grid(sys.argv[1])
    col2im(sys.argv[1])
    lp_normalization(sys.argv[1])
    tensor_scatter(sys.argv[1])
    int4_weights(sys.argv[1])
    opset26(sys.argv[1])
    float8_casts(sys.argv[1])
    deform_conv(sys.argv[1])
    newest_versions(sys.argv[1])
    newest_versions(sys.argv[1], 18, "versions_at_18")
    newest_versions(sys.argv[1], 21, "versions_at_21")
