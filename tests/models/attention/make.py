#!/usr/bin/python3
"""Writes attention models for fuse-attention (onnxc.Attention, rt::attention), with expected
outputs computed independently: numpy float64 for the hand-written graphs, torch in float64 for
the exported nn.MultiheadAttention ones.

Hand-written (opset 17): softmax(scale Q K^T + M) V spelled as exporters do, over odd and even
sequence lengths, head dims 32/64/80, with and without masks, causal, the scale on the scores, on
Q or on K^T, ranks 3 and 4, and the [B, S, H, D] layout with head split/merge Transposes.
Exported: torch 1.13's nn.MultiheadAttention (self-attention, no mask / additive float causal mask /
boolean key padding mask), sequence-first.

    cd tests/models/attention && /usr/bin/python3 make.py"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402

rng = np.random.default_rng(23)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def reference(q, kt, v, scale, mask):
    """softmax(scale q kt + mask) v in float64, the whole score matrix at once (numpy broadcasting)."""
    s = scale * (q.astype(np.float64) @ kt.astype(np.float64))
    if mask is not None:
        s = s + mask.astype(np.float64)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ v.astype(np.float64)


def handwritten(name, heads, seq, dim, mask, layout, scale_on, kv_seq=None, batch=1):
    """mask: None, "causal" (constant [S, S] of 0 / -inf), "padding" (an input [B, 1, 1, Sk]),
    "bias" (a constant [H, S, Sk], rank 3 against the rank-4 scores). layout: "bhsd" inputs
    [B, H, S, D]; "bshd" inputs [B, S, H, D] with Transposes (0, 2, 1, 3) in and out; "rank3"
    inputs [H, S, D]. scale_on: "scores" (Mul), "q" (Div of Q), "k" (Mul of K^T)."""
    kv_seq = kv_seq or seq
    n = helper.make_node
    lead = [heads] if layout == "rank3" else [batch, heads]
    if layout == "bshd":
        qx, kx, vx = f32(batch, seq, heads, dim), f32(batch, kv_seq, heads, dim), f32(batch, kv_seq, heads, dim)
        qh, kh, vh = (a.transpose(0, 2, 1, 3) for a in (qx, kx, vx))
    else:
        qx, kx, vx = f32(*lead, seq, dim), f32(*lead, kv_seq, dim), f32(*lead, kv_seq, dim)
        qh, kh, vh = qx, kx, vx
    qx *= 2.0  # scores of a few units: the softmax neither flat nor one-hot
    if layout == "bshd":
        qh = qx.transpose(0, 2, 1, 3)
    else:
        qh = qx
    inputs = [("q", qx), ("k", kx), ("v", vx)]
    inits, nodes = [], []
    q, k, v = "q", "k", "v"
    if layout == "bshd":
        for x in ("q", "k", "v"):
            nodes.append(n("Transpose", [x], [x + "h"], perm=[0, 2, 1, 3]))
        q, k, v = "qh", "kh", "vh"
    r = len(lead) + 2
    nodes.append(n("Transpose", [k], ["kt"], perm=list(range(r - 2)) + [r - 1, r - 2]))
    scale = 1.0 / np.sqrt(dim)
    inits.append(numpy_helper.from_array(np.array(np.sqrt(dim), np.float32), "sqrt_d"))
    inits.append(numpy_helper.from_array(np.array(scale, np.float32), "scale"))
    if scale_on == "q":
        nodes += [n("Div", [q, "sqrt_d"], ["qs"]), n("MatMul", ["qs", "kt"], ["s"])]
    elif scale_on == "k":
        nodes += [n("Mul", ["scale", "kt"], ["kts"]), n("MatMul", [q, "kts"], ["s"])]
    else:
        nodes += [n("MatMul", [q, "kt"], ["s0"]), n("Mul", ["s0", "scale"], ["s"])]
    m = None
    if mask == "causal":
        m = np.triu(np.full([seq, kv_seq], -np.inf, np.float32), 1 + kv_seq - seq)
        inits.append(numpy_helper.from_array(m, "mask"))
    elif mask == "padding":
        m = np.zeros([batch, 1, 1, kv_seq], np.float32)
        m[..., kv_seq - max(1, kv_seq // 4):] = -np.inf
        inputs.append(("mask", m))
    elif mask == "bias":
        m = f32(heads, seq, kv_seq)
        inits.append(numpy_helper.from_array(m, "mask"))
    scores = "s"
    if m is not None:
        nodes.append(n("Add", ["mask", "s"], ["sm"]))  # the mask first: either operand order
        scores = "sm"
    nodes.append(n("Softmax", [scores], ["p"], axis=-1))
    if layout == "bshd":
        nodes += [n("MatMul", ["p", v], ["oh"]), n("Transpose", ["oh"], ["y"], perm=[0, 2, 1, 3])]
    else:
        nodes.append(n("MatMul", ["p", v], ["y"]))
    kt_ref = np.swapaxes(kh, -1, -2)
    y = reference(qh, kt_ref, vh, np.float64(np.float32(scale)) if scale_on != "q" else 1.0 / np.float64(np.float32(np.sqrt(dim))), m)
    if layout == "bshd":
        y = y.transpose(0, 2, 1, 3)
    y = y.astype(np.float32)
    vi = lambda nm, a: helper.make_tensor_value_info(nm, TensorProto.FLOAT, list(a.shape))
    graph = helper.make_graph(nodes, name, [vi(nm, a) for nm, a in inputs], [vi("y", y)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    save(name, model, inputs, [("y", y)])


def exported_mha(name, seq, embed, heads, mask):
    """torch 1.13 nn.MultiheadAttention(embed, heads) on x [seq, 1, embed] (not batch_first: torch 1.13 exports its fast path for batch_first in eval mode not at all), exported
    at opset 17; the expected output from the same module in float64."""
    import torch
    torch.manual_seed(len(name) * 1000 + seq)
    mha = torch.nn.MultiheadAttention(embed, heads).eval()
    x = torch.randn(seq, 1, embed)
    kwargs = {}
    if mask == "causal":
        kwargs["attn_mask"] = torch.triu(torch.full((seq, seq), float("-inf")), 1)
    elif mask == "padding":
        pad = torch.zeros(1, seq, dtype=torch.bool)
        pad[:, seq - seq // 4:] = True
        kwargs["key_padding_mask"] = pad

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False, **kwargs)[0]

    w = Wrap().eval()
    os.makedirs(name, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(w, (x,), f"{name}/model.onnx", input_names=["x"], output_names=["y"], opset_version=17)
        kwargs64 = {k: (t.double() if t.dtype == torch.float32 else t) for k, t in kwargs.items()}
        y = Wrap().double()
        y.mha = mha.double()
        ref = y.mha(x.double(), x.double(), x.double(), need_weights=False, **kwargs64)[0]
        mha.float()
    model = onnx.load(f"{name}/model.onnx")
    save(name, model, [("x", x.numpy())], [("y", ref.numpy().astype(np.float32))])


if __name__ == "__main__":
    handwritten("sdpa_s37_d64_scores", 3, 37, 64, None, "bhsd", "scores")
    handwritten("sdpa_s1_d32_q", 2, 1, 32, None, "bhsd", "q", kv_seq=9)
    handwritten("sdpa_s33_d80_causal_k", 2, 33, 80, "causal", "bhsd", "k")
    handwritten("sdpa_s61_d64_padding_bshd", 2, 61, 64, "padding", "bshd", "scores", batch=2)
    handwritten("sdpa_s7_d80_bias_rank3", 3, 7, 80, "bias", "rank3", "q", kv_seq=50)
    handwritten("sdpa_s65_d32_causal_bshd", 5, 65, 32, "causal", "bshd", "q")
    exported_mha("mha_torch_s37", 37, 96, 3, None)
    exported_mha("mha_torch_s20_causal", 20, 160, 2, "causal")
    exported_mha("mha_torch_s19_padding", 19, 64, 2, "padding")
