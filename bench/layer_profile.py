#!/usr/bin/env python3
"""Each step's time on one thread and on N, side by side, from `onnxc bench --layers-json`.

`onnxc bench MODEL --layers` profiles one configuration (see README, "Per-step roofline profile").
This script answers the question it cannot alone: which steps gain from more threads. It runs
`onnxc bench --layers-json` with 1 and with N threads in alternating rounds (the machine's load
drifts; alternating spreads it over both), takes each step's median over the rounds, and prints
both times and their ratio, the slowest steps (on one thread) first.

  bench/layer_profile.py MODEL.onnx --inputs DIR/test_data_set_0 --threads 2 [--rounds 5] [--runs 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def profile(a, threads, out):
    """One `onnxc bench --layers-json` run: {step index: step}, and the steps' total in us."""
    cmd = [a.onnxc, "bench", a.model, "--layers-json", out, "--runs", str(a.runs), "--target", a.target]
    if threads > 1:
        cmd += ["--threads", str(threads)]
    if a.inputs:
        cmd += ["--inputs", a.inputs]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    data = json.load(open(out))
    return {s["index"]: s for s in data["steps"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--inputs", help="a test_data_set directory (onnxc bench --inputs)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20, help="runs per onnxc bench call")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--target", default="native")
    ap.add_argument("--onnxc", default=os.path.join(os.path.dirname(__file__), "..", "build", "onnxc"))
    a = ap.parse_args()

    out = os.path.join(tempfile.mkdtemp(prefix="onnxc-layer-profile-"), "steps.json")
    samples = {1: [], a.threads: []}
    for _ in range(a.rounds):
        for t in samples:
            samples[t].append(profile(a, t, out))
    steps = samples[1][0]
    med = {t: {i: statistics.median(r[i]["us"] for r in rounds if i in r) for i in steps} for t, rounds in samples.items()}
    one, many = med[1], med[a.threads]
    total_one, total_many = sum(one.values()), sum(many.values())
    print(f"{'1T us':>9} {f'{a.threads}T us':>9} {'ratio':>6}  step (medians over {a.rounds} alternating rounds of "
          f"{a.runs} runs; sums {total_one:.1f} and {total_many:.1f} us, ratio {total_many / total_one:.2f})")
    for i in sorted(one, key=one.get, reverse=True)[: a.top]:
        s = steps[i]
        print(f"{one[i]:9.1f} {many[i]:9.1f} {many[i] / one[i] if one[i] else 0:6.2f}  {i}. '{s['name']}' {s['op']} "
              f"{s['output_shape']} ({s['macs']} MACs)")


if __name__ == "__main__":
    main()
