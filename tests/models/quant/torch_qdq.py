#!/usr/bin/python3
"""Writes torch_qdq: a small CNN quantized with PyTorch 1.13's eager-mode static quantization
(fbgemm qconfig: uint8 activations, int8 per-channel weights) and exported by torch.onnx.export,
opset 13, as PyTorch writes quantized models: every scale and zero point a Constant node, a Cast to
uint8 between each QuantizeLinear and DequantizeLinear, each bias DequantizeLinear(int32) with a
zero point made by ConstantOfShape and Cast. Conv+ReLU fused, a depthwise Conv, a separate ReLU,
a residual add (FloatFunctional), a bilinear Upsample x2, global average pooling, a Linear.
Run from this directory; the expected outputs come from ONNX Runtime:

    node /work/ort/ort-run.mjs torch_qdq

`torch_qdq.py fx` writes torch_fx instead: FxNet quantized in FX graph mode (prepare_fx /
convert_fx, the default fbgemm qconfig mapping) and exported the same way, which reads each
activation's scale and zero point through Identity of an initializer and exports Hardswish at
opset 13 as x * HardSigmoid(x); its expected outputs come from ONNX Runtime's definition run
(ORT_DIR=/work/ort node ort_run_definition.mjs torch_fx: its optimised run rounds a step apart)."""
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testdata import save  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant, self.dequant = torch.quantization.QuantStub(), torch.quantization.DeQuantStub()
        self.c1, self.r1 = nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()
        self.c2, self.r2 = nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.ReLU()
        self.c3, self.skip = nn.Conv2d(8, 16, 1), nn.Conv2d(8, 16, 1)
        self.add = nn.quantized.FloatFunctional()
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(16, 4)

    def forward(self, x):
        a = self.r1(self.c1(self.quant(x)))
        b = self.c3(self.r2(self.c2(a)))
        u = self.up(self.add.add(b, self.skip(a)))
        return self.dequant(self.fc(self.pool(u).flatten(1)))


class FxNet(nn.Module):
    """What FX graph mode quantizes in a MobileNetV3 block: Conv+ReLU6, depthwise Conv, Hardswish,
    a squeeze-and-excitation gate (mean, Conv, ReLU, Conv, Sigmoid, Mul), a residual add, an
    AvgPool and a MaxPool added, Flatten and a Linear; no Concat (PyTorch 1.13 cannot export a
    quantized cat)."""
    def __init__(self):
        super().__init__()
        self.c1, self.r1 = nn.Conv2d(3, 16, 3, padding=1, stride=2), nn.ReLU6()
        self.c2, self.hs = nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.Hardswish()
        self.se1, self.se2, self.sig = nn.Conv2d(16, 8, 1), nn.Conv2d(8, 16, 1), nn.Sigmoid()
        self.c3, self.c4 = nn.Conv2d(16, 16, 1), nn.Conv2d(16, 16, 1)
        self.pool, self.mp = nn.AvgPool2d(2), nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        a = self.r1(self.c1(x))
        b = self.hs(self.c2(a))
        b = b * self.sig(self.se2(torch.relu(self.se1(b.mean((2, 3), keepdim=True)))))
        c = self.c3(b) + a
        return self.fc((self.pool(c) + self.mp(self.c4(c))).flatten(1))


def main_fx():
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.manual_seed(29)
    rng = np.random.default_rng(29)
    example = torch.from_numpy(rng.standard_normal((1, 3, 16, 16)).astype(np.float32))
    m = prepare_fx(FxNet().eval(), get_default_qconfig_mapping("fbgemm"), (example,))
    for _ in range(8):
        m(torch.from_numpy(rng.standard_normal((1, 3, 16, 16)).astype(np.float32)))
    m = convert_fx(m)
    torch.onnx.export(m, example, "torch_fx.onnx", opset_version=13, input_names=["x"], output_names=["y"])
    model = onnx.load("torch_fx.onnx")
    os.remove("torch_fx.onnx")
    save("torch_fx", model, [("x", example.numpy())], [("y", np.zeros((1, 10), np.float32))])


def main():
    torch.manual_seed(29)
    rng = np.random.default_rng(29)
    m = Net().eval()
    m.qconfig = torch.quantization.get_default_qconfig("fbgemm")
    torch.quantization.fuse_modules(m, [["c1", "r1"]], inplace=True)
    torch.quantization.prepare(m, inplace=True)
    for _ in range(8):
        m(torch.from_numpy(rng.standard_normal((1, 3, 12, 12)).astype(np.float32)))
    torch.quantization.convert(m, inplace=True)
    inputs = [rng.standard_normal((1, 3, 12, 12)).astype(np.float32) for _ in range(2)]
    torch.onnx.export(m, torch.from_numpy(inputs[0]), "torch_qdq.onnx", opset_version=13, input_names=["x"],
                      output_names=["y"])
    model = onnx.load("torch_qdq.onnx")
    os.remove("torch_qdq.onnx")
    for i, x in enumerate(inputs):  # placeholder outputs: ort-run.mjs writes ONNX Runtime's
        save("torch_qdq", model, [("x", x)], [("y", np.zeros((1, 4), np.float32))], data_set=i)


if __name__ == "__main__":
    main_fx() if sys.argv[1:] == ["fx"] else main()
