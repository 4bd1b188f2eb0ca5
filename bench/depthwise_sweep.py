#!/usr/bin/env python3
"""Depthwise convolution sweep: single-op models (one depthwise Conv, a fused activation after
it) over kernels k x k (3, 5, 7, 9), 1 x k and k x 1, strides 1 and 2, dilations 1, 2 and 4,
channels 8-1024 and planes 7-224, each timed single-thread with `onnxc bench` and ONNX
Runtime (`node ort-run.mjs DIR --bench N --threads 1`), interleaved round by round as bench.py
does, the median of the rounds' medians. Prints the ratio distribution and the worst cases as
markdown.

  /usr/bin/python3 bench/depthwise_sweep.py --onnxc build/onnxc --ort /work/ort --out /tmp/sweep.md
      [--rounds 3] [--runs 20] [--limit N] [--target native]

Needs /usr/bin/python3 with the onnx and numpy packages (the models are written to --work).
"""
import argparse
import itertools
import os
import re
import statistics
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import median_us, run  # noqa: E402  (bench.py's runners: same timing, same errors)

# (channels, plane) pairs of about the same activation size, as the layers of MobileNets and
# EfficientNets shrink their planes while their channels grow.
PLANES = [(8, 224), (32, 112), (96, 56), (144, 28), (240, 14), (576, 7), (1024, 7), (16, 57), (72, 29), (120, 15)]
ACTIVATIONS = ["none", "relu", "relu6", "hardswish", "silu"]


def cases():
    """The grid, kept to a few hundred cases by cycling the planes and activations over the kernel
    shapes instead of taking their full product."""
    kernels = [(k, k) for k in (3, 5, 7, 9)] + [(1, k) for k in (3, 5, 7)] + [(k, 1) for k in (3, 5, 7)]
    out = []
    i = 0
    for (kh, kw), stride, dilation in itertools.product(kernels, (1, 2), (1, 2, 4)):
        if dilation > 1 and max(kh, kw) > 5:
            continue
        for j in range(3):
            c, hw = PLANES[(i + 3 * j) % len(PLANES)]
            if (max(kh, kw) - 1) * dilation + 1 > hw + 2 * ((max(kh, kw) - 1) * dilation // 2):
                continue
            out.append(dict(c=c, hw=hw, kh=kh, kw=kw, stride=stride, dilation=dilation,
                            act=ACTIVATIONS[(i + j) % len(ACTIVATIONS)]))
        i += 1
    return out


def case_name(c):
    return (f"dw_c{c['c']}_{c['hw']}x{c['hw']}_k{c['kh']}x{c['kw']}_s{c['stride']}_d{c['dilation']}_{c['act']}")


def make_model(c, d):
    """A model folder in the backend-test layout: model.onnx and test_data_set_0/input_0.pb."""
    rng = np.random.default_rng(0)
    ch, hw, kh, kw, s, dil = c["c"], c["hw"], c["kh"], c["kw"], c["stride"], c["dilation"]
    ph, pw = (kh - 1) * dil // 2, (kw - 1) * dil // 2
    w = (rng.standard_normal((ch, 1, kh, kw)) * 0.3).astype(np.float32)
    b = (rng.standard_normal(ch) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], group=ch, kernel_shape=[kh, kw],
                              strides=[s, s], dilations=[dil, dil], pads=[ph, pw, ph, pw])]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    act = c["act"]
    if act == "none":
        nodes.append(helper.make_node("Identity", ["conv"], ["y"]))
    elif act == "relu":
        nodes.append(helper.make_node("Relu", ["conv"], ["y"]))
    elif act == "relu6":
        inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                  numpy_helper.from_array(np.array(6, np.float32), "hi")]
        nodes.append(helper.make_node("Clip", ["conv", "lo", "hi"], ["y"]))
    elif act == "hardswish":
        nodes.append(helper.make_node("HardSwish", ["conv"], ["y"]))
    elif act == "silu":
        nodes += [helper.make_node("Sigmoid", ["conv"], ["sig"]), helper.make_node("Mul", ["conv", "sig"], ["y"])]
    oh = (hw + 2 * ph - dil * (kh - 1) - 1) // s + 1
    ow = (hw + 2 * pw - dil * (kw - 1) - 1) // s + 1
    graph = helper.make_graph(nodes, case_name(c), [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, ch, hw, hw])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, ch, oh, ow])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    x = rng.standard_normal((1, ch, hw, hw)).astype(np.float32)
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    return ch * oh * ow * kh * kw




