#!/usr/bin/python3
"""Generate compiler/ops/onnx_versions.cpp: the since_version history of every ONNX operator.

Run with Debian's interpreter (it has python3-onnx):

    /usr/bin/python3 tools/gen_op_versions.py            # writes compiler/ops/onnx_versions.cpp
    /usr/bin/python3 tools/gen_op_versions.py --check    # exits 1 if the committed file is stale
    /usr/bin/python3 tools/gen_op_versions.py -o FILE    # writes elsewhere

Sources, merged:
  1. python-onnx's schema registry (onnx.defs.get_all_schemas_with_history()). Debian bookworm
     ships onnx 1.12, which knows ai.onnx up to opset 17 and ai.onnx.ml up to opset 3.
  2. The hand-written tables below for every newer opset, transcribed from the public ONNX
     documents cited next to each opset. If a newer python-onnx is installed, entries it already
     knows are cross-checked against these tables instead of being trusted blindly.

Only the domains "" (ai.onnx), "ai.onnx.ml" and "ai.onnx.preview.training" are emitted. Output is deterministic: ops are
sorted by (domain, op_type) with byte-wise ordering (the same order std::string's operator<
uses), versions ascending.
"""

import argparse
import os
import sys

import onnx
import onnx.defs

TRAINING = "ai.onnx.preview.training"
DOMAINS = ("", "ai.onnx.ml", TRAINING)

# Newest opset of each domain that this table covers. Keep in step with the tables below.
MAX_OPSET = {"": 26, "ai.onnx.ml": 5, TRAINING: 1}

