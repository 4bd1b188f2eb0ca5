#!/usr/bin/python3
"""Generate compiler/ops/onnx_schemas.cpp: the signature of every ONNX operator version.

A signature is what the IR spec says a node must satisfy regardless of its tensors: which
attributes exist (name, type, required), how many inputs and outputs it takes, and which of
them may be left empty. passes/validate_nodes.cpp checks every node against it.

Run with Debian's interpreter (it has python3-onnx):

    /usr/bin/python3 tools/gen_op_schemas.py            # writes compiler/ops/onnx_schemas.cpp
    /usr/bin/python3 tools/gen_op_schemas.py --check    # exits 1 if the committed file is stale
    /usr/bin/python3 tools/gen_op_schemas.py -o FILE    # writes elsewhere

Sources:
  1. python-onnx's schema registry (onnx 1.12: ai.onnx up to opset 17, ai.onnx.ml up to 3).
     Whether a schema tolerates attributes it does not declare (OpSchema::AllowUncheckedAttributes,
     not exposed to Python) is probed by running onnx.checker.check_node on a node carrying an
     undeclared attribute.
  2. For every newer since_version (the list comes from tools/gen_op_versions.py), the hand
     tables below, transcribed from the ONNX operator changelog (docs/Changelog.md of onnx/onnx).
     A version listed in neither table is emitted as `exact = false`: the validator then only
     checks the types of attributes it knows from the op's newest known signature, so a model
     is never refused on a guess.
"""

import argparse
import os
import sys

import onnx
import onnx.checker
import onnx.defs
import onnx.helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_op_versions  # noqa: E402  (same folder; its collect() gives every since_version)

DOMAINS = gen_op_versions.DOMAINS
UNBOUNDED = 2147483647  # python-onnx's max_input/max_output for variadic parameters

ATTR_TYPES = {  # onnx.defs.OpSchema.AttrType name -> C++ AttrType enumerator
    "FLOAT": "Float", "INT": "Int", "STRING": "String", "TENSOR": "Tensor", "GRAPH": "Graph",
    "FLOATS": "Floats", "INTS": "Ints", "STRINGS": "Strings", "TENSORS": "Tensors",
    "GRAPHS": "Graphs", "SPARSE_TENSOR": "SparseTensor", "SPARSE_TENSORS": "SparseTensors",
    "TYPE_PROTO": "TypeProto", "TYPE_PROTOS": "TypeProtos",
}


class Signature:
    def __init__(self, attrs, inputs, outputs, min_in, max_in, min_out, max_out,
                 unknown_attrs_ok=False, exact=True):
        self.attrs = attrs          # [(name, type, required)] sorted by name
        self.inputs = inputs        # [(name, "Single" | "Optional" | "Variadic")]
        self.outputs = outputs
        self.min_in, self.max_in, self.min_out, self.max_out = min_in, max_in, min_out, max_out
        self.unknown_attrs_ok = unknown_attrs_ok
        self.exact = exact

    def inexact(self):
        return Signature(self.attrs, self.inputs, self.outputs, self.min_in, self.max_in,
                         self.min_out, self.max_out, True, False)


def sig(attrs=(), inputs=(), outputs=()):
    """A hand-written signature. attrs: "name:TYPE" or "name:TYPE!" (required);
    params: "name" (single), "name?" (optional), "name*" (variadic, at least one)."""
    def params(ps):
        out = []
        for p in ps:
            opt = {"?": "Optional", "*": "Variadic"}.get(p[-1], "Single")
            out.append((p.rstrip("?*"), opt))
        return out

    def bounds(ps):
        lo = sum(1 for _, o in ps if o != "Optional")
        hi = UNBOUNDED if ps and ps[-1][1] == "Variadic" else len(ps)
        return lo, hi

    parsed = []
    for a in attrs:
        name, t = a.split(":")
        parsed.append((name, t.rstrip("!"), t.endswith("!")))
    ins, outs = params(inputs), params(outputs)
    return Signature(sorted(parsed), ins, outs, *bounds(ins), *bounds(outs))


SAME = "same"  # same attributes and arity as the op's previous version (only types grew)

POOL_ATTRS = ["auto_pad:STRING", "ceil_mode:INT", "dilations:INTS", "kernel_shape:INTS!",
              "pads:INTS", "strides:INTS"]
REDUCE_18 = sig(["keepdims:INT", "noop_with_empty_axes:INT"], ["data", "axes?"], ["reduced"])
CAST_19 = sig(["saturate:INT", "to:INT!"], ["input"], ["output"])

