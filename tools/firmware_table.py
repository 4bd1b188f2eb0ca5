#!/usr/bin/env python3
"""The flash, RAM and instruction tables of docs/embedded.md, measured on the emulated boards.

For each model and Cortex-M core, runs `onnxc validate DIR --target CORE --report` (a bare-metal
image in QEMU, docs/embedded.md) and prints one markdown row from what the report says: flash for
code and weights, the arena, the stack run() used and the instructions run() executed. The float
models come from the shared corpus ($ONNXC_SHARED_MODELS, else ../shared/models), the int8 ones from tests/models/quant.

  tools/firmware_table.py --onnxc build/onnxc [--cores cortex-m4,cortex-m7,cortex-m55] [--macs]

--macs adds the RAM in all and the multiply-adds per instruction of run() (the model's MACs from
`onnxc MODEL --report`), the columns of the RISC-V table.

A model or tool that is absent is an error, never a silently shorter table.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.environ.get("ONNXC_SHARED_MODELS", os.path.join(os.path.dirname(REPO), "shared", "models"))
QUANT = os.path.join(REPO, "tests", "models", "quant")

# (label in the table, model directory): the MLPerf Tiny architectures and the MNIST example.
FLOAT_MODELS = [
    ("kws-dscnn (22,604; 2.66 M)", os.path.join(SHARED, "kws-dscnn")),
    ("resnet8-cifar (77,706; 12.5 M)", os.path.join(SHARED, "resnet8-cifar")),
    ("ad-autoencoder (269,992; 0.26 M)", os.path.join(SHARED, "ad-autoencoder")),
    ("mnist-cnn (20,522; 0.80 M)", os.path.join(SHARED, "mnist-cnn")),
]
INT8_MODELS = [
    ("kws_dscnn_int8 (22,604)", os.path.join(QUANT, "kws_dscnn_int8")),
    ("resnet8_int8 (77,706)", os.path.join(QUANT, "resnet8_int8")),
    ("ad_autoencoder_int8 (269,992)", os.path.join(QUANT, "ad_autoencoder_int8")),
]

FLASH = re.compile(r"flash: \d+ bytes = code (\d+) .* \+ weights (\d+)")
RAM = re.compile(r"RAM: (\d+) bytes = arena (\d+) \+ stack (\d+)")
MACS = re.compile(r"work: +(\d+) MACs")
INSTRUCTIONS = re.compile(r"run\(\): (\d+) instructions")


def model_macs(onnxc, model_dir):
    """The multiply-adds of one run of the model, from onnxc's --report."""
    run = subprocess.run([onnxc, os.path.join(model_dir, "model.onnx"), "--report", "-o", os.devnull],
                         capture_output=True, text=True)
    found = MACS.search(run.stdout + run.stderr)
    if run.returncode != 0 or not found:
        sys.exit(f"error: onnxc --report on {model_dir} gave no MAC count:\n{(run.stdout + run.stderr)[-2000:]}")
    return int(found.group(1))


def measure(onnxc, model_dir, core):
    """(code, weights, RAM, arena, stack, instructions) of one model on one core."""
    if not os.path.isfile(os.path.join(model_dir, "model.onnx")):
        sys.exit(f"error: {model_dir}/model.onnx not found (the shared corpus must be beside the checkout)")
    run = subprocess.run([onnxc, "validate", model_dir, "--target", core, "--report"],
                         capture_output=True, text=True)
    text = run.stdout + run.stderr
    if run.returncode != 0 or "PASS" not in text:
        sys.exit(f"error: onnxc validate {model_dir} --target {core} failed:\n{text[-2000:]}")
    flash, ram, instructions = FLASH.search(text), RAM.search(text), INSTRUCTIONS.search(text)
    if not (flash and ram and instructions):
        sys.exit(f"error: no firmware figures in the report of {model_dir} on {core}:\n{text[-2000:]}")
    return tuple(int(v) for v in flash.groups() + ram.groups() + instructions.groups())


def table(onnxc, models, cores, first_column, macs):
    if macs:
        print(f"| {first_column} | core | flash: code | flash: weights | RAM | RAM: arena | RAM: stack of `run()` "
              "| `run()` instructions | MAC per instruction |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    else:
        print(f"| {first_column} | core | flash: code | flash: weights | RAM: arena | RAM: stack of `run()` "
              "| `run()` instructions |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for label, model_dir in models:
        model_mac_count = model_macs(onnxc, model_dir) if macs else 0
        for i, core in enumerate(cores):
            code, weights, ram, arena, stack, instructions = measure(onnxc, model_dir, core)
            figures = [code, weights, ram, arena, stack, instructions] if macs else \
                [code, weights, arena, stack, instructions]
            row = " | ".join(f"{v:,}" for v in figures)
            if macs:
                row += f" | {model_mac_count / instructions:.3f}"
            print(f"| {label if i == 0 else ''} | {core} | {row} |", flush=True)
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--onnxc", required=True, help="path to the onnxc binary")
    parser.add_argument("--cores", default="cortex-m4,cortex-m7,cortex-m55", help="comma-separated targets")
    parser.add_argument("--macs", action="store_true", help="add the RAM in all and MAC per instruction")
    args = parser.parse_args()
    cores = args.cores.split(",")
    table(args.onnxc, FLOAT_MODELS, cores, "model (params, MACs)", args.macs)
    table(args.onnxc, INT8_MODELS, cores, "model (params)", args.macs)


if __name__ == "__main__":
    main()
