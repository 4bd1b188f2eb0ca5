#!/usr/bin/env python3
"""Latency of onnxc-generated code against ONNX Runtime (one thread) on the model corpus.

Not a test: numbers depend on the machine and its load. For each model it alternates, ROUNDS
times, one `onnxc bench` (RUNS timed runs, median) and one ONNX Runtime bench (the same), so
both see the same machine load, and reports the median of the per-round medians. Both run on
the same values: the model's first test_data_set (ort-run.mjs's --bench reads it; onnxc bench
gets it through --inputs), because timing can depend on them (subnormal floats are many times
slower on some cores). Writes docs/performance.md (or --out) with the exact command, the commit
and the machine; text after the END_OF_TABLES line of an existing file (hand-written analysis)
is kept.

  bench/bench.py --onnxc build/onnxc --ort DIR_WITH_ort-run.mjs [--models /work/shared/models]
                 [--rounds 5] [--runs 50] [--threads 2] [--gemm-bench build/gemm_bench] [--out docs/performance.md]

With --threads T, every round also times both with T threads (onnxc's run_parallel on the
harness's example pool, ORT with T intra-op threads) and a second table gives each runtime's
T-thread latency against its own single thread. Those numbers need T idle cores.

The ORT runner is shared/tools/ort/ort-run.mjs, set up with `npm ci` in a copy of its folder.
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys

# Flags some models need to compile (see the corpus README).
# silero-vad-v5's If has one branch per sample rate and only one fits a chunk size: the test
# data's 16 kHz is bound at compile time, as its ctest does.
MODEL_FLAGS = {"mnist-cnn-batchN": ["--dim", "N=2"], "silero-vad-v5": ["--constant", "sr=16000"]}


# The line after which docs/performance.md is written by hand; bench.py keeps what follows it.
END_OF_TABLES = "<!-- bench.py writes the text above this line; what follows is kept -->"


def first_data_set(model_dir):
    """The test data set ort-run.mjs --bench times: the first in name order."""
    sets = sorted(d for d in os.listdir(model_dir) if d.startswith("test_data_set_"))
    return os.path.join(model_dir, sets[0])


def commit():
    """The commit of the onnxc sources bench.py belongs to, marked when the tree has changes."""
    here = os.path.dirname(os.path.abspath(__file__))
    head = run(["git", "rev-parse", "--short", "HEAD"], cwd=here).strip()
    dirty = run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here).strip()
    return head + (" with uncommitted changes" if dirty else "")


def kept_text(path):
    """What follows END_OF_TABLES in an existing file at path (empty when there is none)."""
    if not os.path.exists(path):
        return ""
    text = open(path).read()
    at = text.find(END_OF_TABLES)
    return text[at + len(END_OF_TABLES):] if at >= 0 else ""


def model_flags(model_dir):
    info = os.path.join(model_dir, "info.json")
    flags = list(MODEL_FLAGS.get(os.path.basename(model_dir), []))
    if os.path.exists(info):
        flags += json.load(open(info)).get("flags") or []
    return flags


def median_us(output):
    m = re.search(r"median_us:\s*([0-9.]+)", output)
    if not m:
        raise RuntimeError("no median_us in output:\n" + output)
    return float(m.group(1))


def run(argv, cwd=None):
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{r.stdout}")
    return r.stdout


def total_macs(onnxc, model_dir, flags):
    out = run([onnxc, os.path.join(model_dir, "model.onnx"), "--report", "-o", "/tmp/onnxc-bench-report.cpp"] + flags)
    m = re.search(r"work:\s*([0-9]+) MACs", out)
    return int(m.group(1)) if m else 0


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def gemm_numbers(gemm_bench):
    if not gemm_bench:
        return None
    out = run([gemm_bench])
    peak = float(re.search(r"fma_peak_gflops:\s*([0-9.]+)", out).group(1))
    gemm = float(re.search(r"gemm_512_gflops:\s*([0-9.]+)", out).group(1))
    convs = [tuple(part.strip() for part in m.group(1).split("|"))
             for m in re.finditer(r"conv_gflops:\s*(.*)", out)]
    return peak, gemm, convs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--ort", required=True, help="folder with ort-run.mjs and its node_modules")
    ap.add_argument("--models", default="/work/shared/models")
    ap.add_argument("--only", nargs="*", help="model names (default: every model)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--threads", type=int, default=0,
                    help="also time both runtimes with this many threads (default: single thread only)")
    ap.add_argument("--gemm-bench", help="the gemm_bench program (bench/gemm_bench.cpp)")
    ap.add_argument("--scratch-speed", action="store_true",
                    help="also time the code compiled with --scratch speed (kernel scratch that may grow the arena)")
    ap.add_argument("--target", default="native",
                    help="onnxc's --target for the generated code (native, avx2, ...; default native)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs", "performance.md"))
    a = ap.parse_args()

    gemm = gemm_numbers(a.gemm_bench)
    peak = gemm[0] if gemm else None
    models = sorted(d for d in os.listdir(a.models) if os.path.exists(os.path.join(a.models, d, "model.onnx")))
    if a.only:
        models = [m for m in models if m in a.only]
    rows, skipped, mt_rows = [], [], []
    for name in models:
        d = os.path.join(a.models, name)
        flags = model_flags(d) + ["--target", a.target]
        try:
            macs = total_macs(a.onnxc, d, flags)
        except RuntimeError as e:  # a model onnxc cannot compile is listed, not measured
            print(f"{name}: not measured: {str(e).splitlines()[-1]}", file=sys.stderr)
            skipped.append((name, str(e).strip().splitlines()[-1]))
            continue
        # `onnxc bench --keep` builds once; the later rounds rerun the same program.
        keep = os.path.join("/tmp", f"onnxc-bench-{name}")
        inputs = first_data_set(d)
        first = run([a.onnxc, "bench", os.path.join(d, "model.onnx"), "--runs", str(a.runs), "--keep", keep,
                     "--inputs", inputs] + flags)
        # The input files onnxc bench wrote into keep for its harness (in_0_<input>.bin).
        input_files = sorted((f for f in os.listdir(keep) if re.fullmatch(r"in_0_\d+\.bin", f)),
                             key=lambda f: int(f[len("in_0_"):-len(".bin")]))
        bench_args = ["bench", str(a.runs)] + [os.path.join(keep, f) for f in input_files]
        harness = [os.path.join(keep, "harness")]
        speed_harness = None
        if a.scratch_speed:  # the same model with --scratch speed, timed in the same rounds
            speed_keep = keep + "-speed"
            ours_speed = [median_us(run([a.onnxc, "bench", os.path.join(d, "model.onnx"), "--runs", str(a.runs),
                                         "--keep", speed_keep, "--inputs", inputs, "--scratch", "speed"] + flags))]
            speed_harness = [os.path.join(speed_keep, "harness")]
        ort = ["node", "ort-run.mjs", d, "--bench", str(a.runs), "--threads"]
        ours, theirs = [median_us(first)], []
        ours_mt, theirs_mt = [], []
        for i in range(a.rounds):
            theirs.append(median_us(run(ort + ["1"], cwd=a.ort)))
            if i > 0:
                ours.append(median_us(run(harness + bench_args)))
                if speed_harness:
                    ours_speed.append(median_us(run(speed_harness + bench_args)))
            if a.threads > 1:
                ours_mt.append(median_us(run(harness + ["--threads", str(a.threads)] + bench_args)))
                theirs_mt.append(median_us(run(ort + [str(a.threads)], cwd=a.ort)))
        us, ort_us = statistics.median(ours), statistics.median(theirs)
        gflops = 2 * macs / us / 1e3 if us > 0 else 0
        speed_us = statistics.median(ours_speed) if speed_harness else None
        rows.append((name, macs, us, ort_us, us / ort_us, gflops, speed_us))
        print(f"{name}: onnxc {us:.1f} us, ORT {ort_us:.1f} us, ratio {us / ort_us:.2f}"
              + (f", --scratch speed {speed_us:.1f} us, ratio {speed_us / ort_us:.2f}" if speed_us else ""),
              file=sys.stderr)
        if a.threads > 1:
            mt_rows.append((name, us, statistics.median(ours_mt), ort_us, statistics.median(theirs_mt)))
            print(f"{name}: {a.threads} threads: onnxc {mt_rows[-1][2]:.1f} us, ORT {mt_rows[-1][4]:.1f} us",
                  file=sys.stderr)

    geomean = statistics.geometric_mean([r[4] for r in rows]) if rows else 0
    cmd = " ".join(["bench/bench.py"] + sys.argv[1:])
    lines = [
        "# Performance",
        "",
        f"Latency of the generated code (`onnxc bench`: `--target {a.target}`, `-O3`) against ONNX",
        "Runtime 1.30 (CPU, one intra-op thread) on the model corpus, batch as in the test data, both on the",
        "inputs of the model's test_data_set_0. Each model",
        f"alternates {a.rounds} rounds of both, each round the median of {a.runs} timed runs; the table shows",
        "the median of the rounds. Ratio = onnxc / ORT (below 1: onnxc is faster). GFLOP/s counts 2 flops per",
        "multiply-accumulate of the model (`onnxc --report`: the direct convolution's count; Winograd layers",
        "compute 4/9 of theirs, so a model's effective rate can pass the peak); % of peak is against the",
        "measured FMA peak below.",
        "",
        f"Machine: {machine()}. The machine is shared with other jobs: expect noise of 10-20 %.",
        "",
        f"Command: `{cmd}` (onnxc at commit {commit()}).",
        "",
    ]
    if a.scratch_speed:
        lines += [
            "The last two columns time the same model compiled with `--scratch speed` (kernel scratch that",
            "may grow the arena: docs/memory.md), in the same rounds.",
            "",
            "| model | MACs | onnxc us | ORT us (1 thread) | ratio | GFLOP/s | % of peak | onnxc us, --scratch speed "
            "| ratio, --scratch speed |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
    else:
        lines += [
            "| model | MACs | onnxc us | ORT us (1 thread) | ratio | GFLOP/s | % of peak |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
    for name, macs, us, ort_us, ratio, gflops, speed_us in rows:
        pct = f"{100 * gflops / peak:.1f}" if peak else "-"
        extra = f" {speed_us:.1f} | {speed_us / ort_us:.2f} |" if a.scratch_speed else ""
        lines.append(f"| {name} | {macs:,} | {us:.1f} | {ort_us:.1f} | {ratio:.2f} | {gflops:.1f} | {pct} |{extra}")
    big = [r[4] for r in rows if r[1] >= 1_000_000]
    lines += ["", f"Geometric mean of the ratios: **{geomean:.2f}**"
              + (f"; over the {len(big)} models of at least 1 M MACs: **{statistics.geometric_mean(big):.2f}**."
                 if big else ".")]
    if a.scratch_speed:
        speed_geomean = statistics.geometric_mean([r[6] / r[3] for r in rows]) if rows else 0
        lines.append(f"With `--scratch speed`: **{speed_geomean:.2f}**.")
    lines.append("")
    if mt_rows:
        t = a.threads
        lines += [
            f"## {t} threads",
            "",
            f"The same rounds also timed each model with {t} threads: onnxc's `run_parallel` on the harness's",
            f"example pool (`onnxc bench --threads {t}`), ORT with {t} intra-op threads. Scaling = {t}-thread",
            "latency / the same runtime's single-thread latency (issue #6 asks onnxc for at most 0.6 on the",
            "largest models).",
            "",
            f"| model | onnxc 1 thread us | onnxc {t} threads us | onnxc scaling | ORT 1 thread us "
            f"| ORT {t} threads us | ORT scaling | ratio at {t} threads |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, us, us_mt, ort_us, ort_mt in mt_rows:
            lines.append(f"| {name} | {us:.1f} | {us_mt:.1f} | {us_mt / us:.2f} | {ort_us:.1f} | {ort_mt:.1f} "
                         f"| {ort_mt / ort_us:.2f} | {us_mt / ort_mt:.2f} |")
        lines.append("")
    for name, why in skipped:
        lines += [f"Not measured: {name} (onnxc could not compile it: `{why}`).", ""]
    if gemm:
        lines += [
            "## Kernel micro-benchmark",
            "",
            "`bench/gemm_bench.cpp` (built with `-O3 -march=native -DONNXC_SIMD`): the packed-weight matrix",
            "product of runtime-support (`onnxc/packed_gemm.h`, the kernel of 1x1 and im2col convolutions) on",
            "512 x 512 x 512 floats, against the single-core FMA peak measured by a loop of independent",
            "vector FMAs.",
            "",
            f"| FMA peak | GEMM 512^3 | % of peak |",
            "| ---: | ---: | ---: |",
            f"| {gemm[0]:.1f} GFLOP/s | {gemm[1]:.1f} GFLOP/s | {100 * gemm[1] / gemm[0]:.1f} |",
            "",
        ]
        if gemm[2]:
            lines += [
                "Convolution layers of the corpus through each kernel that computes them (the same program,",
                "one thread, no activation; GFLOP/s counts the direct convolution's multiply-adds, so",
                "Winograd's, which does 4/9 of them, can pass the peak):",
                "",
                "| layer | kernel | us | GFLOP/s | % of peak |",
                "| --- | --- | ---: | ---: | ---: |",
            ]
            for layer, kernel, us, gflops in gemm[2]:
                lines.append(f"| {layer} | {kernel} | {us} | {gflops} | {100 * float(gflops) / gemm[0]:.1f} |")
            lines.append("")
    kept = kept_text(a.out)
    lines.append(END_OF_TABLES)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + (kept if kept else "\n"))
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
