#!/usr/bin/python3
"""Operator sweep: onnxc against ONNX Runtime (one thread) on single-operator models over a grid.

Not a test: a benchmark (issue #21). For every case of bench/sweep/cases.py (Conv 1-D/2-D dense,
depthwise and grouped with each following activation, ConvTranspose, Gemm/MatMul, every pooling,
Resize, elementwise with each broadcast pattern, Softmax/LayerNormalization, reductions, data
movement) it

  1. writes the model and random normal inputs (no subnormals) in the backend-test layout,
  2. has ONNX Runtime write the reference outputs (ort-run.mjs DIR),
  3. validates onnxc against them (`onnxc validate --target T`, built with -O3 -march=native, the
     program kept): a wrong result or a refusal is reported, never timed,
  4. times the validated program against ORT on the same inputs: ROUNDS interleaved rounds
     (onnxc, ORT, onnxc, ORT, ...), each the median of RUNS runs, ROUNDS' median kept,

and writes the distribution of the ratios onnxc/ORT per family and overall, the worst cases and
every failure into docs/performance.md (section "Operator sweep" below the END_OF_TABLES line, the
part bench/bench.py keeps) with the command and commit.

  bench/sweep/sweep.py --onnxc build/onnxc --ort /work/ort [--filter REGEX] [--limit N] [--jobs J]
                       [--rounds 7] [--validate-only] [--work build/sweep] [--out docs/performance.md]

Families run apart (each run's --work/results.json copied away) are reported together with
`--report-only --merge A.json B.json ...` (a case in several files: the last file's).

Models, reference outputs and compiled programs are cached under --work (default build/sweep):
a re-run rebuilds a case's program only when the onnxc binary changed. Steps 1-3 run --jobs at a
time; timing runs one case at a time. Needs /usr/bin/python3 with onnx and numpy, node, and the
ORT runner folder (ort-run.mjs with its node_modules).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cases as sweep_cases  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE))
from bench import machine  # noqa: E402  (bench.py's description of the machine)
from onnx import numpy_helper  # noqa: E402

END_OF_TABLES = "<!-- bench.py writes the text above this line; what follows is kept -->"
SECTION = "## Operator sweep"
SECTION_END = "<!-- end of the operator sweep (bench/sweep/sweep.py writes the section above) -->"


def sh(argv, cwd=None, timeout=1800):
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return r.returncode, r.stdout


def file_hash(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def commit():
    _, head = sh(["git", "rev-parse", "--short", "HEAD"], cwd=HERE)
    _, dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE)
    return head.strip() + (" with uncommitted changes" if dirty.strip() else "")




# ---- preparing and validating one case ----

def write_case(case, d):
    """The model, its inputs and ORT's outputs in d (kept from an earlier run when complete)."""
    data = os.path.join(d, "test_data_set_0")
    if os.path.exists(os.path.join(data, "output_0.pb")):
        return None
    os.makedirs(data, exist_ok=True)
    m, inputs = case.build()
    for i, (name, a) in enumerate(inputs.items()):
        t = numpy_helper.from_array(a, name)
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    return None


def prepare(case, a, onnxc_id):
    """Writes, references and validates a case; returns its status record (cached in status.json)."""
    d = os.path.join(a.work, "cases", case.name)
    status_file = os.path.join(d, "status.json")
    if os.path.exists(status_file):
        st = json.load(open(status_file))
        if st.get("onnxc") == onnxc_id and st.get("target") == a.target:
            return st
    os.makedirs(d, exist_ok=True)
    st = {"name": case.name, "family": case.family, "macs": case.macs, "onnxc": onnxc_id, "target": a.target}
    try:
        write_case(case, d)
    except Exception as e:  # a case the generator cannot build is a bug of the sweep: say so
        st.update(state="generator error", detail=str(e).splitlines()[0])
        return st
    if not os.path.exists(os.path.join(d, "test_data_set_0", "output_0.pb")):
        rc, out = sh(["node", os.path.join(a.ort, "ort-run.mjs"), os.path.abspath(d)], cwd=a.ort)
        if rc != 0:
            st.update(state="ORT error", detail=last_line(out))
            json.dump(st, open(status_file, "w"))
            return st
    keep = os.path.join(d, "program")
    argv = [a.onnxc, "validate", d, "--target", a.target, "--keep", keep, "--atol", f"{case.atol:.3g}",
            "--rtol", f"{case.rtol:.3g}", "--cxxflags=-O3", "--cxxflags=-march=native", "--cxxflags=-DNDEBUG"]
    t0 = time.time()
    rc, out = sh(argv)
    st["validate_s"] = round(time.time() - t0, 1)
    st["validate_log"] = out[-4000:]
    if rc == 0:
        st["state"] = "ok"
        st["max_err"] = " ".join(re.findall(r"max abs err \S+, max rel err \S+", out))
    elif "unsupported" in out:
        st.update(state="refused", detail=first_error(out))
    elif "did not compile" in out:
        st.update(state="build failed", detail=compiler_error(out))
    elif re.search(r"crashed|timed out|exited with", out):
        st.update(state="crashed", detail=first_error(out))
    elif "FAIL" in out:
        st.update(state="wrong", detail="; ".join(l.strip() for l in out.splitlines() if "FAIL" in l)[:400])
    else:
        st.update(state="error", detail=first_error(out))
    json.dump(st, open(status_file, "w"))
    return st


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


