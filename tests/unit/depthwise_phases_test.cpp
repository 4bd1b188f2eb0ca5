// conv_depthwise over the shape space against the reference rt::conv: kernels k x k, 1 x k and
// k x 1 of every width up to 9 (and 11, 13: no fixed-width path), strides 1 to 3, dilations 1, 2
// and 4, padding before and after unequal, none, and past the kernel's reach, planes narrower
// than a vector, of whole vectors and one column more, 1-d planes, two images; fused clamps in
// registers and the other activations over the stored rows. Built three times: portable
// (onnxc_unit_tests: depthwise_detail), -march=native (AVX-512 here) and AVX2 (the stride-phase
// kernel, depthwise_phases_simd.h, through xsimd); and cross-built for AArch64
// (unit.neon_depthwise: every shape through depthwise_rows_neon.h) and RISC-V vectors (unit.rvv).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "onnxc/conv.h"

namespace {

using onnxc::rt::ConvParams;
using onnxc::rt::Epilogue;
using onnxc::rt::index_t;

// Values in [-1, 1) from a fixed linear congruential sequence: no two neighbouring taps alike.
std::vector<float> values(index_t n, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uint32_t s = seed * 2654435761u + 1u;
  for (auto& f : v) {
    s = s * 1664525u + 1013904223u;
    f = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

struct Shape {
  index_t channels, in_h, in_w, k_h, k_w, stride_h, stride_w, dilation_h, dilation_w;
  index_t pad_top, pad_bottom, pad_left, pad_right;
};

ConvParams params_of(const Shape& s) {
  ConvParams p{};
  p.batch = 2, p.in_channels = p.out_channels = p.group = s.channels;
  p.in_d = p.out_d = p.k_d = p.stride_d = p.dilation_d = 1;
  p.in_h = s.in_h, p.in_w = s.in_w, p.k_h = s.k_h, p.k_w = s.k_w;
  p.stride_h = s.stride_h, p.stride_w = s.stride_w, p.dilation_h = s.dilation_h, p.dilation_w = s.dilation_w;
  p.pad_h = s.pad_top, p.pad_w = s.pad_left;
  p.out_h = (s.in_h + s.pad_top + s.pad_bottom - s.dilation_h * (s.k_h - 1) - 1) / s.stride_h + 1;
  p.out_w = (s.in_w + s.pad_left + s.pad_right - s.dilation_w * (s.k_w - 1) - 1) / s.stride_w + 1;
  return p;
}

void check(const ConvParams& p, const Epilogue& e) {
  const auto x = values(p.batch * p.in_channels * p.in_h * p.in_w, 1);
  const auto w = values(p.out_channels * p.k_h * p.k_w, 2), bias = values(p.out_channels, 3);
  std::vector<float> expected(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
  std::vector<float> y(expected.size(), -7.0f), z(expected.size(), -7.0f);
  // Two slots of scratch, the second one's first floats a sentinel: the kernel stays in its slot.
  const index_t slot = onnxc::rt::conv_depthwise_scratch_floats(p);
  std::vector<float> scratch(static_cast<std::size_t>(slot + 16), 123.0f);
  onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
  onnxc::rt::activate_row(e, expected.data(), static_cast<std::ptrdiff_t>(expected.size()));
  onnxc::rt::conv_depthwise(p, x.data(), w.data(), bias.data(), y.data(), scratch.data(), e);
  onnxc::rt::conv_depthwise_in_place(p, x.data(), w.data(), bias.data(), z.data(), e);
  INFO(p.in_channels << " channels, plane " << p.in_h << "x" << p.in_w << " -> " << p.out_h << "x" << p.out_w
                     << ", kernel " << p.k_h << "x" << p.k_w << ", stride " << p.stride_h << "x" << p.stride_w
                     << ", dilation " << p.dilation_h << "x" << p.dilation_w << ", pad " << p.pad_h << "," << p.pad_w
                     << ", activation " << static_cast<int>(e.activation));
  for (index_t i = slot; i < slot + 16; ++i) REQUIRE(scratch[static_cast<std::size_t>(i)] == 123.0f);
  for (std::size_t i = 0; i < y.size(); ++i) {
    REQUIRE(y[i] == Approx(expected[i]).margin(1e-5));
    REQUIRE(z[i] == Approx(expected[i]).margin(1e-5));
  }
}

const Epilogue kEpilogues[] = {{onnxc::rt::Activation::None, 0.0f, 0.0f},
                               {onnxc::rt::Activation::Clip, 0.0f, 6.0f},
                               {onnxc::rt::Activation::HardSwish, 0.0f, 0.0f},
                               {onnxc::rt::Activation::Sigmoid, 0.0f, 0.0f}};

}  // namespace

TEST_CASE("depthwise k x k of every width, stride 1-3, dilation 1/2/4 matches the reference") {
  for (index_t k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11})
    for (index_t stride : {1, 2, 3})
      for (index_t dilation : {1, 2, 4}) {
        if (dilation > 1 && k > 5) continue;  // windows wider than the planes below
        const index_t pad = (k - 1) * dilation / 2;
        for (index_t size : {7, 16, 17, 29, 40}) {
          if ((k - 1) * dilation + 1 > size + 2 * pad) continue;
          const Shape s{3, size + 1, size, k, k, stride, stride, dilation, dilation, pad, pad + 1, pad, pad % 2};
          const ConvParams p = params_of(s);
          if (p.out_h < 1 || p.out_w < 1) continue;
          check(p, kEpilogues[(k + stride + size) % 4]);
        }
      }
}

TEST_CASE("depthwise 1 x k, k x 1 and 1-d kernels match the reference") {
  for (index_t k : {3, 5, 7, 9, 13})
    for (index_t stride : {1, 2})
      for (index_t dilation : {1, 2}) {
        const index_t pad = (k - 1) * dilation / 2;
        for (index_t size : {9, 33, 64}) {
          check(params_of({4, size, size, 1, k, stride, stride, 1, dilation, 0, 0, pad, pad}), kEpilogues[0]);
          check(params_of({4, size, size, k, 1, stride, stride, dilation, 1, pad, pad, 0, 0}), kEpilogues[1]);
          check(params_of({5, 1, size * 3, 1, k, 1, stride, 1, dilation, 0, 0, pad, pad + 1}), kEpilogues[2]);
        }
      }
}

TEST_CASE("depthwise with no padding, padding past the kernel's reach, MobileNetV3's 5x5 stride 2, rows of several chunks, 'same' planes of large kernels in blocks of channels, 7x7 'same' planes, channels in the lanes on planes of up to 2048 padded floats") {
  for (const Shape& s : {Shape{5, 28, 28, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2}, Shape{3, 56, 56, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2},
                         Shape{3, 14, 14, 5, 5, 2, 2, 1, 1, 1, 2, 1, 2}, Shape{2, 20, 21, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
                         Shape{2, 20, 21, 5, 5, 2, 2, 1, 1, 0, 0, 0, 0}, Shape{2, 9, 10, 3, 3, 2, 2, 1, 1, 4, 4, 5, 5},
                         Shape{2, 3, 3, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2}, Shape{2, 2, 2, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3},
                         Shape{2, 113, 113, 7, 7, 4, 4, 1, 1, 3, 3, 3, 3}, Shape{2, 65, 66, 3, 3, 2, 2, 4, 4, 4, 4, 4, 4},
                         Shape{2, 33, 31, 3, 5, 2, 1, 1, 2, 1, 1, 4, 4}, Shape{3, 12, 150, 5, 3, 1, 2, 2, 1, 4, 4, 1, 1},
                         Shape{2, 9, 140, 3, 3, 3, 1, 1, 3, 1, 1, 3, 3}, Shape{5, 14, 14, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
                         Shape{17, 7, 7, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3}, Shape{33, 16, 13, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4},
                         // channel lanes on AVX2 too (rows of at most 8): a whole vector of rows,
                         // rows narrower, fewer channels than lanes
                         Shape{11, 8, 8, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}, Shape{9, 6, 5, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
                         Shape{3, 7, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
                         Shape{3, 23, 19, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3}, Shape{2, 20, 17, 7, 7, 1, 1, 2, 2, 6, 6, 6, 6},
                         Shape{19, 30, 30, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3}, Shape{3, 31, 37, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2},
                         // planes whose padded copy is larger than depthwise_rows_neon.h's stack copy
                         // (its in-place rows: border strips, row tails): 3x3 and 5x5 stride 1 and 2,
                         // a dilated 3x3
                         Shape{1, 130, 131, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, Shape{1, 131, 133, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                         Shape{1, 140, 141, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2}, Shape{1, 134, 130, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
                         Shape{1, 140, 139, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}})
    for (const Epilogue& e : kEpilogues) check(params_of(s), e);
}