# ai.onnx versions after opset 17, by (op, since_version). Transcribed from docs/Changelog.md
# of onnx/onnx ("Version N of the default ONNX operator set"). Opset 22 only widened type
# constraints (bfloat16) and so did the listed SAME entries of opsets 19 to 25 (float8, int4,
# float4, float8e8m0, int2). Versions left out (Attention, DeformConv, RotaryEmbedding,
# TensorScatter, ImageDecoder, the string ops, Cast/CastLike from 24, Q/DQ from 23, ...) are
# emitted inexact.
ONNX_NEWER_SIGNATURES = {
    ("BitwiseAnd", 18): sig([], ["A", "B"], ["C"]),
    ("BitwiseOr", 18): sig([], ["A", "B"], ["C"]),
    ("BitwiseXor", 18): sig([], ["A", "B"], ["C"]),
    ("BitwiseNot", 18): sig([], ["X"], ["Y"]),
    ("CenterCropPad", 18): sig(["axes:INTS"], ["input_data", "shape"], ["output_data"]),
    ("Col2Im", 18): sig(["dilations:INTS", "pads:INTS", "strides:INTS"],
                        ["input", "image_shape", "block_shape"], ["output"]),
    ("GroupNormalization", 18): sig(["epsilon:FLOAT", "num_groups:INT!"], ["X", "scale", "bias"], ["Y"]),
    ("LpPool", 18): sig(["auto_pad:STRING", "ceil_mode:INT", "dilations:INTS", "kernel_shape:INTS!",
                         "p:INT", "pads:INTS", "strides:INTS"], ["X"], ["Y"]),
    ("Mish", 18): sig([], ["X"], ["Y"]),
    ("Pad", 18): sig(["mode:STRING"], ["data", "pads", "constant_value?", "axes?"], ["output"]),
    ("ReduceL1", 18): REDUCE_18,
    ("ReduceL2", 18): REDUCE_18,
    ("ReduceLogSum", 18): REDUCE_18,
    ("ReduceLogSumExp", 18): REDUCE_18,
    ("ReduceMax", 18): REDUCE_18,
    ("ReduceMean", 18): REDUCE_18,
    ("ReduceMin", 18): REDUCE_18,
    ("ReduceProd", 18): REDUCE_18,
    ("ReduceSumSquare", 18): REDUCE_18,
    ("Resize", 18): sig(["antialias:INT", "axes:INTS", "coordinate_transformation_mode:STRING",
                         "cubic_coeff_a:FLOAT", "exclude_outside:INT", "extrapolation_value:FLOAT",
                         "keep_aspect_ratio_policy:STRING", "mode:STRING", "nearest_mode:STRING"],
                        ["X", "roi?", "scales?", "sizes?"], ["Y"]),
    ("ScatterElements", 18): sig(["axis:INT", "reduction:STRING"], ["data", "indices", "updates"], ["output"]),
    ("ScatterND", 18): sig(["reduction:STRING"], ["data", "indices", "updates"], ["output"]),
    ("Split", 18): sig(["axis:INT", "num_outputs:INT"], ["input", "split?"], ["outputs*"]),
    # opset 19
    ("AveragePool", 19): sig(POOL_ATTRS + ["count_include_pad:INT"], ["X"], ["Y"]),
    ("Cast", 19): CAST_19,
    ("CastLike", 19): sig(["saturate:INT"], ["input", "target_type"], ["output"]),
    ("Constant", 19): SAME, ("DequantizeLinear", 19): SAME, ("Equal", 19): SAME,
    ("Identity", 19): SAME, ("If", 19): SAME, ("Loop", 19): SAME, ("Pad", 19): SAME,
    ("QuantizeLinear", 19): sig(["axis:INT", "saturate:INT"], ["x", "y_scale", "y_zero_point?"], ["y"]),
    ("Reshape", 19): SAME, ("Resize", 19): SAME, ("Scan", 19): SAME, ("Shape", 19): SAME,
    ("Size", 19): SAME,
    # opset 20
    ("AffineGrid", 20): sig(["align_corners:INT"], ["theta", "size"], ["grid"]),
    ("ConstantOfShape", 20): SAME,
    ("DFT", 20): sig(["inverse:INT", "onesided:INT"], ["input", "dft_length?", "axis?"], ["output"]),
    ("Gelu", 20): sig(["approximate:STRING"], ["X"], ["Y"]),
    ("GridSample", 20): sig(["align_corners:INT", "mode:STRING", "padding_mode:STRING"], ["X", "grid"], ["Y"]),
    ("IsInf", 20): SAME, ("IsNaN", 20): SAME, ("ReduceMax", 20): SAME, ("ReduceMin", 20): SAME,
    # opset 21
    ("Cast", 21): SAME, ("CastLike", 21): SAME, ("Constant", 21): SAME, ("ConstantOfShape", 21): SAME,
    ("DequantizeLinear", 21): sig(["axis:INT", "block_size:INT"], ["x", "x_scale", "x_zero_point?"], ["y"]),
    ("Flatten", 21): SAME,
    ("GroupNormalization", 21): sig(["epsilon:FLOAT", "num_groups:INT!", "stash_type:INT"],
                                    ["X", "scale", "bias"], ["Y"]),
    ("Identity", 21): SAME, ("If", 21): SAME, ("Loop", 21): SAME, ("Pad", 21): SAME,
    ("QLinearMatMul", 21): SAME,
    ("QuantizeLinear", 21): sig(["axis:INT", "block_size:INT", "output_dtype:INT", "saturate:INT"],
                                ["x", "y_scale", "y_zero_point?"], ["y"]),
    ("Reshape", 21): SAME, ("Scan", 21): SAME, ("Shape", 21): SAME, ("Size", 21): SAME,
    ("Squeeze", 21): SAME, ("Transpose", 21): SAME, ("Unsqueeze", 21): SAME,
    # opset 23 (opset 22 is handled below: every entry SAME)
    ("Cast", 23): SAME, ("CastLike", 23): SAME, ("Constant", 23): SAME, ("ConstantOfShape", 23): SAME,
    ("Flatten", 23): SAME, ("Identity", 23): SAME, ("If", 23): SAME, ("Loop", 23): SAME,
    ("Pad", 23): SAME,
    ("RMSNormalization", 23): sig(["axis:INT", "epsilon:FLOAT", "stash_type:INT"], ["X", "scale"], ["Y"]),
    ("Reshape", 23): SAME, ("Scan", 23): SAME, ("Shape", 23): SAME, ("Size", 23): SAME,
    ("Squeeze", 23): SAME, ("Transpose", 23): SAME, ("Unsqueeze", 23): SAME,
    # opset 24
    ("Constant", 24): SAME, ("ConstantOfShape", 24): SAME, ("Flatten", 24): SAME,
    ("Identity", 24): SAME, ("If", 24): SAME, ("Loop", 24): SAME, ("Pad", 24): SAME,
    ("Reshape", 24): SAME, ("Scan", 24): SAME, ("Shape", 24): SAME, ("Size", 24): SAME,
    ("SplitToSequence", 24): SAME, ("Squeeze", 24): SAME,
    ("Swish", 24): sig(["alpha:FLOAT"], ["X"], ["Y"]),
    ("TopK", 24): SAME, ("Transpose", 24): SAME, ("Unsqueeze", 24): SAME,
    # opset 25
    ("Constant", 25): SAME, ("ConstantOfShape", 25): SAME, ("Flatten", 25): SAME,
    ("Identity", 25): SAME, ("If", 25): SAME, ("Loop", 25): SAME, ("Pad", 25): SAME,
    ("Reshape", 25): SAME, ("Scan", 25): SAME, ("Shape", 25): SAME, ("Size", 25): SAME,
    ("Squeeze", 25): SAME, ("Transpose", 25): SAME, ("Unsqueeze", 25): SAME,
    # opset 26
    ("BitCast", 26): sig(["to:INT!"], ["input"], ["output"]),
    ("CumProd", 26): sig(["exclusive:INT", "reverse:INT"], ["x", "axis"], ["y"]),
}
OPSETS_ONLY_WIDENING_TYPES = {22}


