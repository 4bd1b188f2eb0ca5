// ConvTranspose as a matrix product plus col2im (onnxc/conv_transpose_gemm.h) against the
// reference loops rt::conv_transpose, over kernels 1-5, strides 1-4, dilations, pads,
// output_padding, groups, odd planes and blocks of input rows; every case also through
// rt::conv_transpose_gemm_stacked (the columns on the stack, blocks of product rows and input
// rows). Depends on runtime-support only:
// built into onnxc_unit_tests (portable product), onnxc_simd_kernel_tests (-march=native) and
// onnxc_avx2_kernel_tests.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "onnxc/conv_transpose.h"
#include "onnxc/conv_transpose_gemm.h"
#include "conv_test_shapes.h"

namespace {

void check(const ConvParams& p, index_t block_rows, bool relu = false) {
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t weights = p.in_channels * ocg * p.k_h * p.k_w;
  const std::vector<float> x = lcg_values(p.batch * p.in_channels * p.in_h * p.in_w, 1), w = lcg_values(weights, 2),
                           bias = lcg_values(p.out_channels, 3);
  const std::size_t out = static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
  std::vector<float> expected(out), y(out, 1e30f), packed(static_cast<std::size_t>(weights)),
      t(static_cast<std::size_t>(onnxc::rt::conv_transpose_gemm_rows(p) * icg));
  onnxc::rt::conv_transpose(p, x.data(), w.data(), bias.data(), expected.data());
  onnxc::rt::pack_conv_transpose_weights(p, w.data(), t.data(), packed.data());
  std::vector<float> cols(static_cast<std::size_t>(onnxc::rt::conv_transpose_gemm_scratch_floats(p, block_rows)) + 1);
  onnxc::rt::conv_transpose_gemm(p, x.data(), packed.data(), bias.data(), y.data(), cols.data(), block_rows,
                                 relu ? onnxc::rt::Epilogue{onnxc::rt::Activation::Relu, 0.0f, 0.0f}
                                      : onnxc::rt::kNoActivation);
  INFO("c " << p.in_channels << " m " << p.out_channels << " group " << p.group << " plane " << p.in_h << "x" << p.in_w
            << " k " << p.k_w << " stride " << p.stride_w << " dilation " << p.dilation_w << " pad " << p.pad_w
            << " out " << p.out_h << "x" << p.out_w << " block " << block_rows);
  for (std::size_t i = 0; i < out; ++i) {
    INFO("output " << i);
    REQUIRE(y[i] == Approx(relu && expected[i] < 0 ? 0.0f : expected[i]).margin(1e-4));
  }
  if (!onnxc::rt::conv_transpose_stack_applies(p)) return;
  std::fill(y.begin(), y.end(), 1e30f);
  onnxc::rt::conv_transpose_gemm_stacked(p, x.data(), packed.data(), bias.data(), y.data(),
                                         relu ? onnxc::rt::Epilogue{onnxc::rt::Activation::Relu, 0.0f, 0.0f}
                                              : onnxc::rt::kNoActivation);
  const onnxc::rt::StackColumns block = onnxc::rt::conv_transpose_stack_columns(p);
  INFO("stacked: blocks of " << block.product_rows << " product rows x " << block.in_rows << " input rows");
  for (std::size_t i = 0; i < out; ++i) {
    INFO("output " << i);
    REQUIRE(y[i] == Approx(relu && expected[i] < 0 ? 0.0f : expected[i]).margin(1e-4));
  }
}

}  // namespace

TEST_CASE("conv_transpose_gemm matches the reference loops", "[conv_transpose]") {
  for (index_t k = 1; k <= 5; ++k)
    for (index_t stride = 1; stride <= 4; ++stride)
      for (index_t dilation = 1; dilation <= 2; ++dilation)
        for (index_t pad = 0; pad <= (k - 1) * dilation / 2 + (k > 1 ? 1 : 0); pad += (k > 2 ? 2 : 1))
          for (index_t output_padding = 0; output_padding < stride; output_padding += 2) {
            const ConvParams p = transposed2d(1, 5, 3, 1, 3, 7, k, stride, dilation, pad, output_padding);
            if (p.out_h < 1 || p.out_w < 1) continue;
            check(p, 1);
            check(p, 2);
            check(p, p.in_h);
          }
}

TEST_CASE("conv_transpose_gemm: groups, batches, wide channels, products alone", "[conv_transpose]") {
  check(transposed2d(2, 6, 9, 3, 5, 4, 3, 2, 1, 1, 1), 2);
  check(transposed2d(1, 8, 8, 4, 7, 7, 4, 2, 1, 1, 0), 3);
  check(transposed2d(1, 37, 19, 1, 9, 11, 3, 2, 1, 1, 1), 4);  // odd product sizes: M = 171, K = 37, N = 44
  check(transposed2d(1, 64, 8, 1, 6, 6, 5, 2, 1, 2, 1), 6);
  check(transposed2d(2, 33, 17, 1, 5, 13, 1, 1, 1, 0, 0), 1);  // 1x1 stride 1: the product alone
  check(transposed2d(1, 6, 4, 2, 3, 5, 1, 1, 1, 0, 0), 1);
  check(transposed2d(1, 16, 24, 1, 4, 5, 1, 3, 1, 0, 2), 2);  // 1x1 stride 3: col2im spreads the pixels
}

TEST_CASE("conv_transpose_gemm: a fused Relu, after col2im and in the product alone", "[conv_transpose]") {
  check(transposed2d(2, 6, 9, 3, 5, 4, 3, 2, 1, 1, 1), 2, true);
  check(transposed2d(1, 12, 10, 1, 3, 9, 4, 3, 2, 2, 1), 1, true);
  check(transposed2d(2, 33, 17, 1, 5, 13, 1, 1, 1, 0, 0), 1, true);
}

TEST_CASE("conv_transpose_gemm: 1-d", "[conv_transpose]") {
  for (index_t k = 1; k <= 5; k += 2)
    for (index_t stride = 1; stride <= 3; ++stride) {
      const index_t in = 9, pad = k / 2, out = (in - 1) * stride - 2 * pad + k;
      check(ConvParams{1, 4, 6, 2, 1, 1, in, 1, 1, out, 1, 1, k, 1, 1, stride, 1, 1, 1, 0, 0, pad}, 1);
    }
}

TEST_CASE("conv_transpose_gemm_stacked: blocks of product rows, partial panels and rows", "[conv_transpose]") {
  // 64 output channels x 16 taps = 1024 product rows over 8 input rows of 13: blocks of 112 rows
  // (14 panels), the last 16.
  const ConvParams deep = transposed2d(1, 8, 64, 1, 9, 13, 4, 2, 1, 1, 1);
  REQUIRE(onnxc::rt::conv_transpose_stack_columns(deep).product_rows == 112);
  check(deep, 3);
  // Rows of 1100 columns: one input row and a panel of 8 product rows at a time (20 rows: 8, 8, 4).
  const ConvParams wide = transposed2d(1, 3, 5, 1, 3, 1100, 2, 2, 1, 0, 0);
  REQUIRE(onnxc::rt::conv_transpose_stack_columns(wide).product_rows == 8);
  REQUIRE(onnxc::rt::conv_transpose_stack_columns(wide).in_rows == 1);
  check(wide, 1, true);
  // One output channel (the whole image's columns fit), grouped with a batch.
  check(transposed2d(1, 37, 1, 1, 11, 9, 3, 2, 1, 1, 0), 2);
  check(transposed2d(2, 12, 6, 3, 7, 5, 3, 3, 1, 1, 2), 2, true);
}
