#!/usr/bin/python3
"""Write docs/conformance.md's table of the ai.onnx operators with a version in opsets 18-26: for
each such version, whether onnxc implements it, and the committed test models that use it.

    /usr/bin/python3 tools/opset_table.py build/onnxc [--write docs/conformance.md]

Sources: the since_versions of compiler/ops/onnx_versions.cpp (tools/gen_op_versions.py, checked
against ONNX Runtime 1.30 by tools/ort_since_versions.py), the versions `onnxc --list-operators`
implements, and every model under tests/models whose nodes (subgraphs included) resolve to the
version. NOTES below say what an implemented version still refuses; they are the only hand-kept part.
Without --write the table goes to stdout; with it, it replaces the lines between the markers
"<!-- opset-table begin -->" and "<!-- opset-table end -->".
"""
import argparse
import glob
import os
import re
import subprocess
import sys

import onnx

FIRST = 18
NEWER_TYPES = "4-bit, 2-bit, float4 and float8e8m0 elements refused"
NOTES = {
    "Attention": "softcap after the mask, as the operator defines it (ONNX Runtime: before)",
    "Cast": "float8 types with saturate (float8_casts); " + NEWER_TYPES,
    "CastLike": "float8 types (float8_casts); " + NEWER_TYPES,
    "Constant": NEWER_TYPES,
    "ConstantOfShape": NEWER_TYPES,
    "DequantizeLinear": "int8/uint8/int16/uint16/int32 and float8 inputs; int4/uint4 weights (unpacked when loaded), "
                        "blocked too; 4-bit activations refused",
    "QuantizeLinear": "int8/uint8/int16/uint16 and float8 (saturate) outputs, blocked; 4-bit outputs refused",
    "QLinearMatMul": "int8/uint8",
    "Flatten": NEWER_TYPES, "Identity": NEWER_TYPES, "Pad": NEWER_TYPES, "Reshape": NEWER_TYPES,
    "Shape": NEWER_TYPES, "Size": NEWER_TYPES, "Squeeze": NEWER_TYPES, "Transpose": NEWER_TYPES,
    "Unsqueeze": NEWER_TYPES, "If": NEWER_TYPES, "Loop": NEWER_TYPES, "Scan": NEWER_TYPES,
    "BitCast": "not to bool from other types",
    "Bernoulli": "random: refused like every random operator (no fixed output to test)",
    "RandomNormal": "random: refused", "RandomNormalLike": "random: refused", "RandomUniform": "random: refused",
    "RandomUniformLike": "random: refused", "Multinomial": "random: refused",
    "ImageDecoder": "needs an image codec in generated code",
    "RegexFullMatch": "string operator: needs a regex engine in generated code",
    "StringConcat": "string operator", "StringSplit": "string operator",
    "DeformConv": "2-D only",
}


def onnx_versions(root):
    text = open(os.path.join(root, "compiler", "ops", "onnx_versions.cpp"), encoding="utf-8").read()
    return {m.group(1): [int(v) for v in m.group(2).split(",")]
            for m in re.finditer(r'\{"", "(\w+)", \{([0-9, ]+)\}, (\d+)\}', text) if m.group(3) == "0"}


def implemented(onnxc):
    out = subprocess.run([onnxc, "--list-operators"], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        domain, op, versions = line.split(" ")
        if domain == "ai.onnx":
            result[op] = [int(v) for v in versions.split(",")]
    return result


def graphs(graph):
    yield graph
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g)
            for g in a.graphs:
                yield from graphs(g)


def tests_by_version(root, table):
    """{(op, version): [test model folders]} for versions >= FIRST."""
    found = {}
    for path in sorted(glob.glob(os.path.join(root, "tests", "models", "**", "*.onnx"), recursive=True)):
        try:
            model = onnx.load(path, load_external_data=False)
        except Exception:  # deliberately broken models (tests/bad_models) are not tests of an operator
            continue
        opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        if opset < FIRST:
            continue
        name = os.path.relpath(os.path.dirname(path), os.path.join(root, "tests", "models"))
        for g in graphs(model.graph):
            for node in g.node:
                if node.domain not in ("", "ai.onnx") or node.op_type not in table:
                    continue
                version = max((v for v in table[node.op_type] if v <= opset), default=0)
                if version >= FIRST and name not in found.setdefault((node.op_type, version), []):
                    found[(node.op_type, version)].append(name)
    return found


def render(table, done, tests):
    rows = ["| operator | versions from 18 | tests (tests/models/opset_new/..., else tests/models/...) | notes |",
            "| --- | --- | --- | --- |"]
    count = implemented_count = 0
    for op in sorted(table):
        newer = [v for v in table[op] if v >= FIRST]
        if not newer:
            continue
        marks, names = [], []
        for v in newer:
            ok = v in done.get(op, [])
            count += 1
            implemented_count += ok
            marks.append(str(v) if ok else f"**{v} no**")
            # At most two tests a version, those of tests/models/opset_new first.
            found = sorted(tests.get((op, v), []), key=lambda t: (not t.startswith("opset_new/"), t))
            names += [f"{t.replace('opset_new/', '')} ({v})" for t in found[:2]]
        rows.append(f"| {op} | {', '.join(marks)} | {', '.join(names) or '-'} | {NOTES.get(op, '')} |")
    summary = (f"{implemented_count} of {count} operator versions of opsets {FIRST}-26 implemented, over "
               f"{len(rows) - 2} operators (generated by tools/opset_table.py).")
    return "\n".join([summary, ""] + rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("onnxc")
    ap.add_argument("--write", metavar="MARKDOWN")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    table = onnx_versions(root)
    text = render(table, implemented(args.onnxc), tests_by_version(root, table))
    if not args.write:
        sys.stdout.write(text)
        return 0
    doc = open(args.write, encoding="utf-8").read()
    begin, end = "<!-- opset-table begin -->\n", "<!-- opset-table end -->"
    if begin not in doc or end not in doc:
        sys.exit(f"{args.write}: no '{begin.strip()}' ... '{end}' markers")
    head, rest = doc.split(begin, 1)
    open(args.write, "w", encoding="utf-8").write(head + begin + text + end + rest.split(end, 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
