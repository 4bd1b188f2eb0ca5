#!/usr/bin/python3
"""Post-training static quantization of a float CNN into a QDQ model, the way ONNX Runtime's
quantizer lays it out: every Conv reads DQ(uint8 activation), DQ(int8 weight, symmetric, per
output channel) and DQ(int32 bias, scale x_scale * w_scale); its output (after its Relu, when
one follows) is wrapped in Q -> DQ. Other operators stay in float and read the dequantized
values. Scales come from min/max calibration with a numpy forward pass.

    quantize.py SRC_DIR OUT_DIR [--calibration N]

SRC_DIR is a float model folder (model.onnx, test_data_set_0); OUT_DIR gets the QDQ model and two
data sets (SRC's input and a random one) whose outputs are placeholders: fill them with ONNX
Runtime's (node build-quant/ort/ort-run.mjs OUT_DIR). Besides the model's outputs, the last
quantized activation is a graph output, so the integer part is compared exactly.

Quantized operators: Conv and Gemm (int8 weights per output channel, int32 bias), Add, Pad,
AveragePool and GlobalAveragePool (their outputs quantized, a Relu that follows folded into the
quantization). BatchNormalization after a Gemm or Conv is folded into its weights first, as
quantizers do. Relu, Flatten and Softmax run in float on dequantized values where they remain."""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402
from qdq import activation_qparams, conv2d, quantize_weight, weight_qparams  # noqa: E402


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def run_node(node, ins):
    """The float reference of one node on numpy arrays."""
    a = attrs(node)
    op = node.op_type
    if op == "Conv":
        strides = a.get("strides", [1, 1])
        if a.get("dilations", [1, 1]) != [1, 1] or strides[0] != strides[1]:
            sys.exit(f"{node.name}: only square strides and no dilation are supported")
        b = ins[2] if len(ins) > 2 else np.zeros(ins[1].shape[0], np.float32)
        p = a.get("pads", [0, 0, 0, 0])
        return conv2d(ins[0], ins[1], b, [p[0], p[1], p[2], p[3]], strides[0], a.get("group", 1))
    if op == "Relu":
        return np.maximum(ins[0], 0)
    if op == "Add":
        return ins[0] + ins[1]
    if op == "Constant":
        return numpy_helper.to_array(a["value"])
    if op == "Pad":
        if a.get("mode", b"constant") != b"constant" or (len(ins) > 2 and ins[2] is not None and ins[2] != 0):
            sys.exit(f"{node.name}: only zero constant padding is supported")
        p = ins[1].astype(np.int64).reshape(2, -1)
        return np.pad(ins[0], list(zip(p[0], p[1])))
    if op == "AveragePool":
        k, s = a["kernel_shape"], a.get("strides", [1, 1])
        if any(a.get("pads", [0, 0, 0, 0])) or list(k) != list(s) or a.get("ceil_mode", 0):
            sys.exit(f"{node.name}: only non-overlapping unpadded AveragePool is supported")
        n, c, h, w = ins[0].shape
        oh, ow = h // k[0], w // k[1]
        x = ins[0][:, :, :oh * k[0], :ow * k[1]].reshape(n, c, oh, k[0], ow, k[1])
        return x.mean(axis=(3, 5))
    if op == "GlobalAveragePool":
        return ins[0].mean(axis=(2, 3), keepdims=True)
    if op == "Flatten":
        return ins[0].reshape(ins[0].shape[0], -1)
    if op == "Gemm":
        w = ins[1].T if a.get("transB", 0) else ins[1]
        return a.get("alpha", 1.0) * (ins[0] @ w) + a.get("beta", 1.0) * ins[2]
    if op == "Softmax":
        e = np.exp(ins[0] - ins[0].max(axis=a.get("axis", -1), keepdims=True))
        return e / e.sum(axis=a.get("axis", -1), keepdims=True)
    sys.exit(f"{node.name}: {op} is not supported by this script")


def fold_batchnorm(model):
    """BatchNormalization reading a Gemm (transB=1) or Conv output folded into its weights."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    kept = []
    renamed = {}
    for node in graph.node:
        if node.op_type != "BatchNormalization":
            kept.append(node)
            continue
        prev = producers.get(node.input[0])
        transposed_gemm = prev is not None and prev.op_type == "Gemm" and attrs(prev).get("transB", 0) == 1
        if prev is None or not (transposed_gemm or prev.op_type == "Conv") or len(prev.input) < 3:
            sys.exit(f"{node.name}: BatchNormalization must follow a Gemm (transB=1) or Conv with a bias")
        gamma, beta, mean, var = (numpy_helper.to_array(inits[i]) for i in node.input[1:5])
        factor = gamma / np.sqrt(var + attrs(node).get("epsilon", 1e-5))
        w, b = numpy_helper.to_array(inits[prev.input[1]]), numpy_helper.to_array(inits[prev.input[2]])
        shape = [-1] + [1] * (w.ndim - 1)
        inits[prev.input[1]].CopyFrom(numpy_helper.from_array((w * factor.reshape(shape)).astype(np.float32), prev.input[1]))
        inits[prev.input[2]].CopyFrom(numpy_helper.from_array(((b - mean) * factor + beta).astype(np.float32), prev.input[2]))
        renamed[node.output[0]] = prev.output[0]
    del graph.node[:]
    for node in kept:
        for k, name in enumerate(node.input):
            node.input[k] = renamed.get(name, name)
        graph.node.append(node)
    for o in graph.output:
        if o.name in renamed:
            sys.exit(f"BatchNormalization output {o.name} is a graph output: not supported")


def forward(graph, feeds):
    """Every tensor's float value (initializers included) for the given inputs."""
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    values.update(feeds)
    for node in graph.node:
        out = run_node(node, [values[i] for i in node.input if i])
        values[node.output[0]] = out.astype(np.float32) if out.dtype.kind == "f" else out
    return values


QUANTIZED = ("Conv", "Gemm", "Add", "Pad", "AveragePool", "GlobalAveragePool")


def activations_to_quantize(graph):
    """Inputs and outputs of the quantized operators (an output's following Relu's output when
    that Relu is its only reader). Pads' (constant) pad amounts are not activations."""
    readers = {}
    for node in graph.node:
        for i in node.input:
            readers.setdefault(i, []).append(node)
    names = []
    for node in graph.node:
        if node.op_type not in QUANTIZED:
            continue
        out = node.output[0]
        after = readers.get(out, [])
        if len(after) == 1 and after[0].op_type == "Relu":
            out = after[0].output[0]
        names += list(node.input[:2] if node.op_type == "Add" else node.input[:1]) + [out]
    return list(dict.fromkeys(names))


class Rewriter:
    def __init__(self, values):
        self.values, self.nodes, self.inits, self.dequantized = values, [], [], {}

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qdq(self, name):
        scale, zp = activation_qparams(self.values[name])
        s, z = self.const(f"{name}/scale", scale), self.const(f"{name}/zero_point", zp)
        self.nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [f"{name}/q"]))
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{name}/q", s, z], [f"{name}/dq"]))
        self.dequantized[name] = (f"{name}/dq", scale)

    def weighted_inputs(self, node):
        """x's DQ, the int8 weight's DQ (per output channel: Conv's axis 0, a transposed Gemm's
        rows) and the int32 bias's DQ."""
        if node.op_type == "Gemm" and attrs(node).get("transB", 0) != 1:
            sys.exit(f"{node.name}: only Gemm with transB=1 is supported")
        x, x_scale = self.dequantized[node.input[0]]
        w = self.values[node.input[1]]
        w_scale = weight_qparams(w, 0)
        ins = [x, self.dq_const(f"{node.input[1]}", quantize_weight(w, w_scale, 0), w_scale,
                               np.zeros_like(w_scale, dtype=np.int8))]
        if len(node.input) > 2:
            b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
            b = np.rint(self.values[node.input[2]] / b_scale).astype(np.int32)
            ins.append(self.dq_const(node.input[2], b, b_scale, None))
        return ins

    def dq_const(self, name, q, scale, zp):
        ins = [self.const(f"{name}/q", q), self.const(f"{name}/scale", scale)]
        if zp is not None:
            ins.append(self.const(f"{name}/zero_point", zp))
        self.nodes.append(helper.make_node("DequantizeLinear", ins, [f"{name}/dq"], axis=0))
        return f"{name}/dq"


def expose_quantized_outputs(nodes, names):
    """A quantized graph output is delivered dequantized, as a quantized model's consumer reads
    it: the DQ writes the output's name and the producer a float tensor only Q reads."""
    for name in names:
        renames = {name: f"{name}/float", f"{name}/dq": name}
        for node in nodes:
            is_quantize = node.op_type == "QuantizeLinear" and node.input[0] == name
            for k, i in enumerate(node.input):
                if i == f"{name}/dq" or is_quantize and k == 0:
                    node.input[k] = renames[i]
            for k, o in enumerate(node.output):
                if o in renames:
                    node.output[k] = renames[o]


def quantize(model, calibration):
    fold_batchnorm(model)
    graph = model.graph
    values = forward(graph, {graph.input[0].name: calibration})
    targets = activations_to_quantize(graph)
    r = Rewriter(values)
    weights = {t.name for t in graph.initializer}
    for i in graph.input:
        if i.name in targets:
            r.qdq(i.name)
    for node in graph.node:
        new = onnx.NodeProto()
        new.CopyFrom(node)
        if node.op_type in ("Conv", "Gemm"):
            del new.input[:]
            new.input.extend(r.weighted_inputs(node))
        else:
            for k, name in enumerate(node.input):
                if name in r.dequantized:
                    new.input[k] = r.dequantized[name][0]
        r.nodes.append(new)
        if node.output[0] in targets:
            r.qdq(node.output[0])
    expose_quantized_outputs(r.nodes, [o.name for o in graph.output if o.name in targets])
    used = {i for n in r.nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name in used and t.name in weights]
    last = targets[-1]
    last_shape = [1] + list(values[last].shape[1:])  # calibration ran on a batch
    outputs = list(graph.output) + [helper.make_tensor_value_info(f"{last}/q", onnx.TensorProto.UINT8, last_shape)]
    g = helper.make_graph(r.nodes, graph.name + "_qdq", list(graph.input), outputs, kept + r.inits)
    q = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    q.ir_version = 7
    return q, last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--calibration", type=int, default=16, help="random inputs besides SRC's data set")
    args = ap.parse_args()
    model = onnx.load(os.path.join(args.src, "model.onnx"))
    t = onnx.TensorProto()
    with open(os.path.join(args.src, "test_data_set_0", "input_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    x0 = numpy_helper.to_array(t)
    rng = np.random.default_rng(2024)
    randoms = [rng.standard_normal(x0.shape).astype(np.float32) * x0.std() + x0.mean()
               for _ in range(args.calibration)]
    q, last = quantize(model, np.concatenate([x0] + randoms))
    name = model.graph.input[0].name
    for k, x in enumerate([x0, randoms[0]]):
        placeholders = [(o.name, np.zeros(1, np.float32)) for o in model.graph.output]
        placeholders.append((f"{last}/q", np.zeros(1, np.uint8)))
        save(args.out, q, [(name, x)], placeholders, data_set=k)


if __name__ == "__main__":
    main()