# ---------------------------------------------------------------------------------------------
# ai.onnx (domain ""): operators that got a new since_version in each opset after 17.
# Each list is the complete set of schemas registered for that opset (new operators and new
# versions of existing ones), i.e. the contents of `class OpSet_Onnx_verN` in onnx's
# onnx/defs/operator_sets.h.
# ---------------------------------------------------------------------------------------------
ONNX_NEWER = {
    # Opset 18 (ONNX 1.13). Source: onnx/onnx onnx/defs/operator_sets.h @ 9633c87772a7,
    # OpSet_Onnx_ver18; same list in docs/Changelog.md "Version 18 of the default ONNX operator set".
    18: [
        "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CenterCropPad", "Col2Im",
        "GroupNormalization", "LpPool", "Mish", "OptionalGetElement", "OptionalHasElement", "Pad",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
        "ReduceMin", "ReduceProd", "ReduceSumSquare", "Resize", "ScatterElements", "ScatterND",
        "Split",
    ],
    # Opset 19 (ONNX 1.14). Source: onnx/onnx onnx/defs/operator_sets.h @ 9633c87772a7,
    # OpSet_Onnx_ver19.
    19: [
        "AveragePool", "Cast", "CastLike", "Constant", "DeformConv", "DequantizeLinear", "Equal",
        "Identity", "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Resize", "Scan", "Shape",
        "Size",
    ],
    # Opset 20 (ONNX 1.15). Source: onnx/onnx onnx/defs/operator_sets.h @ 9633c87772a7,
    # OpSet_Onnx_ver20.
    20: [
        "AffineGrid", "ConstantOfShape", "DFT", "Gelu", "GridSample", "ImageDecoder", "IsInf",
        "IsNaN", "ReduceMax", "ReduceMin", "RegexFullMatch", "StringConcat", "StringSplit",
    ],
    # Opset 21 (ONNX 1.16). Source: onnx/onnx onnx/defs/operator_sets.h @ 9633c87772a7,
    # OpSet_Onnx_ver21; matches the ONNX v1.16.0 release notes ("ai.onnx Opset 21": int4/uint4
    # for Cast ... Unsqueeze, blocked Q/DQ, QLinearMatMul scales, GroupNormalization stash_type).
    21: [
        "Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten",
        "GroupNormalization", "Identity", "If", "Loop", "Pad", "QLinearMatMul", "QuantizeLinear",
        "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze",
    ],
    # Opset 22 (ONNX 1.17, bfloat16 everywhere). Source: onnx/onnx onnx/defs/operator_sets.h
    # @ 9633c87772a7, OpSet_Onnx_ver22.
    22: [
        "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "Bernoulli", "Conv",
        "ConvTranspose", "Cos", "Cosh", "DeformConv", "Det", "Dropout", "Elu", "EyeLike",
        "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GRU", "GridSample", "HardSigmoid",
        "HardSwish", "InstanceNormalization", "LpNormalization", "LpPool", "LSTM", "MaxPool",
        "MaxRoiPool", "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss", "RNN",
        "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "RoiAlign",
        "Round", "Selu", "Sin", "Sinh", "Softplus", "Softsign", "Tan", "ThresholdedRelu",
    ],
    # Opset 23 (ONNX 1.18). Source: ONNX v1.18.0 release notes, "Key Updates / ai.onnx Opset 23:
    # Attention, Cast, CastLike, Constant, ConstantOfShape, DequantizeLinear, Flatten, Identity,
    # If, Loop, Pad, QuantizeLinear, RMSNormalization, Reshape, RotaryEmbedding, Scan, Shape,
    # Size, Squeeze, Transpose, Unsqueeze"; the same 21 entries in OpSet_Onnx_ver23 of
    # operator_sets.h (as vendored by xadupre/onnx-light). onnx.ai operator pages: Attention-23,
    # RMSNormalization-23, RotaryEmbedding-23.
    23: [
        "Attention", "Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear",
        "Flatten", "Identity", "If", "Loop", "Pad", "QuantizeLinear", "RMSNormalization",
        "Reshape", "RotaryEmbedding", "Scan", "Shape", "Size", "Squeeze", "Transpose",
        "Unsqueeze",
    ],
    # Opset 24 (ONNX 1.19). Source: ONNX v1.19.0 release notes, "ai.onnx Opset 24: Added Swish
    # op; Added TensorScatter op and updated Attention op; Enabled FLOAT8E8M0 for QuantizeLinear,
    # DequantizeLinear, Cast, CastLike, Constant, ConstantOfShape, Identity, Reshape, Shape, Size,
    # If, Loop, Scan, Flatten, Pad, Squeeze, Unsqueeze, and Transpose; Enabled BF16 for TopK and
    # SplitToSequence"; same 23 entries in OpSet_Onnx_ver24. onnx.ai pages: Swish-24,
    # TensorScatter-24, TopK-24, Attention-24.
    24: [
        "Attention", "Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear",
        "Flatten", "Identity", "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Scan", "Shape",
        "Size", "SplitToSequence", "Squeeze", "Swish", "TensorScatter", "TopK", "Transpose",
        "Unsqueeze",
    ],
    # Opset 25 (ONNX 1.20, 2-bit int types). Source: ONNX v1.20.0 release notes, "Updated Op
    # list: Cast, CastLike, Constant, ConstantOfShape, DequantizeLinear, Flatten, Identity, If,
    # Loop, Pad, QuantizeLinear, Reshape, Scan, Shape, Size, Squeeze, Transpose, Unsqueeze";
    # same 18 entries in OpSet_Onnx_ver25. onnx.ai pages: Cast-25, CastLike-25.
    25: [
        "Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten",
        "Identity", "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size",
        "Squeeze", "Transpose", "Unsqueeze",
    ],
    # Opset 26 (ONNX 1.21). Source: ONNX Runtime 1.30's schema registry, read by
    # tools/ort_since_versions.py: at opsets 18 to 26 it resolves every operator of this table to
    # the since_version listed here, and the only opset-26 schemas are two new operators.
    # onnx.ai pages: BitCast, CumProd.
    26: ["BitCast", "CumProd"],
    # Opset 27 (ONNX 1.22) is not covered: ONNX Runtime 1.30 refuses models importing it.
}

# ---------------------------------------------------------------------------------------------
# ai.onnx.ml: opsets after 3. Source: onnx/onnx onnx/defs/operator_sets_ml.h @ edf0816efea8
# (OpSet_OnnxML_ver4 = LabelEncoder; OpSet_OnnxML_ver5 = TreeEnsemble, TreeEnsembleRegressor,
# TreeEnsembleClassifier) and the ONNX v1.16.0 release notes ("ai.onnx.ml Opset 5: Added new
# operator TreeEnsemble; Deprecated TreeEnsembleClassifier and TreeEnsembleRegressor").
# ---------------------------------------------------------------------------------------------
ML_NEWER = {
    4: ["LabelEncoder"],
    5: ["TreeEnsemble", "TreeEnsembleClassifier", "TreeEnsembleRegressor"],
}

