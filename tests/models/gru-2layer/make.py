"""A 2-layer GRU as PyTorch exports it (issue #28: its -O3 -Werror build failed in rnn.h's add_matvec).

torch.nn.GRU(40, 64, num_layers=2, batch_first=True) and a Linear(64, 12) on the last step, exported
at opset 14, random weights from a fixed seed. Writes gru-2layer/model.onnx and
test_data_set_0/input_0.pb; the expected output comes from ONNX Runtime, not from this script:

    /usr/bin/python3 tests/models/gru-2layer/make.py     (writes beside itself; needs python3-torch)
    node /work/ort/ort-run.mjs tests/models/gru-2layer   (writes test_data_set_0/output_0.pb)
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper


class Gru2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(40, 64, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(64, 12)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.head(y[:, -1, :])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(1028)
    model = Gru2().eval()
    x = torch.from_numpy(np.random.default_rng(1028).standard_normal((1, 20, 40)).astype(np.float32))
    path = os.path.join(here, "model.onnx")
    torch.onnx.export(model, (x,), path, opset_version=14, input_names=["input"], output_names=["output"])
    onnx.checker.check_model(onnx.load(path))
    os.makedirs(os.path.join(here, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(here, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "input").SerializeToString())


if __name__ == "__main__":
    sys.exit(main())
