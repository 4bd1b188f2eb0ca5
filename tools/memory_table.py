#!/usr/bin/python3
"""Writes docs/memory.md: onnxc's arena against the lower bounds, for every model in the
shared corpus. Usage: tools/memory_table.py --onnxc build/onnxc [--models ../shared/models]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


# Values some models need bound at compile time (see their ctests).
MODEL_FLAGS = {"silero-vad-v5": ["--constant", "sr=16000"]}
# Everything that rewrites the graph or shares buffers, off: the "unfused" baseline.
UNFUSED = ["--disable-pass", "fold-batchnorm", "--disable-pass", "in-place", "--disable-pass", "simplify",
           "--disable-pass", "fuse-activation"]


def report(onnxc, model_dir, extra):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [onnxc, os.path.join(model_dir, "model.onnx"), "-o", os.path.join(tmp, "m.cpp"), "--report-json", out]
        info = json.load(open(os.path.join(model_dir, "info.json")))
        for name, dims in info.get("inputs", {}).items():
            if any(not isinstance(d, int) for d in dims):
                continue
            cmd += ["--shape", f"{name}={'x'.join(str(d) for d in dims)}"]
        cmd += MODEL_FLAGS.get(os.path.basename(os.path.normpath(model_dir)), [])
        p = subprocess.run(cmd + extra, capture_output=True, text=True)
        if p.returncode != 0:
            return None, (p.stderr.strip().splitlines() or ["?"])[0]
        return json.load(open(out)), None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "shared", "models"))
    ap.add_argument("--out", default=os.path.join(here, "..", "docs", "memory.md"))
    args = ap.parse_args()
    rows = []
    for name in sorted(os.listdir(args.models)):
        d = os.path.join(args.models, name)
        if not os.path.exists(os.path.join(d, "model.onnx")):
            continue
        fused, err = report(args.onnxc, d, [])
        if fused is None:
            rows.append(f"| {name} | not compiled: {err[:90]} | | | | | |")
            continue
        plain, _ = report(args.onnxc, d, UNFUSED)
        a, peak, w = fused["arena_bytes"], fused["peak_live_bytes"], fused["weights_bytes"]
        unfused_peak = plain["peak_live_bytes"] if plain else 0
        rows.append(f"| {name} | {a:,} | {peak:,} | {a / peak if peak else 1:.3f} | {unfused_peak:,} | "
                    f"{'yes' if a <= unfused_peak else 'no'} | {w:,} |")
    text = "\n".join([
        "# Memory plan",
        "",
        "Arena bytes onnxc plans for each model of the shared corpus, against two lower bounds:",
        "`peak live` is the largest sum of tensor sizes live at one step of the chosen order (no",
        "plan of that order can use less; ratio = arena / peak live), and `unfused peak` is the same",
        "bound for the graph with fusion and in-place execution off, in file order.",
        "Graph inputs and outputs live in the caller's buffers and are not counted.",
        "",
        "Regenerate: `tools/memory_table.py --onnxc build/onnxc` (models from `../shared/models`).",
        "",
        "| model | arena bytes | peak live | ratio | unfused peak | arena <= unfused peak | weight bytes |",
        "| --- | ---: | ---: | ---: | ---: | :---: | ---: |",
    ] + rows) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
