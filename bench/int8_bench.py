#!/usr/bin/env python3
"""int8 against float: the quantized test models against the float models they were made from.

Not a test: numbers depend on the machine and its load. For each pair (int8 model in
tests/models/quant, float model in the corpus) it alternates, ROUNDS times, four timings of RUNS
runs each (median): onnxc int8, onnxc float, ONNX Runtime int8 (the QDQ model), ONNX Runtime float,
all on one thread, so the four see the same machine load; it reports the median of the per-round
medians and the arena and weight bytes of both onnxc builds (`onnxc --report` for the same
target). Prints the markdown table docs/quantization.md shows (or writes it to --out).

  bench/int8_bench.py --onnxc build/onnxc --ort DIR_WITH_ort-run.mjs [--models /work/shared/models]
                      [--rounds 5] [--runs 200] [--only kws_dscnn_int8 ...] [--out FILE]

The ORT runner is shared/tools/ort/ort-run.mjs, set up with `npm ci` in a copy of its folder.
"""
import argparse
import os
import re
import statistics
import sys

from bench import machine, median_us, model_flags, run

HERE = os.path.dirname(os.path.abspath(__file__))
QUANT_MODELS = os.path.join(HERE, "..", "tests", "models", "quant")

# int8 test model -> the corpus model tests/models/quant/quantize.py quantized.
PAIRS = {"kws_dscnn_int8": "kws-dscnn", "resnet8_int8": "resnet8-cifar", "ad_autoencoder_int8": "ad-autoencoder"}

TARGET = "native"  # what `onnxc bench` builds for (-O3 -march=native)


def plan_bytes(onnxc, model_dir, flags):
    """(arena bytes, weight bytes) of the model compiled for TARGET."""
    out = run([onnxc, os.path.join(model_dir, "model.onnx"), "--report", "--target", TARGET,
               "-o", "/tmp/onnxc-int8-bench-report.cpp"] + flags)
    arena = re.search(r"^arena:\s*([0-9]+) bytes", out, re.M)
    weights = re.search(r"^weights:\s*([0-9]+) bytes", out, re.M)
    return int(arena.group(1)), int(weights.group(1))


class Onnxc:
    """onnxc bench of one model: built once (--keep), then the kept harness reruns it."""

    def __init__(self, onnxc, model_dir, runs):
        self.onnxc, self.model_dir, self.runs = onnxc, model_dir, runs
        self.flags = model_flags(model_dir)
        self.keep = None

    def time_us(self):
        if self.keep is None:
            self.keep = os.path.join("/tmp", "onnxc-int8-bench-" + os.path.basename(self.model_dir))
            return median_us(run([self.onnxc, "bench", os.path.join(self.model_dir, "model.onnx"), "--target", TARGET,
                                  "--runs", str(self.runs), "--keep", self.keep] + self.flags))
        return median_us(run([os.path.join(self.keep, "harness"), "bench", str(self.runs)]))


def ort_time_us(ort, model_dir, runs):
    return median_us(run(["node", "ort-run.mjs", model_dir, "--bench", str(runs), "--threads", "1"], cwd=ort))


def measure(a, int8_name, float_name):
    int8_dir, float_dir = os.path.join(QUANT_MODELS, int8_name), os.path.join(a.models, float_name)
    ours_int8, ours_float = Onnxc(a.onnxc, int8_dir, a.runs), Onnxc(a.onnxc, float_dir, a.runs)
    times = {"int8": [], "float": [], "ort_int8": [], "ort_float": []}
    for _ in range(a.rounds):
        times["int8"].append(ours_int8.time_us())
        times["float"].append(ours_float.time_us())
        times["ort_int8"].append(ort_time_us(a.ort, int8_dir, a.runs))
        times["ort_float"].append(ort_time_us(a.ort, float_dir, a.runs))
    row = {k: statistics.median(v) for k, v in times.items()}
    row["arena_int8"], row["weights_int8"] = plan_bytes(a.onnxc, int8_dir, ours_int8.flags)
    row["arena_float"], row["weights_float"] = plan_bytes(a.onnxc, float_dir, ours_float.flags)
    return row


def table(rows):
    lines = [
        "| model | onnxc int8 us | onnxc float us | int8 / float | ORT int8 us | onnxc int8 / ORT int8 | ORT float us "
        "| arena int8 | arena float | float / int8 | weights int8 | weights float |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['int8']:.1f} | {r['float']:.1f} | {r['int8'] / r['float']:.2f} | {r['ort_int8']:.1f} "
            f"| {r['int8'] / r['ort_int8']:.2f} | {r['ort_float']:.1f} | {r['arena_int8']:,} | {r['arena_float']:,} "
            f"| {r['arena_float'] / r['arena_int8']:.1f}x | {r['weights_int8']:,} | {r['weights_float']:,} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--ort", required=True, help="folder with ort-run.mjs and its node_modules")
    ap.add_argument("--models", default="/work/shared/models", help="the float models' corpus")
    ap.add_argument("--only", nargs="*", choices=sorted(PAIRS), help="int8 models (default: all)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--out", help="write the table here (default: stdout)")
    a = ap.parse_args()
    a.onnxc = os.path.abspath(a.onnxc)

    rows = []
    for int8_name in a.only or sorted(PAIRS):
        float_name = PAIRS[int8_name]
        r = measure(a, int8_name, float_name)
        rows.append((float_name, r))
        print(f"{float_name}: int8 {r['int8']:.1f} us, float {r['float']:.1f} us, ORT int8 {r['ort_int8']:.1f} us",
              file=sys.stderr)
    lines = [f"Machine: {machine()}.", "", "Command: `" + " ".join(["bench/int8_bench.py"] + sys.argv[1:]) + "`", ""]
    lines += table(rows)
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
