#!/usr/bin/python3
"""onnxc's static types and shapes against ONNX's own shape inference.

For every model (the ONNX backend tests of Debian's libonnx-testdata, or the model directories
given), runs Debian's python3-onnx `onnx.shape_inference.infer_shapes` (strict, with data
propagation) and `onnxc MODEL --check --report-json`, and compares the dtype and shape of every
value of the main graph for which ONNX infers a fully static shape. Inputs with symbolic or
unknown dims are bound to the shapes of the first test data set, for ONNX (by rewriting the
input's type) and for onnxc (--shape), so both infer from the same facts.

Prints `N models compared, N values agree, N disagree` plus the models onnxc refuses (they are
the conformance runner's business, not this test's) and those ONNX cannot infer. Exits 1 on any
disagreement not listed, with a reason, in expected_disagreements.txt beside this script.

Usage:
    tests/shape_inference/compare_shapes.py --onnxc build/onnxc [--filter REGEX] [DIR ...]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

import onnx
import onnx.shape_inference

DATA_ROOT = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
HERE = os.path.dirname(os.path.abspath(__file__))


def dtype_name(elem_type):
    """onnxc's name of an ONNX element type: the TensorProto name in lower case."""
    return onnx.TensorProto.DataType.Name(elem_type).lower()


def test_data_shapes(model_dir, model):
    """Shapes of the inputs in test_data_set_0 (by the model's input order), or {}."""
    data_dir = os.path.join(model_dir, "test_data_set_0")
    shapes = {}
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    for k, graph_input in enumerate(inputs):
        path = os.path.join(data_dir, f"input_{k}.pb")
        if not os.path.exists(path):
            continue
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            try:
                t.ParseFromString(f.read())
            except Exception:
                continue  # a sequence or optional input: not a tensor
        shapes[graph_input.name] = list(t.dims)
    return shapes


def bind_unknown_dims(model, data_shapes):
    """Gives every tensor input with a symbolic or unknown dim its test-data shape, in place.
    Returns the --shape flags that tell onnxc the same."""
    flags = []
    for graph_input in model.graph.input:
        if not graph_input.type.HasField("tensor_type") or graph_input.name not in data_shapes:
            continue
        shape = graph_input.type.tensor_type.shape
        dims = data_shapes[graph_input.name]
        has_shape = graph_input.type.tensor_type.HasField("shape")
        if has_shape and all(d.HasField("dim_value") for d in shape.dim):
            continue
        if not dims:
            continue  # a scalar; onnxc's --shape needs at least one dim
        del shape.dim[:]
        for d in dims:
            shape.dim.add().dim_value = d
        flags += ["--shape", f"{graph_input.name}={'x'.join(str(d) for d in dims)}"]
    return flags


