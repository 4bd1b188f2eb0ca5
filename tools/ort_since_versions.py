#!/usr/bin/python3
"""Read which since_version ONNX Runtime resolves every ai.onnx operator to, at opsets 18 to 26,
and compare it with onnxc's table (compiler/ops/onnx_versions.cpp, tools/gen_op_versions.py).

    /usr/bin/python3 tools/ort_since_versions.py /work/ort [--extra OP ...]

For each operator of the table (and each --extra name) and each opset, it writes a model whose one
node has twelve inputs (none for the variadic ones), which ONNX Runtime refuses while loading with
a message naming the schema it resolved ("schema(::CumProd:26) has input size 12 ..."), or "No Op
registered ... with domain_version of N" where the operator does not exist yet. Exit 1 when a
version differs from onnxc's table. Constant cannot be read so (ONNX Runtime evaluates it first), nor the removed Scatter and Upsample.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

OPSETS = range(18, 27)
LOADER = """
const ort = require(process.argv[1] + '/node_modules/onnxruntime-node');
const fs = require('fs');
(async () => {
  for (const f of fs.readdirSync(process.argv[2]).sort()) {
    let msg = 'loaded';
    try { await ort.InferenceSession.create(process.argv[2] + '/' + f); } catch (e) { msg = String(e.message); }
    const schema = msg.match(/schema\\(::[A-Za-z0-9]+:(\\d+)\\)/);
    const none = /No Op registered for/.test(msg);
    const removed = /Op registered for \S+ is deprecated/.test(msg);
    console.log(f + ' ' + (schema ? schema[1] : none ? '0' : removed ? 'removed' : '?'));
  }
})();
"""


def onnxc_table(root):
    text = open(os.path.join(root, "compiler", "ops", "onnx_versions.cpp"), encoding="utf-8").read()
    return {m.group(1): [int(v) for v in m.group(2).split(",")]
            for m in re.finditer(r'\{"", "(\w+)", \{([0-9, ]+)\}', text)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ort", help="folder of ort-run.mjs (with node_modules/onnxruntime-node)")
    ap.add_argument("--extra", nargs="*", default=[], help="operator names outside onnxc's table")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    table = onnxc_table(root)
    names = sorted(set(table) | set(args.extra))
    ort, removed = {}, set()
    with tempfile.TemporaryDirectory(prefix="onnxc-ort-since-") as tmp:
        for op in names:
            for opset in OPSETS:
                for tag, count in (("a", 12), ("b", 0)):
                    inputs = [f"x{i}" for i in range(count)]
                    graph = helper.make_graph(
                        [helper.make_node(op, inputs, ["y"])], "probe",
                        [helper.make_tensor_value_info(i, TensorProto.FLOAT, [2]) for i in inputs],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
                    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
                    model.ir_version = 13
                    onnx.save(model, os.path.join(tmp, f"{op}.{opset}.{tag}.onnx"))
        out = subprocess.run(["node", "-e", LOADER, os.path.abspath(args.ort), tmp],
                             check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, since = line.split(" ")
        op, opset, _, _ = name.split(".")
        if since == "removed":
            removed.add(op)
        elif since != "?":
            ort.setdefault(op, {})[int(opset)] = int(since)
    differ = compared = 0
    for op in names:
        if op == "Constant" or op in removed:
            continue
        compared += 1
        got = ort.get(op, {})
        unread = [o for o in OPSETS if o not in got]
        mine = table.get(op, [])
        expected = {o: max([v for v in mine if v <= o], default=0) for o in OPSETS}
        wrong = {o: (got[o], expected[o]) for o in OPSETS if o in got and got[o] != expected[o]}
        if wrong or unread:
            differ += 1
            print(f"{op}: ONNX Runtime / onnxc at opset " +
                  ", ".join(f"{o}: {a} / {b}" for o, (a, b) in sorted(wrong.items())) +
                  (f" (unread at {unread})" if unread else ""))
    print(f"{compared} operators at opsets {OPSETS[0]}-{OPSETS[-1]}: {differ} differ from onnxc's table")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