def accepts_undeclared_attributes(schema):
    """True if onnx's checker lets a node of this schema carry an attribute it does not declare."""
    inputs = [f"x{i}" for i in range(schema.min_input)]
    outputs = [f"y{i}" for i in range(max(schema.min_output, 1) if schema.max_output > 0 else 0)]
    node = onnx.helper.make_node(schema.name, inputs, outputs, domain=schema.domain, onnxc_probe=1)
    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = 8
    ctx.opset_imports = {schema.domain: schema.since_version}
    try:
        onnx.checker.check_node(node, ctx)
    except onnx.checker.ValidationError as e:  # deprecated versions fail before attributes are seen
        return "Unrecognized attribute" not in str(e) and "deprecated" not in str(e)
    return True


def from_python(schema):
    attrs = sorted((name, a.type.name, bool(a.required)) for name, a in schema.attributes.items())
    opt = lambda p: p.option.name  # Single, Optional, Variadic
    return Signature(attrs, [(p.name, opt(p)) for p in schema.inputs],
                     [(p.name, opt(p)) for p in schema.outputs], schema.min_input, schema.max_input,
                     schema.min_output, schema.max_output, accepts_undeclared_attributes(schema))


def collect():
    """Returns {(domain, op): {since_version: Signature}}."""
    versions, _, py_max = gen_op_versions.collect()
    table = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in DOMAINS:
            table.setdefault((s.domain, s.name), {})[s.since_version] = from_python(s)
    errors = []
    for (op, v), entry in ONNX_NEWER_SIGNATURES.items():
        if v not in versions.get(("", op), set()):
            errors.append(f"{op}-{v}: not a since_version known to gen_op_versions.py")
        if v <= py_max[""] and v not in table.get(("", op), {}):
            errors.append(f"{op}-{v}: hand-written, but python-onnx knows opset {v} without it")
    for key, vs in sorted(versions.items()):
        sigs = table.setdefault(key, {})
        previous = None
        for v in sorted(vs):
            if v not in sigs:
                entry = ONNX_NEWER_SIGNATURES.get((key[1], v)) if key[0] == "" else None
                if entry is None and key[0] == "" and v in OPSETS_ONLY_WIDENING_TYPES:
                    entry = SAME
                if entry is SAME:
                    if previous is None:
                        errors.append(f"{key[1]}-{v}: SAME but no previous version")
                        continue
                    sigs[v] = previous
                elif entry is not None:
                    sigs[v] = entry
                elif previous is not None:
                    sigs[v] = previous.inexact()
                else:  # an operator newer than python-onnx that the tables leave out
                    sigs[v] = Signature([], [], [], 0, UNBOUNDED, 0, UNBOUNDED, True, False)
            previous = sigs[v]
    if errors:
        sys.exit("gen_op_schemas.py: inconsistent tables:\n  " + "\n  ".join(errors))
    return table


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_bound(n):
    return "kUnbounded" if n >= UNBOUNDED else str(n)


