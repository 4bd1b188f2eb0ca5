#!/usr/bin/python3
"""Writes docs/memory.md: onnxc's arena against the lower bounds, for every model in the
shared corpus, and checks the bound (issue #5): on every model, for the default target and for a
memory-first one, both with the default scratch policy (fit), arena <= 1.05 x peak live and
arena <= the unfused graph's tensor peak. Exit status 1 when a model misses it (or does
not compile).

Usage: tools/memory_table.py --onnxc build/onnxc [--models ../shared/models] [--check]
  --check: only check (the ctest memory.bound), docs/memory.md is not written."""
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
UNFUSED = [arg for p in ["fold-batchnorm", "fold-affine", "in-place", "simplify", "fuse-activation", "fuse-elementwise",
                         "concat-in-place", "reorder", "fit-scratch"] for arg in ("--disable-pass", p)]
# A memory-first target: one depthwise slot (no thread pool), the plane kernel for QLinearConv.
MEMORY_FIRST = ["--target", "cortex-m4"]
# A SIMD target, whose kernels (rt::conv_direct_packed) differ: checked, not shown.
SIMD = ["--target", "native"]
# The kernels' fastest scratch, even where it grows the arena (shown, not checked).
SPEED = ["--scratch", "speed"]
# arena / peak live the plan may reach.
MAX_RATIO = 1.05
# The section of docs/memory.md below the table that is measured by hand and kept.
LATENCY_HEADING = "## What fitting costs"


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