def onnx_static_types(model):
    """name -> (dtype, shape) for every main-graph value ONNX inferred completely."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    types = {}
    for vi in list(inferred.graph.input) + list(inferred.graph.value_info) + list(inferred.graph.output):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or not tt.HasField("shape") or tt.elem_type == 0:
            continue
        if not all(d.HasField("dim_value") for d in tt.shape.dim):
            continue
        types[vi.name] = (dtype_name(tt.elem_type), [d.dim_value for d in tt.shape.dim])
    for init in inferred.graph.initializer:
        types[init.name] = (dtype_name(init.data_type), list(init.dims))
    return types


def within_bound(ours, theirs, dynamic_axis):
    """Whether ONNX's type fits onnxc's bounded one: a run-time extent along dynamic_axis (NonZero,
    Unique, NonMaxSuppression), which ONNX may know from a declared output shape, at most the bound."""
    if dynamic_axis is None or ours[0] != theirs[0] or len(ours[1]) != len(theirs[1]):
        return False
    return all(t <= o if d == dynamic_axis else t == o for d, (o, t) in enumerate(zip(ours[1], theirs[1])))


def compare(onnxc, model_dir, extra_flags):
    """('refused'|'onnx-failed'|'compared', agreed values, [disagreement lines])."""
    model_path = os.path.join(model_dir, "model.onnx")
    model = onnx.load(model_path)
    flags = bind_unknown_dims(model, test_data_shapes(model_dir, model)) + extra_flags
    try:
        expected = onnx_static_types(model)
    except Exception as e:  # ONNX's own checker or inference rejects the model
        return "onnx-failed", 0, [str(e).splitlines()[0] if str(e) else type(e).__name__]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "values.json")
        r = subprocess.run([onnxc, model_path, "--check", "--report-json", report] + flags,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            return "refused", 0, [r.stderr.strip().splitlines()[0] if r.stderr.strip() else f"exit {r.returncode}"]
        with open(report) as f:
            values = json.load(f)["values"]
        ours = {v["name"]: (v["dtype"], v["shape"]) for v in values}
        bounded = {v["name"]: v["dynamic_axis"] for v in values if "dynamic_axis" in v}
    agreed, disagreements = 0, []
    for name, (dtype, shape) in sorted(expected.items()):
        if name not in ours:
            continue  # a value onnxc never materialises (e.g. an unused optional output)
        if ours[name] == (dtype, shape) or within_bound(ours[name], (dtype, shape), bounded.get(name)):
            agreed += 1
        else:
            disagreements.append(f"'{name}': onnxc {ours[name][0]} {ours[name][1]}, onnx {dtype} {shape}")
    return "compared", agreed, disagreements


def load_expected(path):
    expected = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, _, reason = line.partition(" ")
                    expected[name] = reason.strip()
    return expected


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnxc", required=True)
    ap.add_argument("--filter", default="", help="only tests whose name matches this regex")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_disagreements.txt"))
    ap.add_argument("--flags", action="append", default=[], metavar="MODEL=FLAGS",
                    help="extra onnxc flags for one model directory, e.g. silero-vad-v5='--constant sr=16000'")
    ap.add_argument("dirs", nargs="*", help="model directories (default: every libonnx-testdata test)")
    args = ap.parse_args()

    if args.dirs:
        dirs = args.dirs
        missing = [d for d in dirs if not os.path.exists(os.path.join(d, "model.onnx"))]
        if missing:
            print(f"skipped: no model.onnx in {', '.join(missing)}")
            return 77
    else:
        if not os.path.isdir(DATA_ROOT):
            print(f"skipped: {DATA_ROOT} is missing (apt-get install libonnx-testdata)")
            return 77
        dirs = [os.path.join(DATA_ROOT, s, t) for s in SUITES if os.path.isdir(os.path.join(DATA_ROOT, s))
                for t in sorted(os.listdir(os.path.join(DATA_ROOT, s)))]
    dirs = [d for d in dirs if re.search(args.filter, os.path.basename(os.path.normpath(d)))]
    expected = load_expected(args.expected)
    extra = {}
    for item in args.flags:
        name, _, flags = item.partition("=")
        extra[name] = flags.split()

    counts = {"compared": 0, "refused": 0, "onnx-failed": 0}
    agreed_total, unexpected, known = 0, [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for d, (status, agreed, notes) in zip(dirs, pool.map(
                lambda d: compare(args.onnxc, d, extra.get(os.path.basename(os.path.normpath(d)), [])), dirs)):
            name = os.path.basename(os.path.normpath(d))
            counts[status] += 1
            agreed_total += agreed
            if status == "compared" and notes:
                (known if name in expected else unexpected).append((name, notes))
    disagreeing = sum(len(n) for _, n in unexpected + known)
    print(f"{counts['compared']} models compared, {agreed_total} values agree, {disagreeing} disagree "
          f"({len(known)} models listed as expected); {counts['refused']} refused by onnxc, "
          f"{counts['onnx-failed']} not inferable by onnx")
    for name, notes in unexpected:
        print(f"DISAGREE {name}")
        for n in notes:
            print(f"    {n}")
    for name, _ in known:
        print(f"expected {name}: {expected[name]}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
