#!/usr/bin/env python3
"""Matrix-product sweep: single-operator Gemm / MatMul models over a grid of shapes, each timed
with onnxc (`onnxc bench`, --target native unless --target says otherwise) against ONNX Runtime
1.30 (ort-run.mjs --bench, one thread), interleaved, and the distribution of the ratios printed.

    bench/matmul_sweep.py --onnxc build/onnxc --ort /work/ort [--rounds 3] [--out /tmp/sweep.md]

Cases (the fixed seed picks the same ones every time): M in 1..512, N and K in 1..4096 with odd
sizes, Gemm with constant B (a weight: packed at compile time) with and without bias, transA and
transB, Gemm with both operands inputs, MatMul with a 3-d A and constant B, batched MatMul of two
4-d tensors (attention's Q K^T and P V) and a 3-d A times an input 2-d B (broadcast). Products
above kMaxMacs multiply-adds are left out to keep a run under an hour on a shared machine.

Needs /usr/bin/python3 (the onnx package); builds the harnesses two at a time first, then times.
"""
import argparse
import concurrent.futures
import os
import random
import re
import statistics
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import median_us, run  # noqa: E402  (bench.py's runners: same timing, same errors)

kMaxMacs = 300e6
SIZES = [1, 3, 16, 17, 64, 100, 192, 333, 512, 768, 1000, 2048, 4096]
ROWS = [1, 2, 7, 37, 64, 197, 256, 512]


