#!/usr/bin/python3
"""Conformance runner: `onnxc validate` over the ONNX backend test suite.

Walks the test directories installed by Debian's libonnx-testdata, validates every test with
onnxc (compile, build, run, compare with the expected outputs) and prints

    N passed (M with pinned shape inputs), N failed, N refused as unsupported

Tests are validated with --pin-shape-inputs: where a model needs the value of a graph input at
compile time (a Reshape whose target shape is an input, say), onnxc compiles it with exactly those
inputs pinned to each data set's value; the data inputs stay run-time inputs. Such passes are
counted separately ("with pinned shape inputs"), so the summary shows what a static-shape compiler
passes with and without that help.

A test that does not pass must be listed, with a one-line reason, in the expected-failures
file; the run fails when a test fails unexpectedly. An expected failure that starts passing is
reported (remove it from the list) but does not fail the run, so landing a fix never turns CI red. With --markdown it writes the per-operator table to docs/conformance.md;
with --target as well, only that target's row of the per-target table there.

Usage:
    tests/conformance/run_conformance.py --onnxc build/onnxc [--filter REGEX] [--jobs N]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import shutil
import sys
import tempfile
import time

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
DATA_ROOT = "/usr/share/libonnx-testdata/data"
# The CPU features (/proc/cpuinfo flags) the generated code of a host --target needs to run: on
# a machine without them the run is skipped (exit 77), not failed.
TARGET_CPU_FLAGS = {
    "x86-64-v2": ["sse4_2", "popcnt"],
    "x86-64-v3": ["avx2", "fma", "bmi2"],
    "avx2": ["avx2", "fma", "bmi2"],
    "avx512": ["avx512f", "avx512bw", "avx512dq", "avx512vl"],
}
# The programs a target of another architecture is built and run with (onnxc's backend/target.cpp): without
# them the run is skipped (exit 77), not failed, and says which Debian packages provide them.
TARGET_TOOLS = {
    "neon": (["aarch64-linux-gnu-g++", "qemu-aarch64"], "g++-aarch64-linux-gnu qemu-user"),
    "riscv64": (["riscv64-linux-gnu-g++", "qemu-riscv64"], "g++-riscv64-linux-gnu qemu-user"),
    "riscv64-rvv": (["clang++", "riscv64-linux-gnu-g++", "qemu-riscv64"], "clang g++-riscv64-linux-gnu qemu-user"),
    "riscv32": (["riscv64-unknown-elf-gcc", "qemu-system-riscv32"],
                "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libstdc++-arm-none-eabi-newlib qemu-system-misc"),
}
TARGET_TOOLS["riscv32f"] = TARGET_TOOLS["riscv32"]
TARGET_TOOLS["neon-dotprod"] = TARGET_TOOLS["neon"]
# What `onnxc validate` prints when it pinned inputs to each data set's value.
PINNED_PREFIX = "pinned inputs (from each data set): "


def model_ops(path):
    """The op types a model uses (including in subgraphs), read with Debian's python3-onnx."""
    try:
        import onnx
    except ImportError:
        return ["?"]
    model = onnx.load(path, load_external_data=False)
    ops = set()

    def walk(graph):
        for node in graph.node:
            ops.add(node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                for g in attr.graphs:
                    walk(g)

    walk(model.graph)
    return sorted(ops)


def load_expected(path):
    expected = {}
    if not path or not os.path.exists(path):
        return expected
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].rstrip() if line.lstrip().startswith("#") else line.rstrip()
            if not line.strip():
                continue
            parts = line.split(None, 1)
            if len(parts) < 2:
                sys.exit(f"{path}:{lineno}: '{parts[0]}' has no reason; every expected failure needs one")
            expected[parts[0]] = parts[1].strip()
    return expected


