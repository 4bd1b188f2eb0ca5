// Window geometry shared by Conv, ConvTranspose and the pools: kernel, strides, dilations,
// pads and auto_pad, validated and resolved to explicit numbers.
#pragma once

#include <vector>

#include "ops/op.h"

namespace onnxc {

struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;
};

// Resolves the window over the spatial dims `in` (x's dims after N and C). kernel comes from
// the weight shape or the kernel_shape attribute; ceil_mode rounds output dims up (pools).
Window resolve_window(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                      bool ceil_mode);

// Pads a per-dim list to three dims (depth, height, width) with `fill` in front.
std::vector<int64_t> to_3d(const std::vector<int64_t>& v, int64_t fill);

}  // namespace onnxc
