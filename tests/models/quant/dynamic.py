#!/usr/bin/python3
"""Dynamic quantization, laid out as ONNX Runtime's `quantize_dynamic` writes it: weights int8
at conversion time, activations quantized at run time by DynamicQuantizeLinear (uint8, scale and
zero point from each tensor's own range), the integer product in MatMulInteger / ConvInteger, then
Cast to float and a Mul by x_scale * w_scale (the bias stays a float Add). No calibration: this is
the style transformers and recurrent models are usually quantized in. The expected outputs come
from ONNX Runtime running the quantized model.

    dynamic.py SRC_DIR OUT_DIR [--per-channel] [--ops MatMul,Conv]

SRC_DIR is a float model folder (model.onnx, test_data_set_0/input_*.pb). A MatMul whose second
input is a 2-D initializer and a Conv with an initializer weight are quantized (the --ops
subset); every other node is kept as it is."""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from testdata import save  # noqa: E402
from styles import constants_to_initializers, load_pb, opset, ort_run  # noqa: E402
from qdq import quantize_weight, weight_qparams  # noqa: E402


def quantize(model, ops, per_channel):
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes, new_inits = [], []

    def const(name, value):
        new_inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    dynamic_q = {}  # float tensor -> its DynamicQuantizeLinear outputs, shared by every reader

    def quantized_input(x):
        if x not in dynamic_q:
            outs = [f"{x}/quantized", f"{x}/scale", f"{x}/zero_point"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], outs, name=f"{x}/DynamicQuantizeLinear"))
            dynamic_q[x] = outs
        return dynamic_q[x]

    count = 0
    for node in g.node:
        w = inits.get(node.input[1]) if len(node.input) > 1 else None
        kind = node.op_type
        if kind not in ops or w is None or (kind == "MatMul" and w.ndim != 2) or \
                (kind == "Conv" and w.ndim < 3):
            nodes.append(node)
            continue
        count += 1
        axis = (1 if kind == "MatMul" else 0) if per_channel else None
        w_scale = weight_qparams(w, axis)
        w_q = quantize_weight(w, w_scale, axis)
        w_zp = np.int8(0)  # symmetric; one zero point even per channel (ORT's ConvInteger takes no other)
        xq, xs, xz = quantized_input(node.input[0])
        base = node.name or node.output[0]
        wq = const(f"{node.input[1]}/quantized", w_q)
        wz = const(f"{node.input[1]}/zero_point", w_zp)
        acc = f"{base}/integer"
        if kind == "MatMul":
            nodes.append(helper.make_node("MatMulInteger", [xq, wq, xz, wz], [acc], name=f"{base}/MatMulInteger"))
            scale_shape = w_scale
        else:
            kept = {a.name: a for a in node.attribute}
            nodes.append(helper.make_node("ConvInteger", [xq, wq, xz, wz], [acc], name=f"{base}/ConvInteger"))
            nodes[-1].attribute.extend(kept.values())
            scale_shape = np.reshape(w_scale, (-1,) + (1,) * (w.ndim - 2)) if axis is not None else w_scale
        scale = f"{base}/scale"
        nodes.append(helper.make_node("Mul", [xs, const(f"{node.input[1]}/scale", scale_shape)], [scale],
                                      name=f"{base}/scale_mul"))
        as_float = f"{base}/integer_float"
        nodes.append(helper.make_node("Cast", [acc], [as_float], to=onnx.TensorProto.FLOAT, name=f"{base}/Cast"))
        if kind == "Conv" and len(node.input) > 2 and node.input[2]:
            product = f"{base}/product"
            nodes.append(helper.make_node("Mul", [as_float, scale], [product], name=f"{base}/Mul"))
            b = inits[node.input[2]]
            bias = const(f"{node.input[2]}/reshaped", b.reshape((-1,) + (1,) * (w.ndim - 2)))
            nodes.append(helper.make_node("Add", [product, bias], [node.output[0]], name=f"{base}/bias"))
        else:
            nodes.append(helper.make_node("Mul", [as_float, scale], [node.output[0]], name=f"{base}/Mul"))
    used = {i for n in nodes for i in n.input}
    kept = [t for t in g.initializer if t.name in used]
    graph = helper.make_graph(nodes, f"{g.name}_dynamic", list(g.input), list(g.output), kept + new_inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", max(13, opset(model)))])
    m.ir_version = max(7, model.ir_version)
    return m, count


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--per-channel", action="store_true", help="weights per output channel (default: per tensor)")
    ap.add_argument("--ops", default="MatMul,Conv")
    args = ap.parse_args()
    model = onnx.load(os.path.join(args.src, "model.onnx"))
    constants_to_initializers(model)
    data = os.path.join(args.src, "test_data_set_0")
    inputs = []
    for k, i in enumerate(model.graph.input):
        path = os.path.join(data, f"input_{k}.pb")
        if os.path.exists(path):
            inputs.append((i.name, load_pb(path)))
    q, count = quantize(model, set(args.ops.split(",")), args.per_channel)
    if count == 0:
        sys.exit(f"{args.src}: nothing to quantize (no MatMul/Conv with an initializer weight)")
    if opset(q) <= onnx.defs.onnx_opset_version():
        onnx.checker.check_model(q)
    expected = ort_run(q, inputs)
    shutil.rmtree(args.out, ignore_errors=True)
    save(args.out, q, inputs, [(o.name, v) for o, v in zip(q.graph.output, expected)], check=False)
    print(f"{args.out}: {count} quantized nodes, {len(q.graph.node)} nodes")


if __name__ == "__main__":
    main()
