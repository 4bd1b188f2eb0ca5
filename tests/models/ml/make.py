#!/usr/bin/python3
"""Writes models of ai.onnx.ml operators (issue #24) in the backend-test layout, with ONNX
Runtime's outputs as the reference (it runs ai.onnx.ml). Run from this directory:

    /usr/bin/python3 make.py /path/to/ort-run.mjs [linear trees trees5 svm features]
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402

F = TensorProto.FLOAT
ML = "ai.onnx.ml"


def linear(ort_run):
    """Scaler (float and int64 input), Normalizer (MAX, L1, L2, with a zero row), Binarizer,
    LinearRegressor (two targets), LinearClassifier (three classes with SOFTMAX; binary with
    LOGISTIC), as skl2onnx writes them, in one model."""
    rng = np.random.default_rng(24)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    x[2] = 0.0  # a zero row: Normalizer leaves it as it is
    xi = rng.integers(-5, 5, (4, 3)).astype(np.int64)
    coef3 = rng.standard_normal(9).tolist()
    nodes = [
        helper.make_node("Scaler", ["x"], ["scaled"], domain=ML, offset=[0.5, -1.0, 2.0], scale=[2.0, 0.5, 1.5]),
        helper.make_node("Scaler", ["xi"], ["scaled_int"], domain=ML, offset=[1.0], scale=[0.25]),
        helper.make_node("Normalizer", ["x"], ["norm_max"], domain=ML, norm="MAX"),
        helper.make_node("Normalizer", ["x"], ["norm_l1"], domain=ML, norm="L1"),
        helper.make_node("Normalizer", ["x"], ["norm_l2"], domain=ML, norm="L2"),
        helper.make_node("Binarizer", ["x"], ["binary"], domain=ML, threshold=0.3),
        helper.make_node("LinearRegressor", ["x"], ["regression"], domain=ML, targets=2,
                         coefficients=rng.standard_normal(6).tolist(), intercepts=[0.5, -0.25]),
        helper.make_node("LinearClassifier", ["x"], ["label3", "prob3"], domain=ML, classlabels_ints=[7, 8, 9],
                         coefficients=coef3, intercepts=[0.1, 0.2, -0.3], post_transform="SOFTMAX"),
        helper.make_node("LinearClassifier", ["x"], ["label2", "prob2"], domain=ML, classlabels_ints=[0, 1],
                         coefficients=[0.7, -1.2, 0.4], intercepts=[0.05], post_transform="LOGISTIC"),
        # PROBIT of scores in (0, 1); SOFTMAX_ZERO with row 2's first score exactly 0.
        helper.make_node("LinearRegressor", ["x"], ["probit"], domain=ML, coefficients=[0.05, -0.04, 0.03],
                         intercepts=[0.5], post_transform="PROBIT"),
        helper.make_node("LinearClassifier", ["x"], ["label_sz", "prob_sz"], domain=ML, classlabels_ints=[1, 2, 3],
                         coefficients=[0.5, -0.5, 0.25, 1.0, 0.0, -1.0, -0.3, 0.6, 0.2], intercepts=[0.0, 0.2, -0.3],
                         post_transform="SOFTMAX_ZERO"),
        # String class labels (the same model as label_sz's).
        helper.make_node("LinearClassifier", ["x"], ["label_str", "prob_str"], domain=ML, classlabels_strings=["cat", "dog", "emu"],
                         coefficients=[0.5, -0.5, 0.25, 1.0, 0.0, -1.0, -0.3, 0.6, 0.2], intercepts=[0.0, 0.2, -0.3]),
    ]
    outputs = [("scaled", F, [4, 3]), ("scaled_int", F, [4, 3]), ("norm_max", F, [4, 3]), ("norm_l1", F, [4, 3]),
               ("norm_l2", F, [4, 3]), ("binary", F, [4, 3]), ("regression", F, [4, 2]),
               ("label3", TensorProto.INT64, [4]), ("prob3", F, [4, 3]), ("label2", TensorProto.INT64, [4]),
               ("prob2", F, [4, 2]), ("probit", F, [4, 1]), ("label_sz", TensorProto.INT64, [4]), ("prob_sz", F, [4, 3]),
               ("label_str", TensorProto.STRING, [4]), ("prob_str", F, [4, 3])]
    graph = helper.make_graph(nodes, "ml_linear", [helper.make_tensor_value_info("x", F, [4, 3]),
                                                   helper.make_tensor_value_info("xi", TensorProto.INT64, [4, 3])],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])
    model.ir_version = 8
    save("linear", model, [("x", x), ("xi", xi)], [])
    subprocess.run(["node", ort_run, "linear"], check=True)
    import onnx
    from onnx import numpy_helper
    from statistics import NormalDist
    x64 = x.astype(np.float64)
    raw = x64 @ np.array([0.05, -0.04, 0.03]) + 0.5
    sz = x64 @ np.array([[0.5, -0.5, 0.25], [1.0, 0.0, -1.0], [-0.3, 0.6, 0.2]]).T + np.array([0.0, 0.2, -0.3])
    assert sz[2, 0] == 0.0
    e = np.where(np.abs(sz) > 1e-7, np.exp(sz - sz.max(1, keepdims=True)), 0.0)
    names = [name for name, _, _ in outputs]
    got = {name: numpy_helper.to_array(onnx.load_tensor(f"linear/test_data_set_0/output_{i}.pb")) for i, name in
           enumerate(names)}
    assert np.abs(got["prob_sz"] - e / e.sum(1, keepdims=True)).max() < 1e-6, "SOFTMAX_ZERO: ONNX Runtime differs"
    assert np.array_equal(got["label_sz"], np.array([1, 2, 3])[sz.argmax(1)])
    assert got["label_str"].tolist() == np.array(["cat", "dog", "emu"], dtype=object)[sz.argmax(1)].tolist()
    # ONNX Runtime 1.30's PROBIT is a closed-form approximation of erfinv (within 1e-4 here): the
    # reference is the normal quantile of numpy's scores.
    probit = np.array([[NormalDist().inv_cdf(v)] for v in raw], np.float32)
    assert np.abs(got["probit"] - probit).max() < 1e-4, "PROBIT: ONNX Runtime is not near the quantile"
    with open(f"linear/test_data_set_0/output_{names.index('probit')}.pb", "wb") as f:
        f.write(numpy_helper.from_array(probit, "probit").SerializeToString())


MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def random_forest(rng, trees, depth, features, targets, weights_per_leaf, thresholds):
    """Random trees as the nodes_* / *_weights attribute lists: tree ids 10, 13, 16, ..., node ids
    in an order unlike depth-first, every branch mode, some missing values
    tracking true, leaves with one weight or one per target."""
    nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "values", "modes", "truenodeids", "falsenodeids",
                             "missing")}
    leaves = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for t in range(trees):
        tree = 10 + 3 * t
        ids = iter(rng.permutation(2 ** (depth + 1)) + 100)

        def grow(level):
            me = int(next(ids))
            if level == depth or (level > 1 and rng.random() < 0.2):
                nodes["treeids"].append(tree); nodes["nodeids"].append(me); nodes["featureids"].append(0)
                nodes["values"].append(0.0); nodes["modes"].append("LEAF"); nodes["truenodeids"].append(0)
                nodes["falsenodeids"].append(0); nodes["missing"].append(0)
                chosen = range(targets) if weights_per_leaf > 1 else [int(rng.integers(targets))]
                for target in chosen:
                    leaves["treeids"].append(tree); leaves["nodeids"].append(me); leaves["ids"].append(int(target))
                    leaves["weights"].append(float(np.float32(rng.standard_normal())))
                return me
            at = len(nodes["treeids"])
            for k in nodes:
                nodes[k].append(None)
            yes, no = grow(level + 1), grow(level + 1)
            f = int(rng.integers(features))
            row = {"treeids": tree, "nodeids": me, "featureids": f,
                   "values": float(thresholds[f][int(rng.integers(len(thresholds[f])))]),
                   "modes": MODES[int(rng.integers(len(MODES)))], "truenodeids": yes, "falsenodeids": no,
                   "missing": int(rng.random() < 0.5)}
            for k in nodes:
                nodes[k][at] = row[k]
            return me

        first_node, first_leaf = len(nodes["treeids"]), len(leaves["treeids"])
        grow(0)
        # ONNX Runtime wants each tree's node ids to be 0 .. count - 1: renumber by rank (the
        # random ids' order, still unlike depth-first).
        used = sorted(nodes["nodeids"][first_node:])
        rank = {old: new for new, old in enumerate(used)}
        for k in ("nodeids", "truenodeids", "falsenodeids"):
            nodes[k][first_node:] = [rank.get(v, 0) if (k == "nodeids" or m != "LEAF") else 0
                                     for v, m in zip(nodes[k][first_node:], nodes["modes"][first_node:])]
        leaves["nodeids"][first_leaf:] = [rank[v] for v in leaves["nodeids"][first_leaf:]]
    return nodes, leaves


def forest_reference(x, nodes, leaves, targets, average=False, base=None, ort_nan=False, aggregate="SUM"):
    """numpy: each row down each tree, as the operator's definition walks it: a NaN feature takes
    the branch nodes_missing_value_tracks_true gives. ort_nan: as ONNX Runtime 1.30 does, where a
    NaN at a BRANCH_NEQ node goes true (NaN != threshold) whatever that flag says. aggregate MIN
    or MAX: each reached weight in turn; a target no reached leaf weighs is 0 without its base
    value (as ONNX Runtime gives it)."""
    at = {(t, i): k for k, (t, i) in enumerate(zip(nodes["treeids"], nodes["nodeids"]))}
    # Roots: the nodes no branch names as a child (a leaf's child ids are placeholders).
    child = {(t, c) for t, m, yes, no in zip(nodes["treeids"], nodes["modes"], nodes["truenodeids"],
                                             nodes["falsenodeids"]) if m != "LEAF" for c in (yes, no)}
    roots = [k for k, key in enumerate(zip(nodes["treeids"], nodes["nodeids"])) if key not in child]
    tests = {"BRANCH_LEQ": np.less_equal, "BRANCH_LT": np.less, "BRANCH_GTE": np.greater_equal,
             "BRANCH_GT": np.greater, "BRANCH_EQ": np.equal, "BRANCH_NEQ": np.not_equal}
    pick = {"MIN": min, "MAX": max}.get(aggregate)
    out = np.zeros((x.shape[0], targets)) if pick is None else np.full((x.shape[0], targets), np.nan)
    for r in range(x.shape[0]):
        for root in roots:
            k = root
            while nodes["modes"][k] != "LEAF":
                v = np.float32(x[r, nodes["featureids"][k]])
                th = np.float32(nodes["values"][k])
                go = bool(nodes["missing"][k]) if np.isnan(v) else bool(tests[nodes["modes"][k]](v, th))
                if ort_nan and np.isnan(v) and nodes["modes"][k] == "BRANCH_NEQ":
                    go = True
                k = at[(nodes["treeids"][k], nodes["truenodeids"][k] if go else nodes["falsenodeids"][k])]
            for t, i, target, w in zip(leaves["treeids"], leaves["nodeids"], leaves["ids"], leaves["weights"]):
                if (t, i) == (nodes["treeids"][k], nodes["nodeids"][k]):
                    if pick is None:
                        out[r, target] += w
                    else:
                        out[r, target] = w if np.isnan(out[r, target]) else pick(out[r, target], w)
    if average:
        out /= len(roots)
    if base is not None:
        out += base
    return np.nan_to_num(out, nan=0.0)


def forest_rows(rng, features, rows):
    """Four thresholds a feature and rows of standard normal features, every third row with one
    feature exactly at one of its thresholds."""
    thresholds = [np.round(rng.standard_normal(4), 1).astype(np.float32) for _ in range(features)]
    x = rng.standard_normal((rows, features)).astype(np.float32)
    for r in range(0, rows, 3):
        f = int(rng.integers(features))
        x[r, f] = thresholds[f][int(rng.integers(4))]
    return thresholds, x


def trees(ort_run):
    """TreeEnsembleRegressor (two targets, AVERAGE, base values; one target, SUM, one-weight
    leaves; MIN with targets some rows miss; MAX) and TreeEnsembleClassifier (three classes,
    SOFTMAX, a weight per class in each leaf; binary with weights for the first class only),
    random trees over every branch mode with missing values tracked, on rows with NaNs and
    features equal to thresholds; checked against a numpy walk of the trees when made."""
    rng = np.random.default_rng(5)
    features = 6
    thresholds, x = forest_rows(rng, features, 16)
    x[1, 2] = np.nan
    x[5, :3] = np.nan
    x[9, 0] = np.nan
    specs = [("avg2", 5, 4, 2, 2, "AVERAGE", [0.5, -0.25], None),
             ("sum1", 7, 5, 1, 1, "SUM", None, None),
             ("cls3", 4, 4, 3, 3, "SUM", [0.1, 0.0, -0.1], "SOFTMAX"),
             ("min3", 3, 4, 3, 1, "MIN", [0.5, -0.25, 1.0], None),  # one weight a leaf: targets some rows miss
             ("max2", 4, 4, 2, 2, "MAX", None, None)]
    graph_nodes, outputs, expected, ort_expected = [], [], [], []
    for tag, count, depth, targets, per_leaf, aggregate, base, transform in specs:
        nodes, leaves = random_forest(rng, count, depth, features, targets, per_leaf, thresholds)
        attrs = {f"nodes_{k}": v for k, v in nodes.items() if k != "missing"}
        attrs["nodes_missing_value_tracks_true"] = nodes["missing"]
        refs = [forest_reference(x, nodes, leaves, targets, aggregate == "AVERAGE",
                                 None if base is None else np.array(base), ort, aggregate) for ort in (False, True)]
        if tag == "min3":
            assert (refs[0] == 0).any(), "no row misses a target"
        if transform is None:
            attrs.update({f"target_{k}": v for k, v in leaves.items()})
            attrs.update(n_targets=targets, aggregate_function=aggregate)
            if base is not None:
                attrs["base_values"] = base
            graph_nodes.append(helper.make_node("TreeEnsembleRegressor", ["x"], [tag], domain=ML, name=tag, **attrs))
            outputs.append(helper.make_tensor_value_info(tag, F, [16, targets]))
            expected.append([(tag, refs[0].astype(np.float32))])
            ort_expected.append([refs[1]])
            if tag == "sum1":  # the same trees on one row (rt::tree_ensemble's single-row walk): row 5, NaNs
                graph_nodes.append(helper.make_node("TreeEnsembleRegressor", ["x_row"], ["sum1_row"], domain=ML,
                                                    name="sum1_row", **attrs))
                outputs.append(helper.make_tensor_value_info("sum1_row", F, [1, targets]))
                expected.append([("sum1_row", refs[0][5:6].astype(np.float32))])
                ort_expected.append([refs[1][5:6]])
        else:
            attrs.update({f"class_{k}": v for k, v in leaves.items()})
            attrs.update(classlabels_int64s=[4, 5, 6], post_transform=transform, base_values=base)
            graph_nodes.append(helper.make_node("TreeEnsembleClassifier", ["x"], [f"{tag}_label", f"{tag}_prob"],
                                                domain=ML, name=tag, **attrs))
            outputs += [helper.make_tensor_value_info(f"{tag}_label", TensorProto.INT64, [16]),
                        helper.make_tensor_value_info(f"{tag}_prob", F, [16, targets])]
            pairs = []
            for ref in refs:
                e = np.exp(ref - ref.max(1, keepdims=True))
                prob = e / e.sum(1, keepdims=True)
                pairs.append((np.array([4, 5, 6], dtype=np.int64)[prob.argmax(1)], prob))
            expected.append([(f"{tag}_label", pairs[0][0]), (f"{tag}_prob", pairs[0][1].astype(np.float32))])
            ort_expected.append(list(pairs[1]))
    # A binary classifier with weights for the first class only, as onnxmltools writes XGBoost's and
    # LightGBM's: the sum s (plus the one base value) is the second class's score, [1 - p, p] with
    # p = sigmoid(s) under LOGISTIC (ONNX Runtime's reading; the operator text has no such case).
    nodes, leaves = random_forest(rng, 4, 4, features, 1, 1, thresholds)
    attrs = {f"nodes_{k}": v for k, v in nodes.items() if k != "missing"}
    attrs["nodes_missing_value_tracks_true"] = nodes["missing"]
    attrs.update({f"class_{k}": v for k, v in leaves.items()})
    attrs.update(classlabels_int64s=[7, 9], post_transform="LOGISTIC", base_values=[0.2])
    graph_nodes.append(helper.make_node("TreeEnsembleClassifier", ["x"], ["bin_label", "bin_prob"], domain=ML,
                                        name="bin", **attrs))
    outputs += [helper.make_tensor_value_info("bin_label", TensorProto.INT64, [16]),
                helper.make_tensor_value_info("bin_prob", F, [16, 2])]
    pairs = []
    for ort in (False, True):
        p = 1 / (1 + np.exp(-forest_reference(x, nodes, leaves, 1, False, np.array([0.2]), ort)))
        pairs.append((np.where(p[:, 0] > 0.5, 9, 7).astype(np.int64), np.concatenate([1 - p, p], 1)))
    assert len(set(pairs[0][0].tolist())) == 2, "the binary classifier's rows do not reach both classes"
    expected.append([("bin_label", pairs[0][0]), ("bin_prob", pairs[0][1].astype(np.float32))])
    ort_expected.append(list(pairs[1]))
    graph = helper.make_graph(graph_nodes, "ml_trees", [helper.make_tensor_value_info("x", F, [16, features]),
                                                        helper.make_tensor_value_info("x_row", F, [1, features])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])
    model.ir_version = 8
    save("trees", model, [("x", x), ("x_row", x[5:6])], [])
    subprocess.run(["node", ort_run, "trees"], check=True)
    import onnx
    from onnx import numpy_helper
    # ONNX Runtime agrees with the walk except at BRANCH_NEQ nodes reached by a NaN (see
    # docs/classical-ml.md): check that, then store the definition's outputs as the reference.
    flat_ort = [e for group in ort_expected for e in group]
    flat = [e for group in expected for e in group]
    for i, e in enumerate(flat_ort):
        got = numpy_helper.to_array(onnx.load_tensor(f"trees/test_data_set_0/output_{i}.pb"))
        err = np.abs(got.astype(np.float64) - e).max()
        assert err < 1e-5, f"trees output {i}: ONNX Runtime differs from the numpy walk by {err}"
    for i, (name, value) in enumerate(flat):
        with open(f"trees/test_data_set_0/output_{i}.pb", "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


def to_tree_ensemble5(nodes, leaves):
    """The TreeEnsemble (ai.onnx.ml 5) attributes of a random_forest of one weight a leaf:
    interior nodes and leaves in separate lists, children by index with the *leafs flags."""
    codes = {m: i for i, m in enumerate(MODES)}
    keys = list(zip(nodes["treeids"], nodes["nodeids"]))
    interior = [k for k, m in zip(keys, nodes["modes"]) if m != "LEAF"]
    leaf_keys = [k for k, m in zip(keys, nodes["modes"]) if m == "LEAF"]
    weight = {(t, i): (target, w) for t, i, target, w in zip(leaves["treeids"], leaves["nodeids"], leaves["ids"],
                                                             leaves["weights"])}
    at_interior = {k: j for j, k in enumerate(interior)}
    at_leaf = {k: j for j, k in enumerate(leaf_keys)}
    out = {k: [] for k in ("featureids", "splits", "modes", "truenodeids", "trueleafs", "falsenodeids", "falseleafs",
                           "missing")}
    row = {k: r for r, k in enumerate(keys)}
    for key in interior:
        r = row[key]
        out["featureids"].append(nodes["featureids"][r])
        out["splits"].append(nodes["values"][r])
        out["modes"].append(codes[nodes["modes"][r]])
        out["missing"].append(nodes["missing"][r])
        for side in ("true", "false"):
            child = (key[0], nodes[f"{side}nodeids"][r])
            out[f"{side}leafs"].append(int(child in at_leaf))
            out[f"{side}nodeids"].append(at_leaf[child] if child in at_leaf else at_interior[child])
    children = {(t, c) for (t, _), r in row.items() if nodes["modes"][r] != "LEAF"
                for c in (nodes["truenodeids"][r], nodes["falsenodeids"][r])}
    roots = [at_interior[k] for k in interior if k not in children]
    return out, roots, [weight[k][0] for k in leaf_keys], [weight[k][1] for k in leaf_keys]


def te5_reference(x, attrs, roots, leaf_targets, leaf_weights, members, targets, as_member=lambda v: v):
    """numpy: TreeEnsemble 5 by its definition, SUM; BRANCH_MEMBER sets taken from members (each
    ended by a NaN) in the order of the nodes."""
    sets, current = [], []
    for v in members:
        if np.isnan(v):
            sets.append(set(current)); current = []
        else:
            current.append(np.float32(v))
    member_set = {}
    for i, m in enumerate(attrs["modes"]):
        if m == 6:
            member_set[i] = sets[len(member_set)]
    tests = [np.less_equal, np.less, np.greater_equal, np.greater, np.equal, np.not_equal]
    out = np.zeros((x.shape[0], targets))
    for r in range(x.shape[0]):
        for root in roots:
            i, leaf = root, False
            while not leaf:
                v = np.float32(x[r, attrs["featureids"][i]])
                m = attrs["modes"][i]
                if np.isnan(v):
                    go = bool(attrs["missing"][i])
                elif m == 6:
                    go = as_member(v) in member_set[i]
                else:
                    go = bool(tests[m](v, np.float32(attrs["splits"][i])))
                side = "true" if go else "false"
                i, leaf = attrs[f"{side}nodeids"][i], attrs[f"{side}leafs"][i]
            out[r, leaf_targets[i]] += leaf_weights[i]
    return out


def trees5(ort_run):
    """TreeEnsemble (ai.onnx.ml 5): random trees over every branch mode with missing values tracked
    (the trees test's generator), on rows with NaNs and features equal to thresholds; SUM with two
    targets, AVERAGE with post_transform 2 (LOGISTIC in the operator text), MIN with 3
    (SOFTMAX_ZERO), MAX with 4 (PROBIT) on weights in (0, 1), a double X, and BRANCH_MEMBER nodes.
    Reference: the numpy walk by the definition and the transforms by the text; ONNX Runtime's
    outputs checked equal to it where it reads the codes the same way (see docs/classical-ml.md)."""
    rng = np.random.default_rng(55)
    features = 5
    thresholds, x = forest_rows(rng, features, 12)
    x[2, 1] = x[7, 0] = x[7, 4] = np.nan
    x[1] = [0, 1, -1, 2, 0]  # integers: BRANCH_MEMBER sets hold integers (ONNX Runtime takes no others)
    x[4, 2], x[10, 0], x[11, 3] = 1, -1, 2

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    def softmax_zero(v):
        e = np.where(np.abs(v) > 1e-7, np.exp(v - v.max(1, keepdims=True)), 0.0)
        return e / e.sum(1, keepdims=True)

    def probit(v):
        from statistics import NormalDist
        return np.vectorize(NormalDist().inv_cdf)(v)

    # (tag, trees, depth, targets, aggregate code, post_transform code, input)
    specs = [("te_sum", 4, 4, 2, 1, 0, "x"), ("te_avg_logistic", 5, 4, 1, 0, 2, "x"),
             ("te_min_softmax_zero", 3, 3, 3, 2, 3, "x"), ("te_max_probit", 4, 4, 1, 3, 4, "x"),
             ("te_double", 3, 4, 2, 1, 0, "xd"), ("te_member", 4, 4, 2, 1, 0, "x")]
    aggregates = ["AVERAGE", "SUM", "MIN", "MAX"]
    transforms = [lambda v: v, None, sigmoid, softmax_zero, probit]
    graph_nodes, outputs, expected, ort_expected = [], [], [], []
    for tag, count, depth, targets, aggregate, transform, source in specs:
        nodes, leaves = random_forest(rng, count, depth, features, targets, 1, thresholds)
        if transform == 4:  # weights in (0, 1): a probability's quantile
            leaves["weights"] = [float(np.float32(0.05 + 0.9 * sigmoid(w))) for w in leaves["weights"]]
        attrs, roots, leaf_targets, leaf_weights = to_tree_ensemble5(nodes, leaves)
        split_type = TensorProto.DOUBLE if source == "xd" else F
        members = []
        if tag == "te_member":
            # Every third node tests membership of a set of integers (ONNX Runtime takes no other
            # values, and no empty set); the nodes are listed depth-first, as onnxc requires.
            for k, i in enumerate(range(0, len(attrs["modes"]), 3)):
                attrs["modes"][i] = 6
                members += sorted(set(rng.integers(-2, 3, size=1 + k % 3).astype(float).tolist()))
                members.append(float("nan"))
        node = helper.make_node(
            "TreeEnsemble", [source], [tag], domain=ML, name=tag, n_targets=targets, aggregate_function=aggregate,
            post_transform=transform, tree_roots=roots, nodes_featureids=attrs["featureids"],
            nodes_splits=helper.make_tensor("splits", split_type, [len(attrs["splits"])], attrs["splits"]),
            nodes_modes=helper.make_tensor("modes", TensorProto.UINT8, [len(attrs["modes"])], attrs["modes"]),
            nodes_truenodeids=attrs["truenodeids"], nodes_trueleafs=attrs["trueleafs"],
            nodes_falsenodeids=attrs["falsenodeids"], nodes_falseleafs=attrs["falseleafs"],
            nodes_missing_value_tracks_true=attrs["missing"], leaf_targetids=leaf_targets,
            leaf_weights=helper.make_tensor("weights", split_type, [len(leaf_weights)], leaf_weights))
        if members:
            node.attribute.append(helper.make_attribute(
                "membership_values", helper.make_tensor("members", F, [len(members)], members)))
        graph_nodes.append(node)
        agg = aggregates[aggregate]
        if members:
            ref = te5_reference(x, attrs, roots, leaf_targets, leaf_weights, members, targets)
            refs = [ref, ref]  # no NEQ nodes reached by a NaN: see below
            hits = sum(np.float32(x[r, attrs["featureids"][i]]) in set(np.float32(members))
                       for r in range(x.shape[0]) for i in range(len(attrs["modes"])) if attrs["modes"][i] == 6)
            assert hits > 0, "no row is a member of a set"
        else:
            refs = [forest_reference(x, nodes, leaves, targets, agg == "AVERAGE", None, ort, agg) for ort in (False, True)]
        y = transforms[transform](refs[0])
        assert np.isfinite(y).all(), f"{tag}: a transformed score is not finite"
        dtype = np.float64 if source == "xd" else np.float32
        outputs.append(helper.make_tensor_value_info(tag, split_type, [12, targets]))
        expected.append((tag, y.astype(dtype)))
        ort_expected.append(refs[1])
    graph = helper.make_graph(graph_nodes, "ml_trees5", [helper.make_tensor_value_info("x", F, [12, features]),
                                                         helper.make_tensor_value_info("xd", TensorProto.DOUBLE,
                                                                                       [12, features])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(ML, 5)])
    model.ir_version = 10
    # check=False: the installed onnx (1.12) knows ai.onnx.ml up to opset 3.
    save("trees5", model, [("x", x), ("xd", x.astype(np.float64))], [], check=False)
    subprocess.run(["node", ort_run, "trees5"], check=True)
    import onnx
    from onnx import numpy_helper
    # ONNX Runtime 1.30 agrees with the walk (under its NEQ rule) where no transform applies: check
    # that, then store the definition's outputs. Where a transform applies, print what it gives.
    for i, ((tag, e), spec) in enumerate(zip(expected, specs)):
        got = numpy_helper.to_array(onnx.load_tensor(f"trees5/test_data_set_0/output_{i}.pb")).astype(np.float64)
        raw = ort_expected[i]
        if tag == "te_member":
            # ONNX Runtime 1.30 differs from the definition on some rows (docs/classical-ml.md).
            print(f"trees5 {tag}: ONNX Runtime 1.30 differs from the walk by {np.abs(got - raw).max():.3g}")
        elif spec[5] == 0:
            err = np.abs(got - raw).max()
            assert err < 1e-5, f"trees5 {tag}: ONNX Runtime differs from the numpy walk by {err}"
        else:
            guesses = {"raw": raw, "sigmoid": sigmoid(raw), "softmax_zero": softmax_zero(raw),
                       "softmax": softmax_zero(np.where(raw == 0, 1e-30, raw))}
            if ((raw > 0) & (raw < 1)).all():
                guesses["probit"] = probit(raw)
            match = [k for k, v in guesses.items() if v.shape == got.shape and np.abs(v - got).max() < 1e-4]
            print(f"trees5 {tag}: post_transform {spec[5]}; ONNX Runtime 1.30's output matches {match or 'none'}")
    for i, (name, value) in enumerate(expected):
        with open(f"trees5/test_data_set_0/output_{i}.pb", "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


def svm_kernel(x, sv, kernel, gamma, coef0, degree):
    """numpy float64: the kernel of every row of x with every support vector, by the definition."""
    x, sv = x.astype(np.float64), sv.astype(np.float64)
    if kernel == "RBF":
        return np.exp(-gamma * ((x[:, None, :] - sv[None, :, :]) ** 2).sum(-1))
    dot = x @ sv.T
    if kernel == "LINEAR":
        return dot
    if kernel == "POLY":
        return (gamma * dot + coef0) ** degree
    return np.tanh(gamma * dot + coef0)


def svm_classify(x, sv, per_class, coef, rho, kernel, params):
    """numpy: libsvm's one-vs-one decision values (pair i < j: class i's vectors weighted by
    coefficient row j - 1, class j's by row i, plus rho; positive votes for i) and the class with
    the most votes, ties to the lower index."""
    k = len(per_class)
    start = np.concatenate([[0], np.cumsum(per_class)])
    count = start[-1]
    coef = np.asarray(coef, np.float64).reshape(k - 1, count)
    kv = svm_kernel(x, sv, kernel, *params)
    decisions, votes = [], np.zeros((x.shape[0], k), np.int64)
    p = 0
    for i in range(k - 1):
        for j in range(i + 1, k):
            d = kv[:, start[i]:start[i + 1]] @ coef[j - 1, start[i]:start[i + 1]] + \
                kv[:, start[j]:start[j + 1]] @ coef[i, start[j]:start[j + 1]] + rho[p]
            assert np.abs(d).min() > 1e-3, "a decision too near zero for float to agree on its vote"
            votes[np.arange(x.shape[0]), np.where(d > 0, i, j)] += 1
            decisions.append(d)
            p += 1
    return np.stack(decisions, 1), votes.argmax(1), votes


def svm(ort_run, seed=2439):
    """SVMClassifier (libsvm one-vs-one: three classes RBF NONE, four classes POLY SOFTMAX with tied
    votes, binary SIGMOID scores [-s, s], three classes LINEAR LOGISTIC, linear mode without
    support vectors SOFTMAX, binary with Platt's probabilities), SVMRegressor (RBF, POLY one_class,
    SIGMOID, linear mode, and one row given as [C]) in one model; ONNX Runtime's outputs as the
    reference (numpy's for the probabilities), checked against numpy float64 by the definition when
    made."""
    rng = np.random.default_rng(seed)
    c, rows = 5, 12
    x = rng.standard_normal((rows, c)).astype(np.float32)
    nodes, outputs, expected = [], [], []
    I64 = TensorProto.INT64

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    def softmax(v):
        e = np.exp(v - v.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    classifiers = [("rbf3", [3, 2, 4], "RBF", [0.3, 0.0, 0.0], "NONE", [10, 20, 30]),
                   ("poly4", [2, 3, 1, 2], "POLY", [0.5, 1.0, 3.0], "SOFTMAX", [0, 1, 2, 3]),
                   ("sig2", [3, 4], "SIGMOID", [0.2, -0.1, 0.0], "NONE", [5, 9]),
                   ("lin3", [2, 2, 2], "LINEAR", [0.0, 0.0, 0.0], "LOGISTIC", [-1, 0, 1])]
    tie_rows = 0
    for tag, per_class, kernel, params, transform, labels in classifiers:
        k, count = len(per_class), sum(per_class)
        sv = rng.standard_normal((count, c)).astype(np.float32)
        coef = np.round(rng.standard_normal((k - 1) * count), 3).astype(np.float32)
        rho = np.round(rng.standard_normal(k * (k - 1) // 2) * 0.3, 3).astype(np.float32)
        label_attr = {"classlabels_strings" if isinstance(labels[0], str) else "classlabels_ints": labels}
        nodes.append(helper.make_node("SVMClassifier", ["x"], [f"{tag}_label", f"{tag}_scores"], domain=ML, name=tag,
                                      vectors_per_class=per_class, **label_attr,
                                      support_vectors=sv.ravel().tolist(), coefficients=coef.tolist(),
                                      rho=rho.tolist(), kernel_type=kernel, kernel_params=params,
                                      post_transform=transform))
        d, best, votes = svm_classify(x, sv, per_class, coef, rho, kernel, params)
        tie_rows += int(sum((v == v.max()).sum() > 1 for v in votes))
        assert len(set(best.tolist())) == k, f"{tag}: the rows do not reach every class"
        z = np.concatenate([-d, d], 1) if k == 2 else \
            {"NONE": d, "SOFTMAX": softmax(d), "LOGISTIC": sigmoid(d)}[transform]
        string_labels = isinstance(labels[0], str)
        outputs += [(f"{tag}_label", TensorProto.STRING if string_labels else I64, [rows]), (f"{tag}_scores", F, list(z.shape))]
        expected += [np.array(labels, object if string_labels else np.int64)[best], z]
    assert tie_rows > 0, "no row with tied votes"
    # Linear mode: a row of coefficients a class, rho[0] added to each score.
    coef = rng.standard_normal((3, c)).astype(np.float32)
    nodes.append(helper.make_node("SVMClassifier", ["x"], ["linmode_label", "linmode_scores"], domain=ML,
                                  name="linmode", classlabels_ints=[3, 1, 2], coefficients=coef.ravel().tolist(),
                                  rho=[0.25], kernel_type="RBF", kernel_params=[0.5, 0.0, 0.0],
                                  post_transform="SOFTMAX"))
    s = x.astype(np.float64) @ coef.T.astype(np.float64) + 0.25
    outputs += [("linmode_label", I64, [rows]), ("linmode_scores", F, [rows, 3])]
    expected += [np.array([3, 1, 2], np.int64)[s.argmax(1)], softmax(s)]
    regressors = [("reg_rbf", 7, "RBF", [0.4, 0.0, 0.0], 0, "x"), ("reg_poly", 5, "POLY", [0.3, 0.5, 2.0], 1, "x"),
                  ("reg_sig", 6, "SIGMOID", [0.25, 0.1, 0.0], 0, "x"), ("reg_linear", 0, "LINEAR", [0.0, 0.0, 0.0], 0, "x"),
                  ("reg_row", 4, "RBF", [0.2, 0.0, 0.0], 0, "x_row")]
    for tag, count, kernel, params, one_class, source in regressors:
        xs = x if source == "x" else x[3:4]
        attrs = dict(kernel_type=kernel, kernel_params=params, rho=[0.125], one_class=one_class, n_supports=count)
        if count:
            sv = rng.standard_normal((count, c)).astype(np.float32)
            coef = rng.standard_normal(count).astype(np.float32)
            attrs.update(support_vectors=sv.ravel().tolist(), coefficients=coef.tolist())
            y = svm_kernel(xs, sv, kernel, *params) @ coef.astype(np.float64) + 0.125
        else:
            coef = rng.standard_normal(c).astype(np.float32)
            attrs.update(coefficients=coef.tolist())
            y = xs.astype(np.float64) @ coef.astype(np.float64) + 0.125
        if one_class:
            assert np.abs(y).min() > 1e-3
            y = np.where(y > 0, 1.0, -1.0)
        nodes.append(helper.make_node("SVMRegressor", [source], [tag], domain=ML, name=tag, **attrs))
        outputs.append((tag, F, [xs.shape[0], 1]))
        expected.append(y[:, None])
    # Platt's calibration of a binary SVC (scikit-learn's probability=True): [p, 1 - p] with
    # p = 1 / (1 + exp(A d + B)) (libsvm's sigmoid_predict); the labels by the decision. Reference
    # numpy float64: ONNX Runtime 1.30's probabilities differ from it by up to 2e-3.
    sv = rng.standard_normal((5, c)).astype(np.float32)
    coef = np.float32([0.7, -0.4, 0.9, -0.6, -0.6])
    nodes.append(helper.make_node("SVMClassifier", ["x"], ["platt_label", "platt_prob"], domain=ML, name="platt",
                                  classlabels_ints=[3, 8], vectors_per_class=[2, 3], support_vectors=sv.ravel().tolist(),
                                  coefficients=coef.tolist(), rho=[0.1], kernel_type="RBF", kernel_params=[0.5, 0, 0],
                                  prob_a=[-1.7], prob_b=[0.2]))
    d = svm_kernel(x, sv, "RBF", 0.5, 0, 0) @ coef.astype(np.float64) + 0.1
    assert np.abs(d).min() > 1e-3 and (d > 0).any() and (d < 0).any()
    p = 1 / (1 + np.exp(-1.7 * d + 0.2))
    outputs += [("platt_label", I64, [rows]), ("platt_prob", F, [rows, 2])]
    expected += [np.where(d > 0, 3, 8).astype(np.int64), np.stack([p, 1 - p], 1)]
    graph = helper.make_graph(nodes, "ml_svm", [helper.make_tensor_value_info("x", F, [rows, c]),
                                                helper.make_tensor_value_info("x_row", F, [c])],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])
    model.ir_version = 8
    save("svm", model, [("x", x), ("x_row", x[3])], [])
    subprocess.run(["node", ort_run, "svm"], check=True)
    import onnx
    from onnx import numpy_helper
    for i, e in enumerate(expected):
        got = numpy_helper.to_array(onnx.load_tensor(f"svm/test_data_set_0/output_{i}.pb"))
        assert got.shape == e.shape, f"svm output {i} ({outputs[i][0]}): shape {got.shape}, numpy {e.shape}"
        if e.dtype == object:
            assert got.tolist() == e.tolist(), f"svm output {i} ({outputs[i][0]}): ONNX Runtime differs"
            continue
        err = np.abs(got.astype(np.float64) - e).max()
        tolerance = 5e-3 if outputs[i][0] == "platt_prob" else 1e-4
        assert err < tolerance * max(1.0, np.abs(e).max()), f"svm output {i} ({outputs[i][0]}): ONNX Runtime differs by {err}"
        if outputs[i][0] == "platt_prob":
            with open(f"svm/test_data_set_0/output_{i}.pb", "wb") as f:
                f.write(numpy_helper.from_array(e.astype(np.float32), "platt_prob").SerializeToString())


def features(ort_run):
    """Imputer (NaN and the default 0.0 on float, -1 on int64), ArrayFeatureExtractor (float [N, C]
    with a repeated index, int64, a [C] row), OneHotEncoder (int64 with unknown categories),
    LabelEncoder (int64 -> int64 and int64 -> float with defaults, float -> int64 with NaN and
    unknown inputs, version 4's keys_tensor/values_tensor/default_tensor), an Imputer -> Scaler ->
    SVMClassifier pipeline, FeatureVectorizer (cut, padded, int64, a [C] row), CategoryMapper and
    LabelEncoder between int64 and strings in one model; ONNX Runtime's
    outputs as the reference, checked against numpy by the definition when made."""
    rng = np.random.default_rng(2425)
    I64 = TensorProto.INT64
    x = rng.standard_normal((6, 4)).astype(np.float32)
    x[1, 2] = x[4, 0] = np.nan
    x[2, 1] = x[5, 3] = 0.0
    xi = rng.integers(-1, 8, (6, 3)).astype(np.int64)
    xf = rng.choice(np.array([0.5, -1.25, 2.0, 3.0, np.nan], np.float32), (6, 2))
    idx = helper.make_tensor("idx", I64, [3], [3, 0, 3])
    idx_int = helper.make_tensor("idx_int", I64, [1, 2], [2, 1])
    nodes = [
        helper.make_node("Imputer", ["x"], ["imputed_nan"], domain=ML, imputed_value_floats=[1.0, 2.0, 3.0, 4.0],
                         replaced_value_float=float("nan")),
        helper.make_node("Imputer", ["x"], ["imputed_zero"], domain=ML, imputed_value_floats=[9.5]),
        helper.make_node("Imputer", ["xi"], ["imputed_int"], domain=ML, imputed_value_int64s=[7, 8, 9],
                         replaced_value_int64=-1),
        helper.make_node("ArrayFeatureExtractor", ["x", "idx"], ["extracted"], domain=ML),
        helper.make_node("ArrayFeatureExtractor", ["xi", "idx_int"], ["extracted_int"], domain=ML),
        helper.make_node("ArrayFeatureExtractor", ["x_row", "idx"], ["extracted_row"], domain=ML),
        helper.make_node("OneHotEncoder", ["xi"], ["one_hot"], domain=ML, cats_int64s=[3, 1, 4, 5], zeros=1),
        helper.make_node("LabelEncoder", ["xi"], ["encoded_int"], domain=ML, keys_int64s=[1, 3, 5, 7],
                         values_int64s=[10, 30, 50, 70], default_int64=99),
        helper.make_node("LabelEncoder", ["xi"], ["encoded_float"], domain=ML, keys_int64s=[0, 2, 4, 6],
                         values_floats=[0.5, 2.5, 4.5, 6.5]),
        helper.make_node("LabelEncoder", ["xf"], ["encoded_from_float"], domain=ML, keys_floats=[0.5, 2.0, 3.0],
                         values_int64s=[5, 20, 30]),
    ]

    def encode(v, keys, values, default):
        return np.array([values[keys.index(e)] if e in keys else default for e in v.ravel().tolist()]).reshape(v.shape)

    imputed_nan = np.where(np.isnan(x), np.array([1.0, 2.0, 3.0, 4.0], np.float32), x)
    expected = [("imputed_nan", imputed_nan), ("imputed_zero", np.where(x == 0, np.float32(9.5), x)),
                ("imputed_int", np.where(xi == -1, np.array([7, 8, 9]), xi)), ("extracted", x[:, [3, 0, 3]]),
                ("extracted_int", xi[:, [2, 1]]), ("extracted_row", x[2:3, [3, 0, 3]]),
                ("one_hot", (xi[..., None] == np.array([3, 1, 4, 5])).astype(np.float32)),
                ("encoded_int", encode(xi, [1, 3, 5, 7], [10, 30, 50, 70], 99).astype(np.int64)),
                ("encoded_float", encode(xi, [0, 2, 4, 6], [0.5, 2.5, 4.5, 6.5], -0.0).astype(np.float32)),
                ("encoded_from_float", encode(xf, [0.5, 2.0, 3.0], [5, 20, 30], -1).astype(np.int64))]
    assert (xi == -1).any() and not np.isin(xi, [3, 1, 4, 5]).all() and np.isnan(xf).any()
    # Version 4's tensor attributes (the model imports ai.onnx.ml opset 4; the lists above work there too).
    nodes.append(helper.make_node("LabelEncoder", ["xi"], ["encoded_tensor"], domain=ML,
                                  keys_tensor=helper.make_tensor("keys", I64, [3], [6, 0, 7]),
                                  values_tensor=helper.make_tensor("values", F, [3], [-6.0, 0.25, 7.5]),
                                  default_tensor=helper.make_tensor("default", F, [1], [42.0])))
    expected.append(("encoded_tensor", encode(xi, [6, 0, 7], [-6.0, 0.25, 7.5], 42.0).astype(np.float32)))
    # A pipeline as skl2onnx writes an SVC's: Imputer (NaN -> the means) -> Scaler -> SVMClassifier.
    means = np.round(rng.standard_normal(4), 2).astype(np.float32)
    offset, scale = np.round(rng.standard_normal(4), 2).astype(np.float32), np.float32([0.5, 2.0, 1.5, 1.0])
    per_class = [3, 2, 3]
    # Support vectors at the rows (two a class) and two random ones, the coefficients' signs as
    # libsvm's duals give them (a class's vectors pull each of its pairs its way): every class wins.
    scaled = (np.where(np.isnan(x), means, x).astype(np.float64) - offset) * scale
    sv = np.concatenate([scaled[0:2], rng.standard_normal((1, 4)), scaled[2:4], scaled[4:6],
                         rng.standard_normal((1, 4))]).astype(np.float32)
    sign = np.array([[1, 1, 1, -1, -1, -1, -1, -1], [1, 1, 1, 1, 1, -1, -1, -1]])
    coef = (sign * np.round(np.abs(rng.standard_normal((2, 8))) + 0.5, 3)).ravel().astype(np.float32)
    rho = np.float32([0.1, -0.2, 0.05])
    nodes += [helper.make_node("Imputer", ["x"], ["p_imputed"], domain=ML, imputed_value_floats=means.tolist(),
                               replaced_value_float=float("nan")),
              helper.make_node("Scaler", ["p_imputed"], ["p_scaled"], domain=ML, offset=offset.tolist(),
                               scale=scale.tolist()),
              helper.make_node("SVMClassifier", ["p_scaled"], ["pipeline_label", "pipeline_scores"], domain=ML,
                               classlabels_strings=["low", "mid", "high"], vectors_per_class=per_class,
                               support_vectors=sv.ravel().tolist(), coefficients=coef.tolist(), rho=rho.tolist(),
                               kernel_type="RBF", kernel_params=[0.5, 0.0, 0.0])]
    d, best, _ = svm_classify(scaled, sv, per_class, coef, rho, "RBF", [0.5, 0.0, 0.0])
    assert len(set(best.tolist())) == 3, "the pipeline's rows do not reach every class"
    expected += [("pipeline_label", np.array(["low", "mid", "high"], dtype=object)[best]),
                 ("pipeline_scores", d.astype(np.float32))]
    # FeatureVectorizer (its inputs share one type): x cut to 2 features beside xf padded from 2 to
    # 3 (NaNs kept); xi (int64) padded from 3 to 5; a [C] row alone.
    nodes += [helper.make_node("FeatureVectorizer", ["x", "xf"], ["vectorized"], domain=ML, inputdimensions=[2, 3]),
              helper.make_node("FeatureVectorizer", ["xi"], ["vectorized_int"], domain=ML, inputdimensions=[5]),
              helper.make_node("FeatureVectorizer", ["x_row"], ["vectorized_row"], domain=ML, inputdimensions=[4])]
    expected += [("vectorized", np.concatenate([x[:, :2], xf, np.zeros((6, 1), np.float32)], 1)),
                 ("vectorized_int", np.concatenate([xi.astype(np.float32), np.zeros((6, 2), np.float32)], 1)),
                 ("vectorized_row", x[2:3])]
    # CategoryMapper both ways: int64 categories to strings (unknown ones to the default), and
    # strings (one unknown, one empty) to int64.
    cats_int, cats_str = [3, 1, 7, 5], ["three", "one", "seven", "f\u00fcnf"]
    xs = np.array(["one", "seven", "", "f\u00fcnf", "nine", "three"], dtype=object)
    nodes += [helper.make_node("CategoryMapper", ["xi"], ["categories"], domain=ML, cats_int64s=cats_int,
                               cats_strings=cats_str, default_string="other"),
              helper.make_node("CategoryMapper", ["xs"], ["category_ids"], domain=ML, cats_int64s=cats_int,
                               cats_strings=cats_str, default_int64=-7)]
    expected += [("categories", encode(xi, cats_int, cats_str, "other").astype(object)),
                 ("category_ids", encode(xs, cats_str, cats_int, -7).astype(np.int64))]
    # A two-class TreeEnsembleClassifier with string labels: x0 <= 0 (a NaN goes false).
    nodes.append(helper.make_node(
        "TreeEnsembleClassifier", ["x"], ["tree_label", "tree_scores"], domain=ML, nodes_treeids=[0, 0, 0],
        nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0], nodes_values=[0.0, 0.0, 0.0],
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
        class_treeids=[0, 0, 0, 0], class_nodeids=[1, 1, 2, 2], class_ids=[0, 1, 0, 1],
        class_weights=[0.75, 0.25, 0.125, 0.875], classlabels_strings=["neg", "pos"]))
    at_true = (x[:, 0] <= 0)[:, None]
    expected += [("tree_label", np.where(at_true[:, 0], "neg", "pos").astype(object)),
                 ("tree_scores", np.where(at_true, np.float32([0.75, 0.25]), np.float32([0.125, 0.875])))]
    # LabelEncoder between strings and int64 (onnxc makes it a CategoryMapper).
    nodes += [helper.make_node("LabelEncoder", ["xs"], ["encoded_from_string"], domain=ML, keys_strings=cats_str,
                               values_int64s=[30, 10, 70, 50]),
              helper.make_node("LabelEncoder", ["xi"], ["encoded_to_string"], domain=ML, keys_int64s=cats_int,
                               values_strings=["c", "a", "g", "e"], default_string="?")]
    expected += [("encoded_from_string", encode(xs, cats_str, [30, 10, 70, 50], -1).astype(np.int64)),
                 ("encoded_to_string", encode(xi, cats_int, ["c", "a", "g", "e"], "?").astype(object))]
    dtype = {np.dtype(np.float32): F, np.dtype(np.int64): I64, np.dtype(object): TensorProto.STRING}
    graph = helper.make_graph(nodes, "ml_features", [helper.make_tensor_value_info("x", F, [6, 4]),
                                                     helper.make_tensor_value_info("xi", I64, [6, 3]),
                                                     helper.make_tensor_value_info("xf", F, [6, 2]),
                                                     helper.make_tensor_value_info("x_row", F, [4]),
                                                     helper.make_tensor_value_info("xs", TensorProto.STRING, [6])],
                              [helper.make_tensor_value_info(n, dtype[v.dtype], list(v.shape)) for n, v in expected],
                              initializer=[idx, idx_int])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 4)])
    model.ir_version = 8
    # check=False: the installed onnx (1.12) knows ai.onnx.ml up to opset 3.
    save("features", model, [("x", x), ("xi", xi), ("xf", xf), ("x_row", x[2]), ("xs", xs)], [], check=False)
    subprocess.run(["node", ort_run, "features"], check=True)
    import onnx
    from onnx import numpy_helper
    for i, (name, e) in enumerate(expected):
        got = numpy_helper.to_array(onnx.load_tensor(f"features/test_data_set_0/output_{i}.pb"))
        assert got.shape == e.shape and got.dtype == e.dtype, f"features {name}: {got.shape} {got.dtype}, numpy {e.shape}"
        if name == "tree_label":
            # ONNX Runtime 1.30's labels of a two-class tree classifier whose weights are all
            # positive are not the best score's (here all "pos"; with int64 labels [10, 20] it writes
            # 1 and 1, not even labels): the reference is the label of the best score, the definition.
            with open(f"features/test_data_set_0/output_{i}.pb", "wb") as f:
                f.write(numpy_helper.from_array(e, name).SerializeToString())
        elif name == "pipeline_scores":
            assert np.abs(got - e).max() < 1e-5, f"features {name}: ONNX Runtime differs from numpy"
        else:
            assert np.array_equal(got, e, equal_nan=e.dtype != object), f"features {name}: ONNX Runtime differs from numpy"


if __name__ == "__main__":
    # make.py ORT_RUN [MODEL...]: every model, or the ones named.
    for make in (linear, trees, trees5, svm, features):
        if len(sys.argv) == 2 or make.__name__ in sys.argv[2:]:
            make(sys.argv[1])
