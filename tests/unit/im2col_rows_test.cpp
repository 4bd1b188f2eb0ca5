// im2col's row copies (onnxc/conv.h, onnxc/im2col_gather_avx2.h) through rt::conv_gemm against the
// reference rt::conv: output rows narrower than a vector (gathered on AVX-512 and AVX2) and the
// stride-2 copies of every other float. Built into onnxc_unit_tests (portable), and with
// ONNXC_SIMD into onnxc_simd_kernel_tests (-march=native) and onnxc_avx2_kernel_tests (AVX2).
#include <catch2/catch.hpp>

#include <vector>

#include "onnxc/conv.h"
#include "conv_test_shapes.h"

TEST_CASE("conv_gemm with output rows narrower than a vector (im2col rows gathered on AVX-512 and AVX2) matches the reference") {
  // kws-dscnn's first layer (10 x 4 kernel, stride 2, padding 5 rows and 1 column over 49 x 10:
  // 25 x 5 outputs), a non-square stride 3 with dilation 2, a one-column output, a 1-d input,
  // and two images; blocks that start inside an output row and end inside another.
  ConvParams kws{1, 2, 9, 1, 1, 49, 10, 1, 25, 5, 1, 10, 4, 1, 2, 2, 1, 1, 1, 0, 5, 1};
  ConvParams strided{2, 3, 5, 1, 1, 17, 11, 1, 6, 3, 1, 3, 2, 1, 3, 4, 1, 2, 2, 0, 2, 1};
  ConvParams one_column{1, 2, 4, 1, 1, 9, 3, 1, 9, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0};
  ConvParams one_d{1, 3, 6, 1, 1, 1, 29, 1, 1, 14, 1, 1, 3, 1, 1, 2, 1, 1, 1, 0, 0, 1};
  // A stride-2 3 x 3 onto a 7 x 7 plane (a grouped Conv's group in regnet's last stage): rows of
  // 7, narrower than AVX2's 8 lanes too.
  ConvParams seven{1, 4, 6, 1, 1, 14, 14, 1, 7, 7, 1, 3, 3, 1, 2, 2, 1, 1, 1, 0, 1, 1};
  for (const ConvParams& p : {kws, strided, one_column, one_d, seven}) {
    const index_t k = onnxc::rt::conv_gemm_k(p);
    auto [x, w, bias, expected, packed] = conv_case(p);
    std::vector<float> y(expected.size());
    for (index_t block : {onnxc::rt::packed_gemm_block_cols(k), index_t{16}, index_t{7}, index_t{5}}) {
      std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_gemm_scratch_floats(p, block)) + 1);
      onnxc::rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block,
                           {onnxc::rt::Activation::Relu, 0, 0});
      INFO("output " << p.out_h << "x" << p.out_w << ", block " << block);
      for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i] > 0 ? expected[i] : 0.0f));
    }
  }
}

TEST_CASE("copy_even_floats copies every other float, for every length around the vector width") {
  for (index_t n = 0; n <= 3 * 16 + 1; ++n) {
    std::vector<float> src(static_cast<std::size_t>(n > 0 ? 2 * n - 1 : 0)), dst(static_cast<std::size_t>(n) + 1, -1.0f);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
    onnxc::rt::copy_even_floats(src.data(), n, dst.data());
    for (index_t i = 0; i < n; ++i) REQUIRE(dst[static_cast<std::size_t>(i)] == static_cast<float>(2 * i));
    REQUIRE(dst[static_cast<std::size_t>(n)] == -1.0f);  // nothing written past the n-th
  }
}