def render(table):
    out = [
        "// GENERATED by tools/gen_op_schemas.py -- do not edit by hand; rerun the script.",
        "//",
        "// The signature (attributes, input/output arity) of every version of every operator of the",
        f"// ai.onnx (\"\") and ai.onnx.ml domains. Up to ai.onnx opset 17 and ai.onnx.ml opset 3: python-onnx",
        f"// {onnx.__version__}'s schema registry; newer versions: the tables in the script (exact = false where",
        "// the script has none, see the header).",
        '#include "ops/onnx_schemas.h"',
        "",
        "#include <algorithm>",
        "#include <tuple>",
        "",
        "namespace onnxc {",
        "",
        "namespace {",
        "",
        "using A = AttrType;",
        "using P = ParamOption;",
        "",
        "// Sorted by (domain, op_type, since_version), byte-wise.",
        "const std::vector<OpSchema>& schema_table() {",
        "  static const std::vector<OpSchema> kTable = {",
    ]
    for (domain, op) in sorted(table):
        for v, s in sorted(table[(domain, op)].items()):
            attrs = ", ".join(f"{{{c_str(n)}, A::{ATTR_TYPES[t]}, {str(r).lower()}}}" for n, t, r in s.attrs)
            ins = ", ".join(f"{{{c_str(n)}, P::{o}}}" for n, o in s.inputs)
            outs = ", ".join(f"{{{c_str(n)}, P::{o}}}" for n, o in s.outputs)
            out.append(f"      {{{c_str(domain)}, {c_str(op)}, {v}, {{{attrs}}}, {{{ins}}}, {{{outs}}}, "
                       f"{s.min_in}, {c_bound(s.max_in)}, {s.min_out}, {c_bound(s.max_out)}, "
                       f"{str(s.unknown_attrs_ok).lower()}, {str(s.exact).lower()}}},")
    out += [
        "  };",
        "  return kTable;",
        "}",
        "",
        "}  // namespace",
        "",
        "const OpSchema* find_op_schema(const std::string& domain, const std::string& op_type, int since_version) {",
        "  const std::string& d = domain == \"ai.onnx\" ? std::string() : domain;",
        "  const auto& t = schema_table();",
        "  auto key = [](const OpSchema& s) { return std::make_tuple(std::string(s.domain), std::string(s.op_type), s.since_version); };",
        "  auto wanted = std::make_tuple(d, op_type, since_version);",
        "  auto it = std::lower_bound(t.begin(), t.end(), wanted,",
        "                             [&](const OpSchema& s, const decltype(wanted)& w) { return key(s) < w; });",
        "  return it != t.end() && key(*it) == wanted ? &*it : nullptr;",
        "}",
        "",
        "}  // namespace onnxc",
        "",
    ]
    return "\n".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.join(here, "..", "compiler", "ops", "onnx_schemas.cpp")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default=default_out)
    ap.add_argument("--check", action="store_true", help="exit 1 if the output file is stale")
    args = ap.parse_args()
    text = render(collect())
    if args.check:
        with open(args.output) as f:
            if f.read() != text:
                sys.exit(f"{args.output} is stale: rerun tools/gen_op_schemas.py")
        return
    with open(args.output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
