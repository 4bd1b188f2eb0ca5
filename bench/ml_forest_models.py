#!/usr/bin/python3
"""Writes the tree-ensemble benchmark models of docs/classical-ml.md (issue #24) into DIR (default
/tmp/mlforest-bench): random forests made like the test's (tests/models/ml/make.py's
random_forest: 100 trees, leaves cut early with probability 0.2 below level 1, one-weight leaves,
AVERAGE, one target) on 32 features, seeded; once with BRANCH_LEQ only and no missing-value
tracking, as scikit-learn writes them ("leq"), once with every branch mode mixed and missing
values tracked at random ("mixed"); depth 8 at batch 1, 8, 64 and 512, and depths 4 and 12 at
batch 64; "ltmissing" (BRANCH_LT, missing values tracked at random, as XGBoost writes them) at
depth 8, batch 1 and 64. ONNX Runtime's outputs as test data. Then:

    python3 bench/bench.py --onnxc build/onnxc --ort /work/ort --models DIR --rounds 3 --runs 20
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto as T, helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "models"))
sys.path.insert(0, os.path.join(here, "..", "tests", "models", "ml"))
from testdata import save  # noqa: E402
from make import random_forest  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/mlforest-bench"
os.makedirs(out, exist_ok=True)
os.chdir(out)
features = 32
cases = [(style, 8, batch) for style in ("leq", "mixed") for batch in (1, 8, 64, 512)]
cases += [("leq", depth, 64) for depth in (4, 12)] + [("mixed", depth, 64) for depth in (4, 12)]
cases += [("ltmissing", 8, batch) for batch in (1, 64)]
for style, depth, batch in cases:
    rng = np.random.default_rng(100 + depth)  # the same forest at every batch size
    thresholds = [np.round(rng.standard_normal(8), 2).astype(np.float32) for _ in range(features)]
    nodes, leaves = random_forest(rng, 100, depth, features, 1, 1, thresholds)
    if style == "leq":
        nodes["modes"] = ["LEAF" if m == "LEAF" else "BRANCH_LEQ" for m in nodes["modes"]]
        nodes["missing"] = [0] * len(nodes["missing"])
    if style == "ltmissing":  # as XGBoost writes them: BRANCH_LT, a default direction for missing values
        nodes["modes"] = ["LEAF" if m == "LEAF" else "BRANCH_LT" for m in nodes["modes"]]
    attrs = {f"nodes_{k}": v for k, v in nodes.items() if k != "missing"}
    attrs["nodes_missing_value_tracks_true"] = nodes["missing"]
    attrs.update({f"target_{k}": v for k, v in leaves.items()})
    attrs.update(n_targets=1, aggregate_function="AVERAGE")
    tag = f"forest_{style}_d{depth}_b{batch}"
    n = helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    g = helper.make_graph([n], tag, [helper.make_tensor_value_info("x", T.FLOAT, [batch, features])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [batch, 1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    x = np.random.default_rng(batch).standard_normal((batch, features)).astype(np.float32)
    save(tag, m, [("x", x)], [])
    subprocess.run(["node", "/work/ort/ort-run.mjs", tag], check=True)
    print(tag, len(nodes["modes"]), "nodes")
