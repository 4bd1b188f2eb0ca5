#!/usr/bin/python3
"""Convolution sweep against ONNX Runtime: grouped, small-channel first layers and 1-d.

Generates single-Conv ONNX models over a grid (group widths 1 to 120, channels up to 1024,
planes 7 to 224, kernels 1/3/5/7, strides 1 and 2, dilation 2, 1-d rows), times each with
`onnxc bench` (built once with --keep, then its harness rerun) and ONNX Runtime single-thread
(`ort-run.mjs --bench`), interleaved round by round, and prints the median ratio per case, the
distribution of the ratios and the worst cases.

  /usr/bin/python3 bench/conv_sweep.py --onnxc build/onnxc --ort /work/ort [--rounds 3] [--runs 20]
      [--only SUBSTRING] [--target native] [--out /tmp/sweep.md] [--work /tmp/conv-sweep]
      [--family small-planes]

--family small-planes: dense and grouped (width 16) Convs onto output planes of 2 x 2 to 28 x 28
with 64 to 1024 channels, kernels 1 and 3, strides 1 and 2 (where rt::conv_channel_lanes' cost
model chooses between the output channels and the output positions in the vector lanes).

/usr/bin/python3: it needs the Debian python3-onnx and numpy.
"""
import argparse
import os
import statistics
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import median_us, run  # noqa: E402  (bench.py's runners: same timing, same errors)


