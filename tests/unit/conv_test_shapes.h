// Convolution test inputs shared by the kernel tests (simd_kernels_test, conv_grouped_test, the
// ConvTranspose tests): deterministic values and 2-d geometries. Runtime-support only.
#pragma once

#include <cstdint>
#include <vector>

#include "onnxc/conv.h"

namespace {

using onnxc::rt::ConvParams;
using onnxc::rt::index_t;

inline std::vector<float> ramp(index_t n, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = scale * static_cast<float>((i * 7) % 11 - 5);
  return v;
}

// 2-d convolution geometry with square kernel, stride, pad and dilation.
inline ConvParams conv2d(index_t c, index_t m, index_t group, index_t hw, index_t k, index_t stride, index_t pad,
                         index_t dilation) {
  index_t out = (hw + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  return ConvParams{1,   c,   m,      group,  1,      hw,     hw,       1,        out,      out, 1,   k, k,
                    1,   stride, stride, 1,   dilation, dilation, 0, pad, pad};
}

// Values in [-1, 1) from a fixed linear congruential sequence.
inline std::vector<float> lcg_values(index_t n, uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& f : v) {
    seed = seed * 1664525u + 1013904223u;
    f = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

// Ramp input, weights and bias for p, the reference convolution's output (rt::conv), and the
// weights packed as the matrix-product kernels read them.
struct ConvCase {
  std::vector<float> x, w, bias, expected, packed;
};
inline ConvCase conv_case(const ConvParams& p) {
  const index_t k = onnxc::rt::conv_gemm_k(p), n = onnxc::rt::conv_gemm_n(p);
  ConvCase c{ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), ramp(p.out_channels * k, 0.25f),
             ramp(p.out_channels, 1.0f), std::vector<float>(static_cast<std::size_t>(p.batch * p.out_channels * n)),
             std::vector<float>(static_cast<std::size_t>(p.out_channels * k))};
  onnxc::rt::conv(p, c.x.data(), c.w.data(), c.bias.data(), c.expected.data());
  onnxc::rt::pack_weights(c.w.data(), p.out_channels, k, c.packed.data());
  return c;
}

// A 2-d transposed geometry (conv_transpose.h's reading of ConvParams), the same in both dims but
// the input plane (h x w): pads before and after alike, output_padding at the end.
inline ConvParams transposed2d(index_t batch, index_t c, index_t m, index_t group, index_t h, index_t w, index_t k,
                               index_t stride, index_t dilation, index_t pad, index_t output_padding) {
  auto out = [&](index_t in) { return (in - 1) * stride - 2 * pad + dilation * (k - 1) + 1 + output_padding; };
  return ConvParams{batch, c, m, group, 1, h, w, 1, out(h), out(w), 1, k, k, 1, stride, stride, 1, dilation, dilation,
                    0, pad, pad};
}

}  // namespace