def compiler_error(text):
    """The compiler's first diagnostic about the generated code (file name without its folder)."""
    m = re.search(r"([\w.]+:\d+:\d+: error: .*)", text)
    return m.group(1)[:300] if m else first_error(text)


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return last_line(text)


# ---- timing ----

class OrtTimer:
    """ort_timer.mjs, one node process answering timing requests for the whole run."""

    def __init__(self, ort_dir):
        self.p = subprocess.Popen(["node", os.path.join(HERE, "ort_timer.mjs"), ort_dir], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def median_us(self, case_dir, runs):
        self.p.stdin.write(json.dumps({"dir": os.path.abspath(case_dir), "runs": runs, "threads": 1}) + "\n")
        self.p.stdin.flush()
        answer = json.loads(self.p.stdout.readline())
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["median_us"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def harness_median_us(d, runs):
    keep = os.path.join(d, "program")
    inputs = sorted((f for f in os.listdir(keep) if re.fullmatch(r"in_0_\d+\.bin", f)),
                    key=lambda f: int(f[len("in_0_"):-len(".bin")]))
    rc, out = sh([os.path.join(keep, "harness"), "bench", str(runs)] + [os.path.join(keep, f) for f in inputs])
    m = re.search(r"median_us:\s*([0-9.]+)", out)
    if rc != 0 or not m:
        raise RuntimeError(f"harness bench failed: {last_line(out)}")
    return float(m.group(1))


def time_case(st, a, ort):
    """Interleaved rounds of onnxc and ORT on the same inputs; each round's runs sized so the slower
    runtime's round takes about --round-ms (at least 3, at most 2000 runs)."""
    d = os.path.join(a.work, "cases", st["name"])
    # runs sized on the slower runtime, so neither's round takes much over --round-ms
    probe = max(harness_median_us(d, 2), ort.median_us(d, 2))
    runs = int(min(2000, max(3, a.round_ms * 1000 / max(probe, 0.05))))
    # a case over 20 ms a run gets 3 rounds: its ratio is far from 1 or its work large enough to be stable
    rounds = a.rounds if probe < 20000 else min(a.rounds, 3)
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(harness_median_us(d, runs))
        theirs.append(ort.median_us(d, runs))
    # the harness prints 0.1 us steps: a case under that counts as 0.05 us, not 0 (a ratio of 0)
    us, ort_us = max(statistics.median(ours), 0.05), statistics.median(theirs)
    st.update(onnxc_us=us, ort_us=ort_us, ratio=us / ort_us, runs=runs, rounds=rounds)
    return st


# ---- the report ----

def percentile(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def distribution_row(label, results):
    timed = [r["ratio"] for r in results if "ratio" in r]
    failed = sum(1 for r in results if r["state"] != "ok")
    if not timed:
        return f"| {label} | {len(results)} | 0 | {failed} | - | - | - | - | - | - | - | - |"
    p = lambda q: f"{percentile(timed, q):.2f}"  # noqa: E731
    share = 100 * sum(1 for x in timed if x <= 1.0) / len(timed)
    over = sum(1 for x in timed if x > 1.5)
    return (f"| {label} | {len(results)} | {len(timed)} | {failed} | {p(10)} | {p(50)} | {p(90)} | {max(timed):.2f} "
            f"| {statistics.geometric_mean(timed):.2f} | {share:.0f} % | {over} | {min(timed):.2f} |")


def report(results, a, started, elapsed, cmd):
    families = list(dict.fromkeys(r["family"] for r in results))
    timed = [r for r in results if "ratio" in r]
    run = results[0].get("run", {}) if results else {}
    at_commit = run.get("commit") or commit()
    lines = [
        SECTION,
        "",
        "Single-operator models over a grid of shapes and attributes (`bench/sweep/cases.py`, opset "
        f"{sweep_cases.OPSET}), each validated",
        "against ONNX Runtime's output first (`onnxc validate`, the same `-O3 -march=native` program that is then",
        f"timed, `--target {a.target}`), then timed against ONNX Runtime 1.30 (CPU, one intra-op thread) on the same",
        f"inputs: {a.rounds} interleaved rounds (onnxc, ORT, onnxc, ...), each the median of enough runs for about",
        f"{a.round_ms} ms, the median of the rounds kept. Ratio = onnxc / ORT (below 1: onnxc is faster). ORT is",
        "timed through onnxruntime-node (`bench/sweep/ort_timer.mjs`, one process, sessions kept open); its",
        "per-call overhead (see the smallest cases) favours onnxc on the tiniest cases. A case that onnxc",
        "refuses or gets wrong is listed below and never timed.",
        "",
        f"Machine: {machine()}; shared with other jobs, so single ratios carry 10-20 % noise.",
        "",
        f"Command: `{cmd}` (onnxc at commit {at_commit}, {started} UTC, {elapsed / 60:.0f} min).",
        "",
        "| family | cases | timed | failed | p10 | median | p90 | max | geo. mean | share <= 1.0 | count > 1.5 | min |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for fam in families:
        lines.append(distribution_row(fam, [r for r in results if r["family"] == fam]))
    lines.append(distribution_row("**all**", results))
    if timed:
        floor = min(timed, key=lambda r: r["ort_us"])
        lines += ["", f"ORT's fastest case, {floor['name']}, took {floor['ort_us']:.1f} us (onnxc "
                  f"{floor['onnxc_us']:.1f} us): about the per-call overhead in every ORT time."]
    lines += ["", f"The {min(a.worst, len(timed))} worst cases (highest ratio):", "",
              "| case | MACs or elements | onnxc us | ORT us | ratio |", "| --- | ---: | ---: | ---: | ---: |"]
    for r in sorted(timed, key=lambda r: -r["ratio"])[:a.worst]:
        lines.append(f"| {r['name']} | {r['macs']:,} | {r['onnxc_us']:.2f} | {r['ort_us']:.1f} | {r['ratio']:.2f} |")
    failures = [r for r in results if r["state"] != "ok"]
    lines += ["", f"Cases onnxc refuses or gets wrong: {len(failures)}" + (":" if failures else "."), ""]
    if failures:
        lines += ["| case | state | detail |", "| --- | --- | --- |"]
        for r in failures:
            detail = r.get("detail", "").replace("|", "\\|").replace("`", "'")
            lines.append(f"| {r['name']} | {r['state']} | {detail} |")
        lines.append("")
    lines.append(SECTION_END)
    return "\n".join(lines) + "\n"


def write_report(path, section):
    """Puts section below END_OF_TABLES (replacing an earlier sweep section) and keeps the rest."""
    text = open(path).read() if os.path.exists(path) else END_OF_TABLES + "\n"
    start = text.find(SECTION)
    if start >= 0:
        end = text.find(SECTION_END, start)
        end = len(text) if end < 0 else end + len(SECTION_END) + 1
        text = text[:start] + section + text[end:]
    else:
        at = text.find(END_OF_TABLES)
        if at < 0:
            text = text.rstrip("\n") + "\n\n" + END_OF_TABLES + "\n"
            at = text.find(END_OF_TABLES)
        at += len(END_OF_TABLES) + 1
        text = text[:at] + "\n" + section + text[at:]
    with open(path, "w") as f:
        f.write(text)


# ---- main ----

def select(cases, a):
    if a.filter:
        cases = [c for c in cases if re.search(a.filter, c.name) or re.search(a.filter, c.family)]
    if a.limit:
        # round-robin over the families, so a short run still covers each of them (and --limit N
        # with --skip M picks the same order for any N)
        by_family = {}
        for c in cases:
            by_family.setdefault(c.family, []).append(c)
        picked, i = [], 0
        while len(picked) < min(a.limit, len(cases)):
            for fam in by_family.values():
                if i < len(fam) and len(picked) < a.limit:
                    picked.append(fam[i])
            i += 1
        cases = picked
    return cases[a.skip:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--ort", required=True, help="folder with ort-run.mjs and its node_modules")
    ap.add_argument("--filter", help="only cases whose name or family matches this regular expression")
    ap.add_argument("--limit", type=int, help="at most N cases, taken round-robin over the families")
    ap.add_argument("--skip", type=int, default=0,
                    help="drop the first N selected cases (to validate a later part of a --limit selection apart)")
    ap.add_argument("--jobs", type=int, default=2, help="cases written and validated at a time (default 2)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-ms", type=int, default=30, help="about this long per round and runtime (default 30)")
    ap.add_argument("--target", default="native")
    ap.add_argument("--validate-only", action="store_true", help="validate, do not time; no report written")
    ap.add_argument("--worst", type=int, default=20)
    ap.add_argument("--work", default=os.path.join(HERE, "..", "..", "build", "sweep"))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "docs", "performance.md"))
    ap.add_argument("--list", action="store_true", help="print the selected cases and stop")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the report from the last run's results (--work/results.json), timing nothing")
    ap.add_argument("--merge", nargs="+", metavar="RESULTS_JSON",
                    help="with --report-only: the report of these results.json files together (runs of different "
                         "families; a case in several files is taken from the last), not --work's")
    a = ap.parse_args()
    a.onnxc, a.ort, a.work = os.path.abspath(a.onnxc), os.path.abspath(a.ort), os.path.abspath(a.work)
    if a.report_only:
        if a.merge:
            by_name = {}
            for path in a.merge:
                for r in json.load(open(path)):
                    by_name.pop(r["name"], None)  # the last file's, in its order
                    by_name[r["name"]] = r
            results = list(by_name.values())
            runs = [json.load(open(path))[0].get("run", {}) for path in a.merge]
            if results:
                results[0]["run"] = dict(runs[0], command="; ".join(r.get("command", "?") for r in runs),
                                         started=", ".join(r.get("started", "?") for r in runs),
                                         elapsed=sum(r.get("elapsed", 0) for r in runs))
        else:
            results = json.load(open(os.path.join(a.work, "results.json")))
        for r in results:  # failure details as this version words them
            if r["state"] == "build failed":
                r["detail"] = compiler_error(r.get("validate_log", ""))
        run = results[0].get("run", {}) if results else {}
        write_report(a.out, report(results, a, run.get("started", "?"), run.get("elapsed", 0), run.get("command")))
        print(f"wrote {a.out}", file=sys.stderr)
        return 0

    cases = select(sweep_cases.all_cases(), a)
    if a.list:
        for c in cases:
            print(f"{c.family:14} {c.macs:>12,} {c.name}")
        return 0
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    t0 = time.time()
    onnxc_id = file_hash(a.onnxc)
    os.makedirs(os.path.join(a.work, "cases"), exist_ok=True)
    print(f"{len(cases)} cases; writing, referencing and validating {a.jobs} at a time", file=sys.stderr)
    results = [None] * len(cases)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = {pool.submit(prepare, c, a, onnxc_id): i for i, c in enumerate(cases)}
        for n, f in enumerate(concurrent.futures.as_completed(futures), 1):
            i = futures[f]
            results[i] = f.result()
            st = results[i]
            print(f"[{n}/{len(cases)}] {st['state']}: {st['name']}"
                  + (f" ({st.get('detail', '')})" if st["state"] != "ok" else ""), file=sys.stderr)
    bad = [r for r in results if r["state"] != "ok"]
    if not a.validate_only:
        ort = OrtTimer(a.ort)
        try:
            ok = [r for r in results if r["state"] == "ok"]
            for n, st in enumerate(ok, 1):
                try:
                    time_case(st, a, ort)
                    print(f"[{n}/{len(ok)}] {st['name']}: onnxc {st['onnxc_us']:.1f} us, ORT {st['ort_us']:.1f} us, "
                          f"ratio {st['ratio']:.2f}", file=sys.stderr)
                except RuntimeError as e:
                    st.update(state="timing error", detail=str(e)[:300])
                    print(f"[{n}/{len(ok)}] {st['name']}: timing error: {e}", file=sys.stderr)
        finally:
            ort.close()
        command = " ".join(["bench/sweep/sweep.py"] + sys.argv[1:])
        if results:
            results[0]["run"] = {"started": started, "elapsed": time.time() - t0, "command": command,
                                 "commit": commit(), "rounds": a.rounds, "round_ms": a.round_ms}
        with open(os.path.join(a.work, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        write_report(a.out, report(results, a, started, time.time() - t0, command))
        print(f"wrote {a.out}", file=sys.stderr)
    bad = [r for r in results if r["state"] != "ok"]
    for r in bad:
        print(f"{r['state']}: {r['name']}: {r.get('detail', '')}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