def cases(count, seed):
    """(name, kind, params) for the sweep: the fixed shapes of the corpus, then a seeded sample."""
    out = [("gemm_w", dict(m=37, k=192, n=768, ta=0, tb=0, bias=1)),
           ("gemm_w", dict(m=37, k=768, n=192, ta=0, tb=0, bias=1)),
           ("matmul3_w", dict(b=37, m=1, k=192, n=576)),
           ("matmul4", dict(b=3, m=37, k=64, n=37)),
           ("matmul4", dict(b=3, m=37, k=37, n=64)),
           ("gemm_w", dict(m=1, k=1280, n=1000, ta=0, tb=1, bias=1)),
           ("gemm_w", dict(m=512, k=512, n=512, ta=0, tb=0, bias=0))]
    rng = random.Random(seed)
    kinds = ["gemm_w"] * 4 + ["gemm_w_t"] * 2 + ["gemm_in", "matmul3_w", "matmul4", "matmul_bcast"]
    while len(out) < count:
        kind = rng.choice(kinds)
        m, k, n = rng.choice(ROWS), rng.choice(SIZES), rng.choice(SIZES)
        if kind in ("matmul4", "matmul_bcast"):
            b = rng.choice([2, 4, 12])
            m = max(1, m // 4)
            if b * m * k * n > kMaxMacs:
                continue
            out.append((kind, dict(b=b, m=m, k=k, n=n)))
            continue
        if kind == "matmul3_w":
            b = rng.choice([1, 4, 37])
            if b * m * k * n > kMaxMacs:
                continue
            out.append((kind, dict(b=b, m=max(1, m // b), k=k, n=n)))
            continue
        if m * k * n > kMaxMacs:
            continue
        if kind == "gemm_w_t":
            out.append(("gemm_w", dict(m=m, k=k, n=n, ta=rng.choice([0, 1]), tb=rng.choice([0, 1]), bias=1)))
        elif kind == "gemm_in":
            out.append((kind, dict(m=m, k=k, n=n, ta=0, tb=0, bias=0)))
        else:
            out.append((kind, dict(m=m, k=k, n=n, ta=0, tb=0, bias=rng.choice([0, 1]))))
    # Products to 1-4 columns (rt::gemm_dots) and Gemm by a transposed input B, after the sample
    # so that it stays the one earlier runs drew.
    out += [("matmul4", dict(b=12, m=64, k=1000, n=2)),
            ("matmul_bcast", dict(b=4, m=64, k=512, n=2)),
            ("matmul3_w", dict(b=4, m=64, k=1000, n=1)),
            ("gemm_w", dict(m=256, k=1000, n=1, ta=0, tb=0, bias=1)),
            ("gemm_w", dict(m=64, k=4096, n=2, ta=0, tb=1, bias=1)),
            ("gemm_w", dict(m=512, k=333, n=4, ta=0, tb=0, bias=0)),
            ("gemm_in", dict(m=197, k=192, n=197, ta=0, tb=1, bias=0)),
            ("gemm_in", dict(m=37, k=768, n=64, ta=0, tb=1, bias=0)),
            ("gemm_in", dict(m=7, k=1000, n=3, ta=0, tb=1, bias=0))]
    return out


def case_name(kind, p):
    return kind + "_" + "_".join(f"{key}{value}" for key, value in p.items())


def macs(kind, p):
    return p.get("b", 1) * p["m"] * p["k"] * p["n"]


def make_model(kind, p, folder):
    """The single-node model and test_data_set_0/input_*.pb of one case."""
    rng = np.random.default_rng(0)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    m, k, n = p["m"], p["k"], p["n"]
    inits, inputs, feeds = [], [], []
    if kind in ("gemm_w", "gemm_in"):
        a_shape = [k, m] if p["ta"] else [m, k]
        b_shape = [n, k] if p["tb"] else [k, n]
        inputs.append(helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape))
        feeds.append(f(*a_shape))
        names = ["a", "b"]
        if kind == "gemm_w":
            inits.append(numpy_helper.from_array(f(*b_shape), "b"))
        else:
            inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape))
            feeds.append(f(*b_shape))
        if p["bias"]:
            inits.append(numpy_helper.from_array(f(n), "c"))
            names.append("c")
        node = helper.make_node("Gemm", names, ["y"], transA=p["ta"], transB=p["tb"])
        y_shape = [m, n]
    else:
        b = p["b"]
        if kind == "matmul3_w":
            a_shape, b_shape = [b, m, k], [k, n]
        elif kind == "matmul4":
            a_shape, b_shape = [1, b, m, k], [1, b, k, n]
        else:  # matmul_bcast
            a_shape, b_shape = [b, m, k], [k, n]
        inputs.append(helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape))
        feeds.append(f(*a_shape))
        if kind == "matmul3_w":
            inits.append(numpy_helper.from_array(f(*b_shape), "b"))
        else:
            inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape))
            feeds.append(f(*b_shape))
        node = helper.make_node("MatMul", ["a", "b"], ["y"])
        y_shape = a_shape[:-1] + [n]
    graph = helper.make_graph([node], "sweep", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for i, x in enumerate(feeds):
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"), "wb") as out:
            out.write(numpy_helper.from_array(x, inputs[i].name).SerializeToString())




def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--ort", required=True, help="folder with ort-run.mjs")
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target", default="native")
    ap.add_argument("--work", default="/tmp/matmul-sweep")
    ap.add_argument("--out", help="also write the table (markdown) here")
    ap.add_argument("--reuse", action="store_true", help="keep harnesses an earlier run built (same onnxc)")
    ap.add_argument("--only", help="run only the cases whose name matches this regular expression")
    a = ap.parse_args()
    onnxc = os.path.abspath(a.onnxc)
    todo = []
    for kind, p in cases(a.cases, a.seed):
        if a.only and not re.search(a.only, case_name(kind, p)):
            continue
        d = os.path.join(a.work, case_name(kind, p))
        make_model(kind, p, d)
        runs = int(max(5, min(50, 2e8 / max(macs(kind, p), 1))))
        todo.append((kind, p, d, runs))

    def build(item):
        kind, p, d, runs = item
        keep = os.path.join(d, "keep-" + a.target)
        if a.reuse and os.path.exists(os.path.join(keep, "harness")):
            return 0.0
        return median_us(run(["nice", onnxc, "bench", os.path.join(d, "model.onnx"), "--runs", "3", "--keep", keep,
                              "--inputs", os.path.join(d, "test_data_set_0"), "--target", a.target]))

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(build, todo))
    rows = []
    for kind, p, d, runs in todo:
        keep = os.path.join(d, "keep-" + a.target)
        inputs = sorted((f for f in os.listdir(keep) if re.fullmatch(r"in_0_\d+\.bin", f)),
                        key=lambda f: int(f[len("in_0_"):-len(".bin")]))
        ours_cmd = [os.path.join(keep, "harness"), "bench", str(runs)] + [os.path.join(keep, f) for f in inputs]
        ort_cmd = ["node", "ort-run.mjs", d, "--bench", str(runs), "--threads", "1"]
        ours, theirs = [], []
        for _ in range(a.rounds):
            theirs.append(median_us(run(ort_cmd, cwd=a.ort)))
            ours.append(median_us(run(ours_cmd)))
        us, ort_us = statistics.median(ours), statistics.median(theirs)
        rows.append((case_name(kind, p), macs(kind, p), us, ort_us, us / ort_us))
        print(f"{rows[-1][0]}: onnxc {us:.1f} us, ORT {ort_us:.1f} us, ratio {us / ort_us:.2f}", file=sys.stderr)
    ratios = sorted(r[4] for r in rows)
    lines = [f"{len(rows)} cases, --target {a.target}: ratio onnxc / ORT median {statistics.median(ratios):.2f}, "
             f"geometric mean {statistics.geometric_mean(ratios):.2f}, "
             f"{sum(r <= 1.0 for r in ratios)} at <= 1.0 ({100 * sum(r <= 1.0 for r in ratios) / len(ratios):.0f} %), "
             f"{sum(r > 1.5 for r in ratios)} above 1.5, max {ratios[-1]:.2f}", "",
             "| case | MACs | onnxc us | ORT us | ratio |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, work, us, ort_us, ratio in sorted(rows, key=lambda r: -r[4]):
        lines.append(f"| {name} | {work} | {us:.1f} | {ort_us:.1f} | {ratio:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
