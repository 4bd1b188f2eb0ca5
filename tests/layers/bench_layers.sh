#!/bin/sh
# ctest: onnxc bench --layers and --layers-json on mnist-cnn (tests/models), for a target and a
# thread count. Checks the JSON's keys, one entry per step with code (the Conv, MaxPool, Conv,
# MaxPool, Gemm, Gemm), the hand-counted MACs of the first Conv, the steps' times summing to
# within reason of the whole run's median, the options in both orders, and the roofline cache:
# measured into a fresh XDG_CACHE_HOME, then read from it, and measured again with --remeasure.
#   bench_layers.sh ONNXC MODEL_DIR TARGET THREADS
set -eu
onnxc="$1"; dir="$2"; target="$3"; threads="$4"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
common="$dir/model.onnx --inputs $dir/test_data_set_0 --runs 10 --target $target --threads $threads"

# shellcheck disable=SC2086
"$onnxc" bench $common --layers --layers-json "$work/a.json" > "$work/a.txt"
grep -q "measured now, cached in $work/cache/onnxc/roofline-$target-${threads}t-" "$work/a.txt" ||
  { echo "FAIL: the first run did not measure the roofline into the cache"; cat "$work/a.txt"; exit 1; }
# shellcheck disable=SC2086
"$onnxc" bench --layers-json "$work/b.json" $common --layers > "$work/b.txt"
grep -q "^roofline: .*; cached in $work/cache/onnxc/roofline-$target-${threads}t-" "$work/b.txt" ||
  { echo "FAIL: the second run did not read the cached roofline"; cat "$work/b.txt"; exit 1; }
# shellcheck disable=SC2086
"$onnxc" bench $common --layers --remeasure > "$work/c.txt"
grep -q "measured now" "$work/c.txt" || { echo "FAIL: --remeasure did not measure"; cat "$work/c.txt"; exit 1; }
grep -q "^median_us: " "$work/c.txt" || { echo "FAIL: no median_us line"; cat "$work/c.txt"; exit 1; }

for json in "$work/a.json" "$work/b.json"; do
  /usr/bin/python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for key in ("peak_gflops", "bandwidth_gbps", "steps"):
    assert key in d, f"no {key}"
assert d["peak_gflops"] > 0 and d["bandwidth_gbps"] > 0
steps = d["steps"]
ops = sorted(s["op"] for s in steps)
assert ops == ["Conv", "Conv", "Gemm", "Gemm", "MaxPool", "MaxPool"], ops
for s in steps:
    assert set(s) >= {"index", "name", "op", "us", "macs", "bytes", "gflops", "gbps", "bound", "percent_of_bound"}, s
    assert s["bound"] in ("compute", "memory"), s
    assert s["us"] >= 0, s
assert [s["us"] for s in steps] == sorted((s["us"] for s in steps), reverse=True), "not slowest first"
first_conv = min((s for s in steps if s["op"] == "Conv"), key=lambda s: s["index"])
assert first_conv["macs"] == 8 * 28 * 28 * 25, first_conv  # 8 channels of 28 x 28, 1 x 5 x 5 taps
total = sum(s["us"] for s in steps)
run = d["run_median_us"]
# Medians of separate steps need not add up to the run's median, but not far off.
assert 0.5 * run <= total <= 1.5 * run + 5, (total, run)
print(f"{sys.argv[1]}: {len(steps)} steps, {total:.1f} us of {run:.1f}, peak {d['peak_gflops']}, bw {d['bandwidth_gbps']}")
PY
done
echo "PASS"