def run_one(onnxc, suite, test, timeout, target, pch_cache):
    test_dir = os.path.join(DATA_ROOT, suite, test)
    command = [onnxc, "validate", "--pin-shape-inputs", "--pch-cache", pch_cache, test_dir]
    command += ["--target", target] if target else []
    start = time.time()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        code, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        code, out = -1, f"timed out after {timeout} s"
    except OSError as e:
        code, out = -1, f"could not run onnxc: {e}"
    if code == 0:
        status = "passed"
    elif "error: unsupported:" in out and code == 1:
        status = "refused"
    else:
        status = "failed"
    pinned = [l[len(PINNED_PREFIX):].split(";")[0] for l in out.splitlines() if l.startswith(PINNED_PREFIX)]
    lines = [l for l in out.splitlines() if l.startswith("error") or "FAIL" in l]
    detail = lines[0] if lines else (out.strip().splitlines() or [""])[-1]
    return suite, test, status, detail[:300], pinned[0] if pinned else "", time.time() - start


def missing_cpu_flags(target):
    """The CPU flags `target` needs that this machine lacks (none for targets not listed)."""
    needed = TARGET_CPU_FLAGS.get(target, [])
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((set(l.split(":", 1)[1].split()) for l in f if l.startswith("flags")), set())
    except OSError:
        return []
    return [flag for flag in needed if flag not in flags]


def passed_line(counts):
    """'N passed (M with pinned shape inputs)' or 'N passed'."""
    pinned = f" ({counts['pinned']} with pinned shape inputs)" if counts["pinned"] else ""
    return f"{counts['passed']} passed{pinned}"


def count(results, pinned_inputs, keys=None):
    """Passed, failed, refused and pinned (passed with pinned inputs) counts of the given tests."""
    keys = results.keys() if keys is None else keys
    c = collections.Counter(results[k][0] for k in keys)
    c["pinned"] = sum(1 for k in keys if results[k][0] == "passed" and pinned_inputs.get(k))
    return c


TARGETS_HEADING = "## By target"
# Sections of the markdown file that --markdown keeps as they are when it regenerates the rest:
# the per-target table (rows refreshed by --target runs) and text written by hand.
KEPT_HEADINGS = [TARGETS_HEADING, "## Compared with other ONNX-to-C compilers"]


def kept_section(path, heading):
    """The lines of the file's section under `heading` (up to the next one), or []."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.read().splitlines()
    if heading not in lines:
        return []
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def targets_section(path):
    """The lines of the file's per-target section, or []."""
    return kept_section(path, TARGETS_HEADING)


def update_target_row(path, target, results, pinned_inputs):
    """Sets `target`'s row of the per-target table in the markdown file, leaving the rest as it is."""
    c = count(results, pinned_inputs)
    row = f"| {target} | {c['passed']} | {c['pinned']} | {c['failed']} | {c['refused']} | {len(results)} |"
    section = targets_section(path) or [
        TARGETS_HEADING, "",
        "The suite with the generated code built for each instruction set (`onnxc validate --target`); on this",
        "machine, which has AVX-512, every target runs natively. Refresh a row with:", "",
        "    tests/conformance/run_conformance.py --onnxc build/onnxc --target TARGET --markdown docs/conformance.md",
        "", "ctest's `conformance.avx512` and `conformance.avx2` run the operators with SIMD kernels per target.", "",
        "| target | passed | pinned | failed | refused | tests |",
        "| --- | ---: | ---: | ---: | ---: | ---: |"]
    rows = [l for l in section if l.startswith("| ") and not l.startswith("| target") and not l.startswith("| ---")]
    rows = sorted([r for r in rows if r.split("|")[1].strip() != target] + [row])
    section = [l for l in section if l not in rows and not (l.startswith("| ") and l.split("|")[1].strip() == target)]
    while section and not section[-1].strip():
        section.pop()
    section += rows + [""]
    with open(path) as f:
        lines = f.read().splitlines()
    old = targets_section(path)
    if old:
        start = lines.index(TARGETS_HEADING)
        lines[start:start + len(old)] = section
    else:
        lines += [""] + section
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")


