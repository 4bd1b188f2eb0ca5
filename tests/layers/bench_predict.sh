#!/bin/sh
# ctest: onnxc bench --predict-threads 2 (the --layers profile on one thread, each parallel loop's
# tasks timed and handed out as the pool's two threads would take them) on split_steps
# (tests/models/fusion), whose steps each stream 0.5-1.7 MB and split into tasks. Checks, from
# the JSON: every step has two busy times; a step with loops has as many tasks as the generated
# code's parallel loops give it (read from the code bench --keep leaves: one rt::parallel_ranges
# per step, its task count its third argument); the two busy times add up to the step's time,
# the predicted time is at least the busier thread's and at most the step's; a step without
# loops is predicted at its own time; and the whole prediction lies between half and all of
# the one-thread sum. Then --predict-threads with --threads must fail, saying why.
#   bench_predict.sh ONNXC MODEL_DIR
set -eu
onnxc="$1"; dir="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
"$onnxc" bench "$dir/model.onnx" --inputs "$dir/test_data_set_0" --runs 20 --target native --predict-threads 2 \
  --layers-json "$work/p.json" --keep "$work/keep" > "$work/p.txt"
grep -q "^predicted on 2 threads: " "$work/p.txt" || { echo "FAIL: no prediction line"; cat "$work/p.txt"; exit 1; }

/usr/bin/python3 - "$work/p.json" "$work/keep" <<'PY'
import glob, json, re, sys
d = json.load(open(sys.argv[1]))
assert d["predicted_threads"] == 2, d.get("predicted_threads")
# The task count of each step's parallel_ranges call, from the generated code's step comments.
code = open(glob.glob(sys.argv[2] + "/model.cpp")[0]).read()
tasks_of = {}
for m in re.finditer(r"^  // (\d+)\. .*?(?=^  // \d+\. |\Z)", code, re.S | re.M):
    calls = re.findall(r"rt::parallel_ranges\(parallel, \d+, (\d+),", m.group(0))
    tasks_of[int(m.group(1))] = sum(int(t) for t in calls if int(t) > 1)
split = 0
for s in d["steps"]:
    busy, us, pred = s["busy_us"], s["us"], s["predicted_us"]
    assert len(busy) == 2, s
    if s["loops"] == 0:
        assert pred == us, s
        continue
    split += 1
    if s["index"] in tasks_of and tasks_of[s["index"]]:
        assert s["tasks"] == tasks_of[s["index"]], (s, tasks_of[s["index"]])
    # Medians of separate quantities: close, not equal.
    assert 0.6 * us - 5 <= busy[0] + busy[1] <= 1.4 * us + 5, s
    assert pred >= 0.9 * max(busy) - 2 and pred <= 1.1 * us + 2, s
assert split >= 6, f"only {split} steps split"
assert 0.45 <= d["predicted_scaling"] <= 1.0, d["predicted_scaling"]
print(f"{len(d['steps'])} steps, {split} split, predicted scaling {d['predicted_scaling']:.3f}")
PY

if "$onnxc" bench "$dir/model.onnx" --predict-threads 2 --threads 2 > "$work/e.txt" 2>&1; then
  echo "FAIL: --predict-threads with --threads did not fail"; exit 1
fi
grep -q "error: --predict-threads" "$work/e.txt" || { echo "FAIL: no error message"; cat "$work/e.txt"; exit 1; }
echo "PASS"
