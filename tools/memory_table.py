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
# The "unfused" baseline: every pass that rewrites the graph, shares buffers, reorders it or sizes
# scratch off, so each node of the file (after constant folding) writes its own tensor, in file
# order. Its peak counts tensors only (peak_tensor_bytes): kernel scratch is our kernels' choice,
# not the graph's.
UNFUSED = [arg for p in ["fold-batchnorm", "in-place", "simplify", "fuse-activation", "fuse-elementwise",
                         "concat-in-place", "reorder", "im2col-blocks"] for arg in ("--disable-pass", p)]
# A memory-first target: convolutions keep the direct kernel rather than grow the arena.
MEMORY_FIRST = ["--target", "cortex-m4"]


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
            rows.append(f"| {name} | not compiled: {err[:90]} | | | | | | | |")
            continue
        plain, _ = report(args.onnxc, d, UNFUSED)
        small, _ = report(args.onnxc, d, MEMORY_FIRST)
        a, peak, w = fused["arena_bytes"], fused["peak_live_bytes"], fused["weights_bytes"]
        tensors, unfused_peak = fused["peak_tensor_bytes"], plain["peak_tensor_bytes"] if plain else 0
        m4 = f"{small['arena_bytes']:,}" if small else "?"
        rows.append(f"| {name} | {a:,} | {peak:,} | {a / peak if peak else 1:.3f} | {m4} | {tensors:,} | "
                    f"{unfused_peak:,} | {'yes' if tensors <= unfused_peak else 'no'} | {w:,} |")
    text = "\n".join([
        "# Memory plan",
        "",
        "Arena bytes onnxc plans for each model of the shared corpus, against two references:",
        "",
        "- `peak live`: the largest sum of tensor and kernel-scratch sizes live at one step of the",
        "  order onnxc runs the graph in, after all its passes. No plan of that order and those",
        "  kernels can use less: ratio = arena / peak live.",
        "- `unfused peak`: what the graph as written needs. The largest sum of tensor sizes live at",
        "  one step when the model file's nodes (after constant folding) run in file order, each",
        "  writing its own tensor: no fusion (fold-batchnorm, fuse-activation, fuse-elementwise),",
        "  no simplify, no in-place execution (Concat included), no reorder, no im2col-blocks.",
        "  Kernel scratch is not counted (it depends on the kernels, not the graph); at a",
        "  control-flow step the largest such peak of its bodies is added. `tensor peak` is the same",
        "  count for onnxc's plan (tensors only, after all passes): the last-but-one column compares",
        "  the two, what fusion, in-place execution and reordering save. onnxc's arena also holds the",
        "  kernels' scratch, so it can exceed the unfused peak.",
        "",
        "Graph inputs and outputs live in the caller's buffers and are counted in neither. The",
        "intermediates of a group fuse-elementwise computes in one loop never exist as tensors, so",
        "they are in no plan.",
        "",
        "The default target (generic; native and the other SIMD targets plan the same) sizes each",
        "convolution's im2col block from the room the plan leaves at its step (pass im2col-blocks) and,",
        "when not even one row of register tiles fits, takes the smallest block: the arena grows a",
        "little and the convolution stays on the fast kernel. `arena, cortex-m4` is the plan for a",
        "memory-first target, which computes such a convolution with the direct kernel instead.",
        "",
        "Regenerate: `tools/memory_table.py --onnxc build/onnxc` (models from `../shared/models`).",
        "",
        "| model | arena bytes | peak live | ratio | arena, cortex-m4 | tensor peak | unfused peak "
        "| tensor peak <= unfused peak | weight bytes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |",
    ] + rows) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