def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--ort", required=True, help="folder of ort-run.mjs")
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/depthwise-sweep")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--limit", type=int, default=0, help="every n-th case only (a quick run)")
    ap.add_argument("--target", default="native")
    a = ap.parse_args()
    onnxc = os.path.abspath(a.onnxc)
    grid = cases()
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
    write_summary(rows, a.target, a.rounds, a.runs, a.out)


def measure(onnxc, ort, name, d, macs, runs, rounds, target, work):
    """(name, macs, onnxc us, ORT us, ratio) of the model folder d, or None where onnxc cannot build
    it: onnxc (its first bench, then the kept harness) and ORT alternated round by round, the
    median of the rounds' medians."""
    keep = os.path.join(work, "keep-" + name)
    model = os.path.join(d, "model.onnx")
    try:
        first = run([onnxc, "bench", model, "--runs", str(runs), "--keep", keep, "--inputs",
                     os.path.join(d, "test_data_set_0"), "--target", target])
    except RuntimeError as e:
        print(f"{name}: not measured: {str(e).strip().splitlines()[-1]}", file=sys.stderr)
        return None
    inputs = sorted(f for f in os.listdir(keep) if re.fullmatch(r"in_0_\d+\.bin", f))
    harness = [os.path.join(keep, "harness"), "bench", str(runs)] + [os.path.join(keep, f) for f in inputs]
    ours, theirs = [median_us(first)], []
    for i in range(rounds):
        theirs.append(median_us(run(["node", "ort-run.mjs", d, "--bench", str(runs), "--threads", "1"], cwd=ort)))
        if i > 0:
            ours.append(median_us(run(harness)))
    us, ort_us = statistics.median(ours), statistics.median(theirs)
    return (name, macs, us, ort_us, us / ort_us)


def write_summary(rows, target, rounds, runs, out, worst=15):
    """The ratio distribution and the worst cases as markdown, to `out` and stdout."""
    ratios = sorted(r[4] for r in rows)
    if not ratios:
        sys.exit("no case measured")
    q = lambda f: ratios[min(len(ratios) - 1, int(f * len(ratios)))]
    lines = [f"{len(rows)} cases, target {target}, {rounds} rounds of {runs} runs, one thread.", "",
             "| ratio onnxc / ORT | value |", "| --- | ---: |",
             f"| cases at or below 1.0 | {sum(r <= 1.0 for r in ratios)} of {len(ratios)} "
             f"({100.0 * sum(r <= 1.0 for r in ratios) / len(ratios):.0f} %) |",
             f"| cases above 1.5 | {sum(r > 1.5 for r in ratios)} |",
             f"| min / p25 / median / p75 / p95 / max | {ratios[0]:.2f} / {q(0.25):.2f} / {q(0.5):.2f} / "
             f"{q(0.75):.2f} / {q(0.95):.2f} / {ratios[-1]:.2f} |",
             f"| geometric mean | {float(np.exp(np.mean(np.log(ratios)))):.2f} |", "",
             "| worst cases | MMAC | onnxc us | ORT us | ratio |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, macs, us, ort_us, ratio in sorted(rows, key=lambda r: -r[4])[:worst]:
        lines.append(f"| {name} | {macs / 1e6:.2f} | {us:.1f} | {ort_us:.1f} | {ratio:.2f} |")
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