def bound_misses(name, plan, unfused_peak):
    """Why `plan` (a --report-json) misses the bound, or []."""
    arena, peak = plan["arena_bytes"], plan["peak_live_bytes"]
    misses = []
    if arena > MAX_RATIO * peak:
        misses.append(f"{name}: arena {arena:,} > {MAX_RATIO} x peak live {peak:,}")
    if arena > unfused_peak:
        misses.append(f"{name}: arena {arena:,} > the unfused tensor peak {unfused_peak:,}")
    return misses


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "shared", "models"))
    ap.add_argument("--out", default=os.path.join(here, "..", "docs", "memory.md"))
    ap.add_argument("--check", action="store_true", help="only check the bound; write nothing")
    args = ap.parse_args()
    if not os.path.isdir(args.models):
        print(f"no model corpus at {args.models}: skipped")
        return 77
    rows, misses = [], []
    for name in sorted(os.listdir(args.models)):
        d = os.path.join(args.models, name)
        if not os.path.exists(os.path.join(d, "model.onnx")):
            continue
        fused, err = report(args.onnxc, d, [])
        if fused is None:
            rows.append(f"| {name} | not compiled: {err[:90]} | | | | | | | | |")
            misses.append(f"{name}: not compiled: {err}")
            continue
        plain, err = report(args.onnxc, d, UNFUSED)
        speed, _ = report(args.onnxc, d, SPEED)
        small, _ = report(args.onnxc, d, MEMORY_FIRST)
        simd, _ = report(args.onnxc, d, SIMD)
        if plain is None or speed is None or small is None or simd is None:
            misses.append(f"{name}: a plan does not compile: {err}")
            continue
        unfused_peak = plain["peak_tensor_bytes"]
        model_misses = bound_misses(name + " (default target)", fused, unfused_peak)
        model_misses += bound_misses(name + " (cortex-m4)", small, unfused_peak)
        model_misses += bound_misses(name + " (native)", simd, unfused_peak)
        misses += model_misses
        a, peak, w = fused["arena_bytes"], fused["peak_live_bytes"], fused["weights_bytes"]
        rows.append(f"| {name} | {a:,} | {peak:,} | {a / peak if peak else 1:.3f} | {speed['arena_bytes']:,} | "
                    f"{small['arena_bytes']:,} | {fused['peak_tensor_bytes']:,} | {unfused_peak:,} | "
                    f"{'no' if model_misses else 'yes'} | {w:,} |")
    for m in misses:
        print("bound missed:", m, file=sys.stderr)
    if args.check:
        print(f"{len(rows)} models, {len(misses)} bound misses")
        return 1 if misses else 0
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
        "  writing its own tensor: no fusion (fold-batchnorm, fold-affine, fuse-activation, fuse-elementwise),",
        "  no simplify, no in-place execution (Concat included), no reorder, no fit-scratch.",
        "  Kernel scratch is not counted (it depends on the kernels, not the graph); at a",
        "  control-flow step the largest such peak of its bodies is added. `tensor peak` is the same",
        "  count for onnxc's plan (tensors only, after all passes).",
        "",
        "Graph inputs and outputs live in the caller's buffers and are counted in neither. The",
        "intermediates of a group fuse-elementwise computes in one loop never exist as tensors, so",
        "they are in no plan.",
        "",
        "The bound (`bound met`): arena <= 1.05 x peak live and arena <= unfused peak, with the",
        "default `--scratch fit`: for the default target (`arena bytes`: generic; native and the",
        "other SIMD targets plan the same arena; native is checked too) and for a memory-first",
        "one (`arena, cortex-m4`).",
        "`tools/memory_table.py --check` (ctest `memory.bound`) fails when a model misses it.",
        "",
        "## Kernel scratch: `--scratch fit` and `--scratch speed`",
        "",
        "Some kernels need scratch memory: a Conv computed as a matrix product builds its im2col",
        "matrix block by block, a depthwise Conv copies padded input rows (one slot per task of a",
        "parallel-for: 4 on host targets, 1 on memory-first ones), an LSTM keeps its state and",
        "gates. The planner places the tensors first and each step's scratch in the gaps they leave",
        "at that step (`room`); pass fit-scratch sizes those kernels per layer, and `--report`",
        "shows each step's scratch, its room and the choice. With `--scratch fit` (the default on",
        "every target) nothing grows the arena:",
        "",
        "- im2col: the fastest block when it fits, else the widest whole number of register-tile",
        "  rows (96 columns); below that, on SIMD targets, rt::conv_direct_packed (no scratch:",
        "  output channels in the vector lanes, each input value broadcast where it is), without",
        "  SIMD the widest multiple of 4 columns, else rt::conv_direct (no scratch). On SIMD",
        "  targets a Conv of at most 64 output positions takes rt::conv_direct_packed under",
        "  either policy: the matrix product's tiles run mostly empty there;",
        "- on AVX-512 (targets avx512, avx512-vnni, and native where onnxc runs on such a machine:",
        "  Target::shifted_input_product), a stride-1 Conv whose output rows are as wide as the",
        "  input's reads its input in place (rt::conv_shifted, no scratch) from K = 192 up, and below",
        "  that where the padded copy would get no block (resnet8-cifar's second 16-channel 32 x 32",
        "  layer, 0 B free); a stride-2 3 x 3 one with K >= 144 gets the scratch of its input's four",
        "  phase planes (rt::conv_phase_gemm, the size of its input) where they fit, else the choices",
        "  above;",
        "- depthwise: as many slots as fit, else rt::conv_depthwise_in_place (no scratch);",
        "- LSTM (float, with Y and Y_c produced): when its gate buffers do not fit, the state lives",
        "  in Y and Y_c and the gates are computed 16 hidden units at a time in a 256-byte stack",
        "  buffer (rt::lstm_in_outputs). This one is as fast, so both policies do it.",
        "",
        "`--scratch speed` (`arena, --scratch speed`) takes no slower kernel to save memory: an",
        "im2col block is the widest run of whole register-tile rows that fits, or one such row",
        "where none does (the arena grows), and depthwise Convs keep 4 slots. With the scratch-free",
        "kernels fitting costs at most ~8 % on the shared models (below), so fit is the default",
        "everywhere and speed the option.",
        "",
        "Regenerate: `tools/memory_table.py --onnxc build/onnxc` (models from `../shared/models`).",
        "",
        "| model | arena bytes | peak live | ratio | arena, --scratch speed | arena, cortex-m4 | tensor peak "
        "| unfused peak | bound met | weight bytes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: |",
    ] + rows) + "\n"
    old = open(args.out).read() if os.path.exists(args.out) else ""
    if LATENCY_HEADING in old:  # measured by hand (bench), kept when the table is regenerated
        text += "\n" + old[old.index(LATENCY_HEADING):]
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