def write_markdown(path, results, pinned_inputs, ops_of, expected):
    per_op = collections.defaultdict(list)
    for key in results:
        for op in ops_of[key]:
            per_op[op].append(key)
    totals = count(results, pinned_inputs)
    lines = [
        "# Conformance",
        "",
        "onnxc against the ONNX backend tests shipped by Debian's `libonnx-testdata`",
        f"({', '.join(SUITES)}). Regenerate with:",
        "",
        "    tests/conformance/run_conformance.py --onnxc build/onnxc --markdown docs/conformance.md",
        "",
        f"**{passed_line(totals)}, {totals['failed']} failed, {totals['refused']} refused as unsupported** "
        f"of {len(results)} tests.",
        "",
        "Tests run with `onnxc validate --pin-shape-inputs`: where a model needs a graph input's value at compile",
        "time (a Reshape whose target shape is an input, Slice's starts, ...), exactly those inputs are pinned to",
        "each data set's value, as `--constant NAME=VALUE.pb` would in a real build; data inputs stay run-time",
        "inputs. Passes that needed this are counted as \"with pinned shape inputs\" (column *pinned*).",
        "",
    ]
    for suite in SUITES:
        keys = [k for k in results if k[0] == suite]
        if keys:
            c = count(results, pinned_inputs, keys)
            lines.append(f"- {suite}: {passed_line(c)}, {c['failed']} failed, {c['refused']} refused")
    lines += ["", "A test counts for every operator its model uses.", "",
              "| op | passed | pinned | failed | refused |", "| --- | ---: | ---: | ---: | ---: |"]
    for op in sorted(per_op):
        c = count(results, pinned_inputs, per_op[op])
        lines.append(f"| {op} | {c['passed']} | {c['pinned']} | {c['failed']} | {c['refused']} |")
    pinned_passes = sorted((t, pinned_inputs[(su, t)]) for (su, t), (s, _) in results.items()
                           if s == "passed" and pinned_inputs.get((su, t)))
    if pinned_passes:
        lines += ["", "## Tests that pass with pinned shape inputs", "", "| test | pinned inputs |", "| --- | --- |"]
        for t, names in pinned_passes:
            lines.append(f"| {t} | {names} |")
    not_passing = sorted((t, s) for (su, t), (s, _) in results.items() if s != "passed")
    if not_passing:
        lines += ["", "## Tests that do not pass", "", "| test | status | reason (tests/conformance/expected_failures.txt) |",
                  "| --- | --- | --- |"]
        for t, s in not_passing:
            lines.append(f"| {t} | {s} | {expected.get(t, '(not listed)')} |")
    for heading in KEPT_HEADINGS:
        kept = kept_section(path, heading)
        while kept and not kept[-1].strip():
            kept.pop()
        if kept:
            lines += [""] + kept
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", help="path to the onnxc binary")
    ap.add_argument("--suites", default=",".join(SUITES), help="comma-separated suites (default: all)")
    ap.add_argument("--filter", default="", help="only tests whose name matches this regex")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test")
    ap.add_argument("--target", default="",
                    help="validate the generated code for this instruction set (onnxc validate --target, e.g. avx512, "
                         "avx2, generic; default: onnxc's default). Expected failures may be listed for one target "
                         "only: see the expected-failures file")
    ap.add_argument("--sample", default="1", metavar="K[:OFFSET]",
                    help="keep every K-th of the selected tests (in name order), starting at OFFSET (default 0): a "
                         "fixed sample of the suite for a target whose builds are slow (cross compilers, emulators); "
                         "two targets sharing kernels can take complementary samples (2:0 and 2:1)")
    ap.add_argument("--expected", default=os.path.join(here, "expected_failures.txt"))
    ap.add_argument("--markdown", help="write the per-op table here (e.g. docs/conformance.md)")
    ap.add_argument("--verbose", action="store_true", help="print every test's result")
    ap.add_argument("--save-results", metavar="FILE", help="write every test's result to FILE (JSON)")
    ap.add_argument("--from-results", metavar="FILE",
                    help="run nothing: take the results from FILE (written by --save-results), e.g. to check an "
                         "edited expected-failures list or regenerate --markdown")
    args = ap.parse_args()
    if not args.onnxc and not args.from_results:
        ap.error("--onnxc is required (unless --from-results)")

    if not os.path.isdir(DATA_ROOT):
        print(f"error: {DATA_ROOT} is missing: install Debian's libonnx-testdata", file=sys.stderr)
        return 2
    missing = missing_cpu_flags(args.target) if not args.from_results else []
    if missing:
        print(f"SKIPPED: this CPU lacks {', '.join(missing)}, which --target {args.target} code needs")
        return 77
    tools, packages = TARGET_TOOLS.get(args.target, ([], ""))
    absent = [t for t in tools if not shutil.which(t)] if not args.from_results else []
    if absent:
        print(f"SKIPPED: --target {args.target} needs {', '.join(absent)} (Debian: apt-get install {packages})")
        return 77
    expected = load_expected(args.expected)
    pattern = re.compile(args.filter) if args.filter else None
    tests = []
    for suite in args.suites.split(","):
        suite_dir = os.path.join(DATA_ROOT, suite)
        if not os.path.isdir(suite_dir):
            print(f"error: suite {suite} not found in {DATA_ROOT}", file=sys.stderr)
            return 2
        for test in sorted(os.listdir(suite_dir)):
            if pattern and not pattern.search(test):
                continue
            if os.path.exists(os.path.join(suite_dir, test, "model.onnx")):
                tests.append((suite, test))
    every, _, offset = args.sample.partition(":")
    if not every.isdigit() or int(every) < 1 or (offset and not offset.isdigit()):
        ap.error(f"--sample {args.sample}: expected K or K:OFFSET with K >= 1")
    tests = tests[int(offset or 0)::int(every)]
    if not tests:
        print("error: no tests selected", file=sys.stderr)
        return 2

    results = {}
    pinned_inputs = {}  # (suite, test) -> the inputs validate pinned, e.g. "shape"
    started = time.time()
    if args.from_results:
        with open(args.from_results) as f:
            saved = {(r["suite"], r["test"]): r for r in json.load(f)}
        tests = [key for key in tests if key in saved]
        for key in tests:
            results[key] = (saved[key]["status"], saved[key]["detail"])
            pinned_inputs[key] = saved[key]["pinned"]
    else:
        # The runtime headers each test includes are precompiled once per header set for the whole run (most of
        # a small model's build time is parsing them), in a directory that lives as long as the run.
        with tempfile.TemporaryDirectory(prefix="onnxc-pch-") as pch_cache, \
                concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_one, args.onnxc, s, t, args.timeout, args.target, pch_cache) for s, t in tests]
            for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
                suite, test, status, detail, pinned, secs = fut.result()
                results[(suite, test)] = (status, detail)
                pinned_inputs[(suite, test)] = pinned
                if args.verbose or (status != "passed" and test not in expected):
                    print(f"[{i}/{len(tests)}] {status:7} {suite}/{test} ({secs:.1f} s) "
                          f"{detail if status != 'passed' else ''}")
    if args.save_results:
        with open(args.save_results, "w") as f:
            json.dump([{"suite": su, "test": t, "status": st, "detail": d, "pinned": pinned_inputs[(su, t)]}
                       for (su, t), (st, d) in sorted(results.items())], f, indent=1)

    ops_of = {key: model_ops(os.path.join(DATA_ROOT, key[0], key[1], "model.onnx")) for key in results}
    counts = count(results, pinned_inputs)
    refused_ops = collections.Counter()
    for key, (status, _) in results.items():
        if status == "refused":
            for op in ops_of[key]:
                refused_ops[op] += 1
    unexpected_fail = sorted(t for (s, t), (st, _) in results.items() if st != "passed" and t not in expected)
    unexpected_pass = sorted(t for (s, t), (st, _) in results.items() if st == "passed" and t in expected)

    if refused_ops:
        print("refused tests by op (a test counts for each op it uses): " +
              ", ".join(f"{op} {n}" for op, n in sorted(refused_ops.items(), key=lambda kv: (-kv[1], kv[0]))))
    for t in unexpected_fail:
        print(f"UNEXPECTED FAILURE: {t} (add a fix, or list it with a reason in {args.expected})")
    for t in unexpected_pass:
        print(f"now passing: {t} (remove it from {args.expected})")
    if args.markdown and args.target:
        update_target_row(args.markdown, args.target, results, pinned_inputs)
        print(f"updated the {args.target} row of {args.markdown}")
    elif args.markdown:
        write_markdown(args.markdown, results, pinned_inputs, ops_of, expected)
        print(f"wrote {args.markdown}")
    print(f"{passed_line(counts)}, {counts['failed']} failed, {counts['refused']} refused as unsupported "
          f"({len(tests)} tests, {time.time() - started:.0f} s)")
    return 1 if unexpected_fail else 0


if __name__ == "__main__":
    sys.exit(main())
