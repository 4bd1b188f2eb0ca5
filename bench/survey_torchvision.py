#!/usr/bin/python3
"""Models the corpus does not have, for checking onnxc on architectures it was not tuned on.

Exports torchvision 0.14 classifiers (random weights from seed 1, BatchNorm statistics randomised
so folding them matters) to OUT/NAME/model.onnx with one input in OUT/NAME/test_data_set_0, in the
backend-test layout bench/bench.py and `onnxc validate` read. ONNX Runtime then writes the expected
outputs:

    /usr/bin/python3 bench/survey_torchvision.py /tmp/survey [NAME ...]
    for d in /tmp/survey/*/; do node /work/ort/ort-run.mjs $d; done
    for d in /tmp/survey/*/; do build/onnxc validate $d; done
    python3 bench/bench.py --onnxc build/onnxc --ort /work/ort --models /tmp/survey --out /tmp/survey.md

Not a test (the models are 5-500 MB and take minutes to export and compile); docs/performance.md
("Models outside the corpus") has a run's results. Needs Debian's python3-torch and
python3-torchvision (use /usr/bin/python3).
"""
import os
import sys

import torch
import torchvision.models as tm
from onnx import numpy_helper

# name: (constructor, input size, opset)
MODELS = {
    "resnet18": (tm.resnet18, 224, 13),
    "resnext50_32x4d": (tm.resnext50_32x4d, 160, 13),
    "densenet121": (tm.densenet121, 160, 13),
    "googlenet": (lambda: tm.googlenet(aux_logits=False, init_weights=True), 224, 13),
    "squeezenet1_0": (tm.squeezenet1_0, 224, 13),
    "alexnet": (tm.alexnet, 224, 13),
    "mobilenet_v3_small": (tm.mobilenet_v3_small, 224, 13),
    "mobilenet_v3_large": (tm.mobilenet_v3_large, 224, 13),
    "shufflenet_v2_x1_0": (tm.shufflenet_v2_x1_0, 224, 13),
    "mnasnet0_5": (tm.mnasnet0_5, 224, 13),
    "mnasnet1_0": (tm.mnasnet1_0, 224, 13),
    "efficientnet_b1": (tm.efficientnet_b1, 192, 13),
    "regnet_y_400mf": (tm.regnet_y_400mf, 224, 13),
    "convnext_tiny": (tm.convnext_tiny, 128, 17),
    "swin_t": (tm.swin_t, 224, 17),
    "vit_b_32": (tm.vit_b_32, 224, 17),
}


def export(name, out):
    ctor, size, opset = MODELS[name]
    torch.manual_seed(1)
    model = ctor().eval()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    x = torch.rand(1, 3, size, size)
    torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=opset, input_names=["input"],
                      output_names=["output"])
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "input").SerializeToString())


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for name in sys.argv[2:] or list(MODELS):
        export(name, sys.argv[1])
        print(name, "exported")
