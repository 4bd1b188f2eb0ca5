#!/bin/sh
# Installs everything onnxc needs to build and test on Debian 12 (run as root or with sudo).
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
  g++ clang cmake ninja-build make \
  libprotobuf-dev protobuf-compiler libfmt-dev libcli11-dev catch2 libxsimd-dev \
  python3 python3-onnx python3-numpy libonnx-testdata \
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm
