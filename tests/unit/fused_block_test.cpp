// rt::fused_block against a float64 reference of the steps it fuses (the 1x1 expansion and its
// activation, the depthwise Conv and its, the 1x1 projection and the residual, each rounded to
// float as the unfused steps store it): strides 1 and 2, kernels 3 x 3, 5 x 5 and 3 x 5, dilation
// 2, padding 'same', none and uneven, widths below, at and past a vector, bands of one row, of
// some rows and of the whole plane, one and two tasks, two images, with and without projection
// and residual. Built three times: portable (onnxc_unit_tests), -march=native (AVX-512 here:
// the flat bands, the stride-2 kernel) and AVX2 (the rows kernel).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_test_values.h"
#include "onnxc/fused_block.h"

namespace {

using onnxc::rt::Activation;
using onnxc::rt::ConvParams;
using onnxc::rt::Epilogue;
using onnxc::rt::FusedBlockParams;
using onnxc::rt::index_t;

struct Block {
  index_t batch, in_channels, channels, out_channels, in_h, in_w, k_h, k_w, stride, dilation;
  index_t pad_top, pad_bottom, pad_left, pad_right;
  bool residual;
};

ConvParams depthwise_of(const Block& b) {
  ConvParams p{};
  p.batch = b.batch, p.in_channels = p.out_channels = p.group = b.channels;
  p.in_d = p.out_d = p.k_d = p.stride_d = p.dilation_d = 1;
  p.in_h = b.in_h, p.in_w = b.in_w, p.k_h = b.k_h, p.k_w = b.k_w;
  p.stride_h = p.stride_w = b.stride, p.dilation_h = p.dilation_w = b.dilation;
  p.pad_h = b.pad_top, p.pad_w = b.pad_left;
  p.out_h = (b.in_h + b.pad_top + b.pad_bottom - b.dilation * (b.k_h - 1) - 1) / b.stride + 1;
  p.out_w = (b.in_w + b.pad_left + b.pad_right - b.dilation * (b.k_w - 1) - 1) / b.stride + 1;
  return p;
}

double clip6(double v) { return std::min(6.0, std::max(0.0, v)); }

// y[m][i] = sum_k a[m][k] x[k][i] + bias[m] over planes of n, in double; stored as float.
std::vector<float> pointwise(const std::vector<float>& a, const std::vector<float>& bias, const std::vector<float>& x,
                             index_t m, index_t k, index_t n, bool relu6) {
  std::vector<float> y(static_cast<std::size_t>(m * n));
  for (index_t r = 0; r < m; ++r)
    for (index_t i = 0; i < n; ++i) {
      double s = bias[static_cast<std::size_t>(r)];
      for (index_t l = 0; l < k; ++l)
        s += static_cast<double>(a[static_cast<std::size_t>(r * k + l)]) * x[static_cast<std::size_t>(l * n + i)];
      y[static_cast<std::size_t>(r * n + i)] = static_cast<float>(relu6 ? clip6(s) : s);
    }
  return y;
}

std::vector<float> depthwise(const ConvParams& p, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& bias) {
  std::vector<float> y(static_cast<std::size_t>(p.in_channels * p.out_h * p.out_w));
  for (index_t c = 0; c < p.in_channels; ++c)
    for (index_t oh = 0; oh < p.out_h; ++oh)
      for (index_t ow = 0; ow < p.out_w; ++ow) {
        double s = bias[static_cast<std::size_t>(c)];
        for (index_t kh = 0; kh < p.k_h; ++kh)
          for (index_t kw = 0; kw < p.k_w; ++kw) {
            const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
            const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
            if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
            s += static_cast<double>(w[static_cast<std::size_t>((c * p.k_h + kh) * p.k_w + kw)]) *
                 x[static_cast<std::size_t>((c * p.in_h + ih) * p.in_w + iw)];
          }
        y[static_cast<std::size_t>((c * p.out_h + oh) * p.out_w + ow)] = static_cast<float>(clip6(s));
      }
  return y;
}

// A serial parallel-for: the tasks one after another, so a task's rows and slot are its own.
void serial_for(void*, std::size_t tasks, onnxc_task_fn body, void* context) {
  for (std::size_t t = 0; t < tasks; ++t) body(context, t);
}

void check(const Block& b, index_t band, index_t tasks) {
  const ConvParams p = depthwise_of(b);
  const index_t c = b.channels, in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const index_t out_c = b.out_channels ? b.out_channels : c;
  const auto x = kernel_test_values(b.batch * b.in_channels * in_plane, 1);
  const auto w1 = kernel_test_values(c * b.in_channels, 2), b1 = kernel_test_values(c, 3);
  const auto wd = kernel_test_values(c * p.k_h * p.k_w, 4), bd = kernel_test_values(c, 5);
  const auto w2 = kernel_test_values(std::max<index_t>(b.out_channels, 1) * c, 6);
  const auto b2 = kernel_test_values(std::max<index_t>(b.out_channels, 1), 7);
  const auto r = kernel_test_values(b.batch * out_c * out_plane, 8);
  std::vector<float> expected;
  for (index_t n = 0; n < b.batch; ++n) {
    const std::vector<float> xn(x.begin() + n * b.in_channels * in_plane, x.begin() + (n + 1) * b.in_channels * in_plane);
    std::vector<float> y = depthwise(p, pointwise(w1, b1, xn, c, b.in_channels, in_plane, true), wd, bd);
    if (b.out_channels) y = pointwise(w2, b2, y, b.out_channels, c, out_plane, false);
    if (b.residual)
      for (index_t i = 0; i < out_c * out_plane; ++i)
        y[static_cast<std::size_t>(i)] += r[static_cast<std::size_t>(n * out_c * out_plane + i)];
    expected.insert(expected.end(), y.begin(), y.end());
  }
  std::vector<float> w1p(w1.size()), w2p(w2.size());
  onnxc::rt::pack_weights(w1.data(), c, b.in_channels, w1p.data());
  if (b.out_channels) onnxc::rt::pack_weights(w2.data(), b.out_channels, c, w2p.data());
  const FusedBlockParams f{p, b.in_channels, b.out_channels, band, tasks};
  // The slots, then a sentinel: the kernel stays in its scratch.
  const index_t scratch_floats = onnxc::rt::fused_block_scratch_floats(f);
  std::vector<float> scratch(static_cast<std::size_t>(scratch_floats + 16), 123.0f);
  std::vector<float> y(expected.size(), -7.0f);
  const onnxc::rt::FusedBlockOperands o{w1p.data(), b1.data(), wd.data(), bd.data(),
                                        b.out_channels ? w2p.data() : nullptr, b.out_channels ? b2.data() : nullptr,
                                        b.residual ? r.data() : nullptr};
  const Epilogue relu6{Activation::Clip, 0.0f, 6.0f};
  const onnxc::rt::FusedBlockEpilogues e{relu6, relu6, Epilogue{Activation::None, 0.0f, 0.0f}};
  const onnxc_parallel_for serial{serial_for, nullptr};
  onnxc::rt::fused_block(f, x.data(), o, e, y.data(), scratch.data(), tasks > 1 ? &serial : nullptr);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("output " << i << " of " << expected.size() << ", band " << band << ", tasks " << tasks);
    REQUIRE(std::fabs(y[i] - expected[i]) <= 1e-4f * (1.0f + std::fabs(expected[i])));
  }
  REQUIRE(scratch[static_cast<std::size_t>(scratch_floats)] == 123.0f);
}

}  // namespace