def cases():
    """(name, input shape, out channels, group, kernel, stride, dilation) over the grid."""
    out = []

    def add(c, m, group, hw, k, s, d=1, one_d=False):
        shape = [1, c, hw] if one_d else [1, c, hw, hw]
        kind = "conv1d" if one_d else "conv"
        name = f"{kind}_c{c}_m{m}_g{group}_p{hw}_k{k}_s{s}" + (f"_d{d}" if d > 1 else "")
        out.append((name, shape, m, group, k, s, d))

    # Grouped: each group width over channel counts and planes that keep a layer between about
    # 1 M and 200 M MACs (the sizes of real networks: wide channels on small planes).
    for width in (2, 4, 8, 16, 24, 32, 48, 64, 120):
        for channels, plane, s in ((width * 8, 56, 2), (width * 16, 28, 1), (width * 16, 14, 2), (width * 40, 7, 1)):
            if channels > 1024 and plane < 28:
                channels = channels // 2
            if channels > 1024 or channels < 2 * width:
                continue
            add(channels, channels, channels // width, plane, 3, s)
    # kernels 1 and 5, dilation 2, channel expansion, regnet_x_400mf's own stride-2 layers
    add(256, 256, 16, 28, 1, 1)
    add(128, 256, 8, 28, 1, 1)
    add(128, 128, 8, 28, 5, 1)
    add(256, 256, 16, 14, 5, 2)
    add(128, 128, 16, 28, 3, 1, 2)
    add(64, 128, 4, 56, 3, 1)
    add(32, 32, 2, 112, 3, 2)
    add(64, 64, 4, 56, 3, 2)
    add(160, 160, 10, 28, 3, 2)
    add(400, 400, 25, 14, 3, 2)
    # Small-channel first layers on 224 x 224
    for m in (16, 32, 64):
        add(3, m, 1, 224, 3, 2)
        add(3, m, 1, 224, 7, 2)
    # 1-d (audio): 64 channels over 16000 samples, kernels 3 to 11; stride 2; grouped
    for k in (3, 5, 7, 9, 11):
        add(64, 64, 1, 16000, k, 1, one_d=True)
    add(64, 64, 1, 16000, 3, 2, one_d=True)
    add(64, 128, 1, 4000, 9, 2, one_d=True)
    add(64, 64, 4, 16000, 3, 1, one_d=True)
    add(128, 128, 8, 4000, 5, 1, one_d=True)
    # Patch embeddings (kernel == stride, no padding: ViT, Swin/ConvNeXt stems, patch merging, 1-d
    # frames) and deep products over few output columns (late 1x1 and 3x3 layers)
    for c, m, hw, k in ((3, 192, 96, 16), (3, 768, 224, 16), (3, 96, 224, 4), (3, 64, 32, 4), (256, 256, 16, 2),
                        (96, 192, 56, 2)):
        add(c, m, 1, hw, k, k)
    add(64, 128, 1, 4096, 4, 4, one_d=True)
    add(80, 256, 1, 512, 8, 8, one_d=True)
    add(512, 512, 1, 7, 1, 1)
    add(256, 256, 1, 6, 3, 1)
    return out


def small_plane_cases():
    """Output planes 2 x 2 to 28 x 28 with the channels real networks give them (many on small
    planes), kernel 1 and 3, stride 1 and 2 (the input twice the plane), dense and grouped."""
    out = []
    for plane, channels in ((2, 1024), (4, 512), (7, 400), (7, 96), (14, 160), (28, 64)):
        for k in (1, 3):
            for s in (1, 2):
                for width in (0, 16):
                    group = channels // width if width else 1
                    name = f"small_c{channels}_g{group}_p{plane * s}_k{k}_s{s}"
                    out.append((name, [1, channels, plane * s, plane * s], channels, group, k, s, 1))
    return out


def make_model(folder, shape, m, group, k, s, d):
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    rng = np.random.default_rng(21)
    c = shape[1]
    spatial = len(shape) - 2
    w = (rng.standard_normal([m, c // group] + [k] * spatial) / np.sqrt(c // group * k**spatial)).astype(np.float32)
    b = rng.standard_normal([m]).astype(np.float32) * 0.1
    pad = 0 if k == s and k > 1 else (k - 1) * d // 2  # kernel == stride: patches, no padding
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=group, kernel_shape=[k] * spatial,
                            strides=[s] * spatial, dilations=[d] * spatial, pads=[pad] * (2 * spatial))
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(folder, "model.onnx"))
    x = rng.standard_normal(shape).astype(np.float32)
    with open(os.path.join(folder, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    macs = m * (c // group) * k**spatial
    out_plane = 1
    for dim in shape[2:]:
        out_plane *= (dim + 2 * pad - d * (k - 1) - 1) // s + 1
    return macs * out_plane


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--ort", required=True, help="folder with ort-run.mjs and its node_modules")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--target", default="native")
    ap.add_argument("--only", action="append", help="cases whose name contains this (repeatable)")
    ap.add_argument("--work", default="/tmp/conv-sweep")
    ap.add_argument("--out", help="write the table (markdown) here")
    ap.add_argument("--family", choices=["default", "small-planes"], default="default")
    a = ap.parse_args()
    onnxc = os.path.abspath(a.onnxc)
    rows = []
    for name, shape, m, group, k, s, d in small_plane_cases() if a.family == "small-planes" else cases():
        if a.only and not any(o in name for o in a.only):
            continue
        folder = os.path.join(a.work, name)
        macs = make_model(folder, shape, m, group, k, s, d)
        keep = os.path.join(a.work, "keep-" + name)
        flags = ["--target", a.target]
        first = run([onnxc, "bench", os.path.join(folder, "model.onnx"), "--runs", str(a.runs), "--keep", keep,
                     "--inputs", os.path.join(folder, "test_data_set_0")] + flags)
        bench_args = ["bench", str(a.runs), os.path.join(keep, "in_0_0.bin")]
        ours, theirs = [median_us(first)], []
        ort = ["node", "ort-run.mjs", folder, "--bench", str(a.runs), "--threads", "1"]
        for i in range(a.rounds):
            theirs.append(median_us(run(ort, cwd=a.ort)))
            if i > 0:
                ours.append(median_us(run([os.path.join(keep, "harness")] + bench_args)))
        us, ort_us = statistics.median(ours), statistics.median(theirs)
        rows.append((name, macs, us, ort_us, us / ort_us))
        print(f"{name}: {macs / 1e6:.1f} M MACs, onnxc {us:.1f} us ({2 * macs / us / 1e3:.1f} GFLOP/s), "
              f"ORT {ort_us:.1f} us, ratio {us / ort_us:.2f}", flush=True)
    ratios = sorted(r[4] for r in rows)
    if not ratios:
        return
    within = sum(1 for r in ratios if r <= 1.0)
    lines = [f"Command: `/usr/bin/python3 bench/conv_sweep.py {' '.join(sys.argv[1:])}`", "",
             f"{len(ratios)} cases: {within} ({100 * within / len(ratios):.0f} %) at or below 1.0 x ORT, "
             f"{sum(1 for r in ratios if r > 1.5)} above 1.5; median ratio {statistics.median(ratios):.2f}, "
             f"geometric mean {statistics.geometric_mean(ratios):.2f}.", "",
             "| case | MACs | onnxc us | ORT us | ratio |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, macs, us, ort_us, ratio in sorted(rows, key=lambda r: -r[4]):
        lines.append(f"| {name} | {macs:,} | {us:.1f} | {ort_us:.1f} | {ratio:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
