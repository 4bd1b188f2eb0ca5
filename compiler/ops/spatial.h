// Window geometry shared by Conv, ConvTranspose and the pools: kernel, strides, dilations,
// pads and auto_pad, validated and resolved to explicit numbers.
#pragma once

#include <vector>

#include "onnxc/conv.h"
#include "ops/op.h"

namespace onnxc {

struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;
};

// Resolves the window over the spatial dims `in` (x's dims after N and C). kernel comes from
// the weight shape or the kernel_shape attribute; ceil_mode rounds output dims up (pools).
Window resolve_window(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                      bool ceil_mode);

// The same for ConvTranspose and MaxUnpool, where the window slides over the output: `in` is
// the small side. Honours output_padding and output_shape (which, when given, sets the pads:
// they may then be negative, meaning output beyond the last window). out[i] =
// stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pad_begin - pad_end.
Window resolve_transposed_window(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel);

// The spatial dims of a convolution weight [*, *, k...], checked against kernel_shape if given.
std::vector<int64_t> weight_kernel(const Node& n, const Value& weight);

// The geometry of a convolution (or transposed convolution) over window w, for conv.h's kernels.
rt::ConvParams conv_params(const Window& w, int64_t batch, int64_t in_channels, int64_t out_channels, int64_t group);
// `constexpr rt::ConvParams p = ...;` as C++.
std::string conv_params_code(const rt::ConvParams& p);

// Pads a per-dim list to three dims (depth, height, width) with `fill` in front.
std::vector<int64_t> to_3d(const std::vector<int64_t>& v, int64_t fill);

}  // namespace onnxc
