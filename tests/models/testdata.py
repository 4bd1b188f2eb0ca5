"""Writes a model and one data set in the ONNX backend-test layout (shared by the make.py scripts)."""
import os

import onnx
from onnx import numpy_helper


def save(name, model, inputs, outputs, data_set=0, check=True):
    """name/model.onnx plus name/test_data_set_<data_set>/{input,output}_N.pb from (name, array) pairs.
    check=False skips onnx's checker (for opsets newer than the installed onnx knows)."""
    os.makedirs(f"{name}/test_data_set_{data_set}", exist_ok=True)
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, f"{name}/model.onnx")
    for kind, pairs in (("input", inputs), ("output", outputs)):
        for i, (n, v) in enumerate(pairs):
            with open(f"{name}/test_data_set_{data_set}/{kind}_{i}.pb", "wb") as f:
                f.write(numpy_helper.from_array(v, n).SerializeToString())