# ai.onnx.preview.training: still opset 1 (Adagrad, Adam, Gradient, Momentum) in every ONNX
# release so far; python-onnx knows all of it.
NEWER = {"": ONNX_NEWER, "ai.onnx.ml": ML_NEWER, TRAINING: {}}

# Deprecations after python-onnx's knowledge, (domain, op) -> opset whose schema marks the op
# deprecated (that version is also in the op's since_version list, as ONNX registers it).
# onnx.ai: "TreeEnsembleClassifier - 5 (ai.onnx.ml): This version of the operator has been
# deprecated since version 5 of domain ai.onnx.ml"; same for TreeEnsembleRegressor.
# (Upsample-10 and Scatter-11 come from python-onnx's schemas.)
# Note: ONNX 1.18 also flagged the GroupNormalization-18 schema deprecated in favour of
# GroupNormalization-21; the operator itself is live, so it is not listed here.
DEPRECATED_NEWER = {
    ("ai.onnx.ml", "TreeEnsembleClassifier"): 5,
    ("ai.onnx.ml", "TreeEnsembleRegressor"): 5,
}


def collect():
    """Returns ({(domain, op): set(versions)}, {(domain, op): deprecated_since}, py_max)."""
    versions = {}
    deprecated = {}
    py_max = {d: 0 for d in DOMAINS}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain not in DOMAINS:
            continue
        key = (s.domain, s.name)
        versions.setdefault(key, set()).add(s.since_version)
        py_max[s.domain] = max(py_max[s.domain], s.since_version)
        if s.deprecated:
            deprecated[key] = s.since_version
    py_known = {k: set(v) for k, v in versions.items()}

    errors = []
    for domain, table in NEWER.items():
        for opset in sorted(table):
            ops = table[opset]
            if len(set(ops)) != len(ops):
                errors.append(f"{domain!r} opset {opset}: duplicate entries")
            if opset > MAX_OPSET[domain]:
                errors.append(f"{domain!r} opset {opset} is above MAX_OPSET {MAX_OPSET[domain]}")
            for op in ops:
                key = (domain, op)
                if opset <= py_max[domain] and opset not in py_known.get(key, set()):
                    errors.append(f"{domain!r} {op}-{opset}: listed by hand, unknown to "
                                  f"onnx {onnx.__version__}")
                versions.setdefault(key, set()).add(opset)
        # A newer python-onnx may know versions the hand table lacks.
        for key, vs in py_known.items():
            if key[0] != domain:
                continue
            for v in vs:
                if v in table and key[1] not in table[v]:
                    errors.append(f"{domain!r} {key[1]}-{v}: known to onnx {onnx.__version__}, "
                                  f"missing from the hand table")
    for key, at in DEPRECATED_NEWER.items():
        if key in deprecated and deprecated[key] != at:
            errors.append(f"{key}: deprecated at {deprecated[key]} per onnx, {at} per table")
        if at not in versions.get(key, set()):
            errors.append(f"{key}: deprecation version {at} is not one of its since_versions")
        deprecated[key] = at
    for domain in DOMAINS:
        if py_max[domain] > MAX_OPSET[domain]:
            errors.append(f"onnx {onnx.__version__} knows {domain!r} opset {py_max[domain]}, "
                          f"above MAX_OPSET; extend the tables")
    if errors:
        sys.exit("gen_op_versions.py: inconsistent tables:\n  " + "\n  ".join(errors))
    return versions, deprecated, py_max


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(versions, deprecated, py_max):
    keys = sorted(versions, key=lambda k: (k[0].encode(), k[1].encode()))
    out = []
    w = out.append
    w("// GENERATED by tools/gen_op_versions.py -- do not edit by hand; rerun the script.")
    w("//")
    w("// since_version history of every operator of the ai.onnx (\"\"), ai.onnx.ml and")
    w(f"// {TRAINING} (opset {MAX_OPSET[TRAINING]}) domains.")
    w(f"// Up to ai.onnx opset {py_max['']} and ai.onnx.ml opset {py_max['ai.onnx.ml']}: "
      f"python-onnx {onnx.__version__}'s schema registry;")
    w(f"// up to ai.onnx opset {MAX_OPSET['']} and ai.onnx.ml opset {MAX_OPSET['ai.onnx.ml']}: "
      "the tables in the script (sources cited there).")
    w("#include \"onnx_versions.h\"")
    w("")
    w("#include <algorithm>")
    w("#include <utility>")
    w("")
    w("namespace onnxc {")
    w("")
    w("namespace {")
    w("")
    w("struct OpVersions {")
    w("  std::string domain;")
    w("  std::string op_type;")
    w("  std::vector<int> since;   // ascending")
    w("  int deprecated_since;     // 0: never deprecated/removed")
    w("};")
    w("")
    w("// Sorted by (domain, op_type), byte-wise.")
    w("const std::vector<OpVersions>& table() {")
    w("  static const std::vector<OpVersions> kTable = {")
    for key in keys:
        vs = ", ".join(str(v) for v in sorted(versions[key]))
        dep = deprecated.get(key, 0)
        w(f"      {{{c_str(key[0])}, {c_str(key[1])}, {{{vs}}}, {dep}}},")
    w("  };")
    w("  return kTable;")
    w("}")
    w("")
    w("// \"ai.onnx\" is the spelled-out name of the default domain.")
    w("const std::string& canonical(const std::string& domain) {")
    w("  static const std::string kEmpty;")
    w("  return domain == \"ai.onnx\" ? kEmpty : domain;")
    w("}")
    w("")
    w("const OpVersions* find(const std::string& domain, const std::string& op_type) {")
    w("  const std::string& d = canonical(domain);")
    w("  const auto& t = table();")
    w("  auto it = std::lower_bound(t.begin(), t.end(), std::make_pair(&d, &op_type),")
    w("                             [](const OpVersions& e, const std::pair<const std::string*, "
      "const std::string*>& k) {")
    w("                               if (e.domain != *k.first) return e.domain < *k.first;")
    w("                               return e.op_type < *k.second;")
    w("                             });")
    w("  if (it == t.end() || it->domain != d || it->op_type != op_type) return nullptr;")
    w("  return &*it;")
    w("}")
    w("")
    w("}  // namespace")
    w("")
    w("int max_known_opset(const std::string& domain) {")
    w("  const std::string& d = canonical(domain);")
    w(f"  if (d.empty()) return {MAX_OPSET['']};")
    for domain in DOMAINS[1:]:
        w(f"  if (d == {c_str(domain)}) return {MAX_OPSET[domain]};")
    w("  return 0;")
    w("}")
    w("")
    w("const std::vector<int>* onnx_since_versions(const std::string& domain, "
      "const std::string& op_type) {")
    w("  const OpVersions* e = find(domain, op_type);")
    w("  return e ? &e->since : nullptr;")
    w("}")
    w("")
    w("int resolve_op_version(const std::string& domain, const std::string& op_type, int opset) {")
    w("  const OpVersions* e = find(domain, op_type);")
    w("  if (!e) return 0;")
    w("  auto it = std::upper_bound(e->since.begin(), e->since.end(), opset);")
    w("  return it == e->since.begin() ? 0 : *(it - 1);")
    w("}")
    w("")
    w("bool op_removed(const std::string& domain, const std::string& op_type, int opset, int* at) {")
    w("  const OpVersions* e = find(domain, op_type);")
    w("  bool removed = e && e->deprecated_since > 0 && opset >= e->deprecated_since;")
    w("  if (at) *at = removed ? e->deprecated_since : 0;")
    w("  return removed;")
    w("}")
    w("")
    w("}  // namespace onnxc")
    return "\n".join(out) + "\n"


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default_out = os.path.join(root, "compiler", "ops", "onnx_versions.cpp")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=default_out)
    ap.add_argument("--check", action="store_true",
                    help="compare with the existing output instead of writing it")
    args = ap.parse_args()
    text = render(*collect())
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                same = f.read() == text
        except FileNotFoundError:
            same = False
        if not same:
            print(f"{args.output} is out of date; run tools/gen_op_versions.py", file=sys.stderr)
            return 1
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
