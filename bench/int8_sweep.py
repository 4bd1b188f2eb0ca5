#!/usr/bin/env python3
"""int8 operator sweep: single-op QOperator models (float x -> QuantizeLinear -> the integer op ->
DequantizeLinear -> y, as ONNX Runtime's quantizer writes them) over the shape space of small
int8 networks, each timed single-thread with `onnxc bench` and ONNX Runtime's int8 kernels,
interleaved round by round (depthwise_sweep.py's measure), the median of the rounds' medians.
The families:
  dw    QLinearConv depthwise k3 / k5, stride 1 / 2, planes 7-112 with channels 8-256
  pw    QLinearConv 1x1 (pointwise), channels 8-256 in and out, planes 7-56
  conv  QLinearConv 3x3 with 3-64 input channels (first layers, ResNet blocks), stride 1 / 2
  mm    QLinearMatMul with a constant int8 B, M 1-64 rows, K and N 64-512
  add   QLinearAdd (com.microsoft) of two activations, 2 K - 200 K elements
Activations uint8 (asymmetric) and, for every third case, int8; weights int8 symmetric, per
output channel for the convolutions. The time includes the Q and DQ steps in both runtimes.

  /usr/bin/python3 bench/int8_sweep.py --onnxc build/onnxc --ort /work/ort --out /tmp/int8-sweep.md
      [--rounds 3] [--runs 50] [--limit N] [--only dw,pw] [--target native]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from depthwise_sweep import measure, write_summary  # noqa: E402

# (channels, plane): about the activation sizes of MobileNet-like int8 networks at 96-224 px.
DW_PLANES = [(8, 112), (16, 96), (16, 56), (32, 48), (32, 28), (64, 24), (96, 14), (128, 12), (256, 7), (144, 28)]


def cases():
    out = []
    for i, (c, hw) in enumerate(DW_PLANES):
        for k in (3, 5):
            for s in (1, 2):
                out.append(dict(kind="dw", c=c, m=c, hw=hw, k=k, s=s, signed=(i + k + s) % 3 == 0))
    for i, (c, m, hw) in enumerate([(8, 16, 56), (16, 32, 48), (32, 64, 24), (64, 64, 25), (64, 128, 12),
                                    (128, 128, 14), (128, 256, 7), (256, 256, 7), (24, 144, 28), (96, 24, 28)]):
        out.append(dict(kind="pw", c=c, m=m, hw=hw, k=1, s=1, signed=i % 3 == 2))
    for i, (c, m, hw, s) in enumerate([(3, 8, 96, 2), (3, 16, 112, 2), (16, 16, 32, 1), (32, 32, 16, 1),
                                       (16, 32, 32, 2), (64, 64, 8, 1)]):
        out.append(dict(kind="conv", c=c, m=m, hw=hw, k=3, s=s, signed=i % 3 == 2))
    for i, (rows, k, n) in enumerate([(1, 64, 64), (1, 256, 256), (1, 512, 128), (4, 128, 128), (16, 256, 256),
                                      (64, 64, 64), (64, 256, 128), (8, 512, 512)]):
        out.append(dict(kind="mm", rows=rows, k=k, n=n, signed=i % 3 == 2))
    for i, (c, hw) in enumerate([(16, 12), (32, 24), (16, 48), (64, 56)]):
        out.append(dict(kind="add", c=c, hw=hw, signed=i % 3 == 2))
    return out


def case_name(c):
    t = "s8" if c["signed"] else "u8"
    if c["kind"] in ("dw", "pw", "conv"):
        return f"{c['kind']}_c{c['c']}_m{c['m']}_{c['hw']}x{c['hw']}_k{c['k']}_s{c['s']}_{t}"
    if c["kind"] == "mm":
        return f"mm_{c['rows']}x{c['k']}x{c['n']}_{t}"
    return f"add_c{c['c']}_{c['hw']}x{c['hw']}_{t}"


def make_model(c, d):
    """The model folder (model.onnx, test_data_set_0/input_0.pb); returns the multiply-adds."""
    rng = np.random.default_rng(0)
    act = TensorProto.INT8 if c["signed"] else TensorProto.UINT8
    np_act = np.int8 if c["signed"] else np.uint8
    zp = 0 if c["signed"] else 128
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
             numpy_helper.from_array(np.array(zp, np_act), "xz"),
             numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
             numpy_helper.from_array(np.array(zp, np_act), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"])]
    domain = []
    if c["kind"] in ("dw", "pw", "conv"):
        ch, m, hw, k, s = c["c"], c["m"], c["hw"], c["k"], c["s"]
        group = ch if c["kind"] == "dw" else 1
        w = rng.integers(-127, 128, (m, ch // group, k, k)).astype(np.int8)
        inits += [numpy_helper.from_array(w, "w"),
                  numpy_helper.from_array((rng.random(m) * 0.01 + 0.002).astype(np.float32), "ws"),
                  numpy_helper.from_array(np.zeros(m, np.int8), "wz"),
                  numpy_helper.from_array(rng.integers(-2000, 2000, m).astype(np.int32), "b")]
        p = k // 2
        nodes.append(helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"],
                                      group=group, kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p]))
        x_shape = [1, ch, hw, hw]
        o = (hw + 2 * p - k) // s + 1
        y_shape = [1, m, o, o]
        macs = m * o * o * (ch // group) * k * k
    elif c["kind"] == "mm":
        rows, k, n = c["rows"], c["k"], c["n"]
        inits += [numpy_helper.from_array(rng.integers(-127, 128, (k, n)).astype(np.int8), "w"),
                  numpy_helper.from_array(np.array(0.003, np.float32), "ws"),
                  numpy_helper.from_array(np.array(0, np.int8), "wz")]
        nodes.append(helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["yq"]))
        x_shape, y_shape = [rows, k], [rows, n]
        macs = rows * k * n
    else:
        x_shape = y_shape = [1, c["c"], c["hw"], c["hw"]]
        inits += [numpy_helper.from_array(rng.integers(0 if zp else -128, 256 if zp else 128, x_shape).astype(np_act),
                                          "b"),
                  numpy_helper.from_array(np.array(0.03, np.float32), "bs")]
        nodes.append(helper.make_node("QLinearAdd", ["xq", "xs", "xz", "b", "bs", "xz", "ys", "yz"], ["yq"],
                                      domain="com.microsoft"))
        domain = [helper.make_opsetid("com.microsoft", 1)]
        macs = int(np.prod(x_shape))
    nodes.append(helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]))
    graph = helper.make_graph(nodes, case_name(c), [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)] + domain)
    model.ir_version = 8
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    x = (rng.standard_normal(x_shape) * 1.5).astype(np.float32)
    if not c["signed"]:
        x = np.abs(x)  # post-ReLU activations
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    return macs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--ort", required=True, help="folder of ort-run.mjs")
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/int8-sweep")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--limit", type=int, default=0, help="every n-th case only (a quick run)")
    ap.add_argument("--only", default="", help="families, comma-separated (dw, pw, conv, mm, add)")
    ap.add_argument("--target", default="native")
    a = ap.parse_args()
    onnxc = os.path.abspath(a.onnxc)
    grid = [c for c in cases() if not a.only or c["kind"] in a.only.split(",")]
    if a.limit > 1:
        grid = grid[::a.limit]
    rows = []
    for n, c in enumerate(grid):
        name = case_name(c)
        d = os.path.join(a.work, name)
        macs = make_model(c, d)
        row = measure(onnxc, a.ort, name, d, macs, a.runs, a.rounds, a.target, a.work)
        if row:
            rows.append(row)
            print(f"[{n + 1}/{len(grid)}] {name}: {row[2]:.1f} us, ORT {row[3]:.1f} us, ratio {row[4]:.2f}", flush=True)
    write_summary(rows, a.target, a.rounds, a.runs, a.out, worst=20)


if __name__ == "__main__":
    main()