TEST_CASE("fused_block computes expansion, depthwise, projection and residual band by band as the unfused steps do") {
  const Block blocks[] = {
      // batch, C_in, C, C_out, h, w, k_h, k_w, stride, dilation, pads (top, bottom, left, right), residual
      {1, 8, 24, 8, 13, 13, 3, 3, 1, 1, 1, 1, 1, 1, true},      // 'same' stride 1, odd width below a vector
      {2, 5, 12, 7, 17, 33, 3, 3, 1, 1, 1, 1, 1, 1, false},     // two images, a vector and one column more
      {1, 6, 16, 9, 19, 21, 3, 3, 2, 1, 1, 1, 1, 1, false},     // stride 2, odd size
      {1, 4, 10, 0, 16, 40, 5, 5, 1, 1, 2, 2, 2, 2, false},     // 5 x 5 'same', no projection
      {1, 4, 10, 6, 15, 18, 5, 5, 2, 1, 2, 2, 2, 2, false},     // 5 x 5 stride 2
      {1, 3, 9, 0, 14, 20, 5, 5, 2, 1, 1, 2, 2, 1, false},      // stride 2, uneven padding, no projection
      {1, 7, 11, 7, 12, 12, 3, 3, 1, 2, 2, 2, 2, 2, true},      // dilation 2 'same'
      {1, 4, 8, 5, 11, 9, 3, 5, 1, 1, 0, 0, 2, 2, false},       // 3 x 5, no vertical padding
      {1, 4, 8, 5, 10, 10, 3, 3, 1, 1, 0, 2, 1, 0, false},      // padding below only
  };
  for (const Block& b : blocks) {
    const index_t out_h = depthwise_of(b).out_h;
    for (index_t band : {index_t(1), index_t(3), out_h})
      for (index_t tasks : {index_t(1), index_t(2)}) check(b, band, tasks);
  }
}
