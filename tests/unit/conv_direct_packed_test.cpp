// rt::conv_direct_packed (onnxc/conv.h) against the reference loop nest rt::conv on the shapes
// its block choice and border handling distinguish: deep strided layers onto narrow planes
// (blocks of 4 columns over four panels), patch convolutions (kernel == stride), 1-d rows with
// dilation, a tap whose columns all fall in the padding, and kernels wider than the columns
// output_block keeps ranges for. Built portable (onnxc_unit_tests), native
// (onnxc_simd_kernel_tests) and AVX2 (onnxc_avx2_kernel_tests: 8-lane panels, blocks of 4).
// Ramp values are multiples of 1/8 and every partial sum is exact, so the outputs must be equal.
#include <catch2/catch.hpp>

#include <sstream>
#include <vector>

#include "onnxc/conv.h"
#include "onnxc/conv_gemm_stacked.h"
#include "conv_test_shapes.h"

namespace {

ConvParams row_1d(index_t c, index_t m, index_t w, index_t k, index_t stride, index_t pad, index_t dilation) {
  ConvParams p = conv2d(c, m, 1, 1, 1, stride, 0, dilation);
  p.in_h = p.out_h = 1, p.k_h = 1, p.pad_h = 0, p.in_w = w, p.k_w = k, p.pad_w = pad;
  p.out_w = (w + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  return p;
}

std::string shape_of(const ConvParams& p) {
  std::ostringstream o;
  o << p.in_channels << " -> " << p.out_channels << ", " << p.in_h << "x" << p.in_w << " -> " << p.out_h << "x"
    << p.out_w << ", kernel " << p.k_h << "x" << p.k_w << ", stride " << p.stride_w << ", pad " << p.pad_w
    << ", dilation " << p.dilation_w;
  return o.str();
}

}  // namespace

TEST_CASE("conv_direct_packed computes deep narrow, patch and dilated 1-d convolutions as the reference does") {
  ConvParams padded_past_kernel = conv2d(5, 20, 1, 6, 3, 1, 4, 1);  // taps with every column in the padding
  padded_past_kernel.pad_h = 1, padded_past_kernel.out_h = 6;
  const std::vector<ConvParams> shapes = {
      conv2d(96, 80, 1, 14, 3, 2, 1, 1),   // onto 7 x 7: four panels of 16, then one
      conv2d(40, 72, 1, 15, 3, 2, 0, 1),   // stride 2, no padding, odd plane
      conv2d(24, 48, 1, 13, 3, 2, 1, 1),   // two panels and a half
      conv2d(3, 64, 1, 56, 8, 8, 0, 1),    // patches of 8 x 8 onto 7 x 7
      conv2d(3, 70, 1, 48, 16, 16, 0, 1),  // patches of 16 x 16 onto 3 x 3
      conv2d(16, 33, 1, 20, 3, 3, 1, 2),   // stride 3, dilation 2
      padded_past_kernel,
      row_1d(8, 48, 100, 5, 2, 4, 2),      // 1-d, dilation 2, stride 2
      row_1d(4, 17, 300, 9, 1, 8, 2),      // 1-d, dilation 2, 'same'
      row_1d(2, 20, 150, 70, 1, 35, 1),    // 70 kernel columns: past the cached ranges
  };
  for (const ConvParams& p : shapes) {
    INFO(shape_of(p));
    const index_t k = onnxc::rt::conv_gemm_k(p);
    const auto x = ramp(p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * k, 0.25f);
    const auto bias = ramp(p.out_channels, 1.0f);
    std::vector<float> packed(w.size());
    onnxc::rt::pack_direct_weights(w.data(), p.out_channels, k, packed.data());
    const std::size_t out = static_cast<std::size_t>(p.out_channels * p.out_h * p.out_w);
    std::vector<float> expected(out), y(out, -1.0f);
    onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
    onnxc::rt::conv_direct_packed(p, x.data(), packed.data(), bias.data(), y.data());
    REQUIRE(y == expected);
  }
}

// rt::conv_gemm_stacked (onnxc/conv_gemm_stacked.h), the other kernel that needs no scratch: the
// product over im2col blocks on the stack, cut along K. Deep products in many blocks of depth
// (the first block writing y with the bias, the others added, the activation on the last), a
// partial last panel of output channels, outputs cut into several blocks of columns with a short
// last one, patches, 5 x 5 'valid' over two images, a 1-d row with stride and dilation, and one
// output column. Exact sums (ramp values), so the outputs must equal the reference's.
TEST_CASE("conv_gemm_stacked computes deep convolutions in blocks of depth and columns as the reference does") {
  ConvParams two_images = conv2d(160, 16, 1, 13, 5, 1, 0, 1);
  two_images.batch = 2;
  const std::vector<ConvParams> shapes = {
      conv2d(512, 40, 1, 14, 3, 2, 1, 1),   // K = 4608 onto 7 x 7: 19 blocks of depth, five panels
      conv2d(64, 20, 1, 30, 3, 1, 1, 1),    // 900 columns: blocks of 128, the last of 4
      conv2d(3, 24, 1, 64, 16, 16, 0, 1),   // patches of 16 x 16 onto 4 x 4
      two_images,                           // 5 x 5 'valid', K = 4000
      row_1d(64, 24, 300, 7, 2, 3, 2),      // 1-d: 147 columns in two blocks, dilation 2
      conv2d(1024, 12, 1, 2, 3, 2, 1, 1),   // one output column, K = 9216
  };
  for (const ConvParams& p : shapes) {
    for (onnxc::rt::Epilogue e : {onnxc::rt::kNoActivation, onnxc::rt::Epilogue{onnxc::rt::Activation::Clip, -1.0f, 6.0f}}) {
      INFO(shape_of(p) << ", batch " << p.batch << ", activation " << static_cast<int>(e.activation));
      REQUIRE(onnxc::rt::conv_stack_im2col_applies(p));
      const index_t k = onnxc::rt::conv_gemm_k(p);
      const auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * k, 0.25f);
      const auto bias = ramp(p.out_channels, 1.0f);
      std::vector<float> packed(w.size());
      onnxc::rt::pack_weights(w.data(), p.out_channels, k, packed.data());
      const std::size_t out = static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
      std::vector<float> expected(out), y(out, -1.0f);
      onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
      onnxc::rt::activate_row(e, expected.data(), static_cast<std::ptrdiff_t>(out));
      onnxc::rt::conv_gemm_stacked(p, x.data(), packed.data(), bias.data(), y.data(), e);
      REQUIRE(y == expected);
    }
  }
}
