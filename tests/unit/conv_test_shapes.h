// Convolution test inputs shared by the kernel tests (simd_kernels_test, conv_grouped_test):
// a deterministic ramp of values and square 2-d geometries. Runtime-support only.
#pragma once

#include <vector>

#include "onnxc/conv.h"

namespace {

using onnxc::rt::ConvParams;
using onnxc::rt::index_t;

std::vector<float> ramp(index_t n, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = scale * static_cast<float>((i * 7) % 11 - 5);
  return v;
}

// 2-d convolution geometry with square kernel, stride, pad and dilation.
ConvParams conv2d(index_t c, index_t m, index_t group, index_t hw, index_t k, index_t stride, index_t pad,
                  index_t dilation) {
  index_t out = (hw + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  return ConvParams{1,   c,   m,      group,  1,      hw,     hw,       1,        out,      out, 1,   k, k,
                    1,   stride, stride, 1,   dilation, dilation, 0, pad, pad};
}

}  // namespace
