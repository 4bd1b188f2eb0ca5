// The float kernels with a SIMD path (onnxc/conv.h, onnxc/rnn.h) against their references:
// the direct loop nest rt::conv and hand-computed values. This file depends on runtime-support
// only: it is built into onnxc_unit_tests (the portable kernels) and, with ONNXC_SIMD and
// -march=native, into onnxc_simd_kernel_tests (the xsimd kernels of the build machine).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "onnxc/conv.h"
#include "onnxc/eltwise_math.h"
#include "onnxc/pool.h"
#include "onnxc/quant.h"
#include "onnxc/rnn.h"
#include "onnxc/winograd.h"
#include "conv_test_shapes.h"

TEST_CASE("conv_gemm matches the reference convolution, with padding, stride and dilation") {
  for (ConvParams p : {conv2d(3, 10, 1, 7, 3, 1, 1, 1), conv2d(3, 17, 1, 9, 3, 2, 1, 1), conv2d(5, 9, 1, 8, 3, 1, 2, 2),
                       conv2d(16, 12, 1, 5, 1, 1, 0, 1),
                       // several im2col blocks, the later ones starting inside an output row
                       conv2d(3, 5, 1, 50, 3, 1, 1, 1), conv2d(80, 9, 1, 13, 3, 1, 1, 1),
                       // stride 2: output rows of 16, 17 and 33 columns (whole vectors of even lanes
                       // and the tails), with and without padding
                       conv2d(2, 9, 1, 32, 3, 2, 1, 1), conv2d(2, 9, 1, 35, 3, 2, 0, 1), conv2d(3, 8, 1, 66, 3, 2, 1, 1)}) {
    const index_t k = onnxc::rt::conv_gemm_k(p);
    auto [x, w, bias, expected, packed] = conv_case(p);
    std::vector<float> y(expected.size());
    // The fastest block, and blocks smaller than the output that leave a partial last block.
    for (index_t block : {onnxc::rt::packed_gemm_block_cols(k), index_t{16}, index_t{5}}) {
      std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_gemm_scratch_floats(p, block)) + 1);
      onnxc::rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block,
                           {onnxc::rt::Activation::Relu, 0, 0});
      for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i] > 0 ? expected[i] : 0.0f));
    }
  }
}

TEST_CASE("conv_gemm over a padded copy of the input matches the reference convolution") {
  // resnet8-cifar's 16-channel layer, a partial panel of output channels (13), dilation, a 5x5
  // kernel on a plane narrower than a vector, a 1-d row, a wide padding and a batch of two; with
  // the whole copy in the scratch, and with bands of rows (the scratch of a smaller im2col block).
  ConvParams row_1d = conv2d(4, 6, 1, 1, 3, 1, 1, 1);
  row_1d.in_w = row_1d.out_w = 40, row_1d.in_h = row_1d.out_h = 1, row_1d.k_h = 1, row_1d.pad_h = 0;
  ConvParams batch2 = conv2d(5, 8, 1, 12, 3, 1, 1, 1);
  batch2.batch = 2;
  for (ConvParams p : {conv2d(16, 16, 1, 32, 3, 1, 1, 1), conv2d(7, 13, 1, 19, 3, 1, 2, 2), conv2d(3, 9, 1, 11, 5, 1, 2, 1),
                       conv2d(6, 4, 1, 9, 3, 1, 0, 1), conv2d(2, 5, 1, 30, 7, 1, 3, 1), row_1d, batch2}) {
    const index_t k = onnxc::rt::conv_gemm_k(p);
    auto [x, w, bias, expected, packed] = conv_case(p);
    std::vector<float> y(expected.size());
    for (index_t block : {onnxc::rt::packed_gemm_block_cols(k), index_t{16}}) {
      const index_t scratch_floats = onnxc::rt::conv_gemm_scratch_floats(p, block);
      INFO("channels " << p.in_channels << " -> " << p.out_channels << ", plane " << p.in_h << "x" << p.in_w
                       << ", kernel " << p.k_h << "x" << p.k_w << ", pad " << p.pad_w << ", dilation " << p.dilation_w
                       << ", block " << block << ", band " << onnxc::rt::padded_band(p, scratch_floats));
      if (block != 16) REQUIRE(onnxc::rt::padded_band(p, scratch_floats) == p.out_h);
      std::vector<float> scratch(static_cast<std::size_t>(scratch_floats));
      onnxc::rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block,
                           {onnxc::rt::Activation::Clip, -2.0f, 30.0f});
      for (std::size_t i = 0; i < y.size(); ++i) {
        const float want = expected[i] < -2.0f ? -2.0f : (expected[i] > 30.0f ? 30.0f : expected[i]);
        REQUIRE(y[i] == Approx(want).margin(1e-4));
      }
    }
  }
  // Bands: 22 rows (and the 10 left) in an im2col block of 96 columns, 1 row in 16 columns.
  const ConvParams resnet = conv2d(16, 16, 1, 32, 3, 1, 1, 1);
  CHECK(onnxc::rt::padded_band(resnet, onnxc::rt::conv_gemm_scratch_floats(resnet, 96)) == 22);
  CHECK(onnxc::rt::padded_band(resnet, onnxc::rt::conv_gemm_scratch_floats(resnet, 16)) == 1);
  // Not taken: stride 2, no room for one row, many output channels on a narrow plane.
  CHECK_FALSE(onnxc::rt::conv_gemm_reads_padded_input(conv2d(16, 16, 1, 32, 3, 2, 1, 1), 384));
  CHECK_FALSE(onnxc::rt::conv_gemm_reads_padded_input(resnet, 5));
  CHECK_FALSE(onnxc::rt::conv_gemm_reads_padded_input(conv2d(64, 256, 1, 13, 3, 1, 1, 1), 96));
}

TEST_CASE("conv_gemm reading the input in place ('same' stride-1 convolutions) matches the reference convolution") {
  // squeezenet1_1's 13 x 13 with a partial panel of output channels (19) and a 9-column tail,
  // resnet8-cifar's 8 x 8, a 5 x 5 kernel, dilation 2, several blocks of columns on a batch of two,
  // a plane of 5 rows of 40; every plane has tiles at its top and bottom (masked loads in the first
  // and last channels) and columns wrapping across rows.
  ConvParams batch2 = conv2d(24, 40, 1, 27, 3, 1, 1, 1);
  batch2.batch = 2;
  ConvParams wide = conv2d(32, 16, 1, 40, 3, 1, 1, 1);
  wide.in_h = wide.out_h = 5;
  for (ConvParams p : {conv2d(48, 19, 1, 13, 3, 1, 1, 1), conv2d(64, 64, 1, 8, 3, 1, 1, 1), conv2d(8, 16, 1, 14, 5, 1, 2, 1),
                       conv2d(32, 10, 1, 11, 3, 1, 2, 2), batch2, wide}) {
#if defined(__AVX512F__)
    REQUIRE(onnxc::rt::conv_reads_shifted_input(p));
#endif
    const index_t k = onnxc::rt::conv_gemm_k(p);
    auto [x, w, bias, expected, packed] = conv_case(p);
    std::vector<float> y(expected.size());
    const index_t block = onnxc::rt::packed_gemm_block_cols(k);
    std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_gemm_scratch_floats(p, block)));
    onnxc::rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block,
                         {onnxc::rt::Activation::Relu, 0.0f, 0.0f});
    INFO("channels " << p.in_channels << " -> " << p.out_channels << ", plane " << p.in_h << "x" << p.in_w
                     << ", kernel " << p.k_h << "x" << p.k_w << ", pad " << p.pad_w << ", dilation " << p.dilation_w);
    for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i] > 0 ? expected[i] : 0.0f).margin(1e-4));
  }
#if defined(__AVX512F__)
  // Not taken: shallow products (16 channels x 3 x 3 keep the padded copy), stride 2, output rows
  // narrower than the input's, planes smaller than a tap's reach.
  CHECK_FALSE(onnxc::rt::conv_reads_shifted_input(conv2d(16, 64, 1, 55, 3, 1, 1, 1)));
  CHECK_FALSE(onnxc::rt::conv_reads_shifted_input(conv2d(64, 64, 1, 16, 3, 2, 1, 1)));
  CHECK_FALSE(onnxc::rt::conv_reads_shifted_input(conv2d(64, 64, 1, 16, 3, 1, 0, 1)));
  CHECK_FALSE(onnxc::rt::conv_reads_shifted_input(conv2d(64, 64, 1, 3, 3, 1, 1, 1)));
#endif
}

TEST_CASE("conv_gemm's im2col blocks with a parallel-for, by column tasks or by channel and panel tasks") {
  // squeezenet1_1's first layer shape scaled down (3 -> 16 channels, stride 2, no padding: column
  // tasks, whose ranges end on 16-column runs), blocks of 200 and 96 columns and the whole plane;
  // 40 output channels with blocks of 96 columns keep the channel and panel tasks. The parallel-for
  // runs the tasks serially, last first.
  const onnxc_parallel_for backwards{[](void*, size_t n, onnxc_task_fn task, void* context) {
                                       for (size_t i = n; i-- > 0;) task(context, i);
                                     },
                                     nullptr};
  ConvParams stem = conv2d(3, 16, 1, 41, 3, 2, 0, 1);
  for (ConvParams p : {stem, conv2d(5, 40, 1, 45, 3, 2, 1, 1)}) {
    const index_t n = onnxc::rt::conv_gemm_n(p);
    auto [x, w, bias, expected, packed] = conv_case(p);
    std::vector<float> y(expected.size());
    for (index_t block : {index_t{96}, index_t{200}, n}) {
      INFO("out channels " << p.out_channels << ", block " << block << " of " << n << " columns");
      REQUIRE_FALSE(onnxc::rt::conv_gemm_reads_padded_input(p, block));
      std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_gemm_scratch_floats(p, block)), 1e30f);
      std::fill(y.begin(), y.end(), std::numeric_limits<float>::quiet_NaN());
      onnxc::rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block,
                           {onnxc::rt::Activation::Relu, 0.0f, 0.0f}, &backwards);
      for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(std::max(expected[i], 0.0f)).margin(1e-4));
    }
  }
}

TEST_CASE("conv_shifted (no scratch) matches the reference convolution, shallow products included") {
  // What the compiler gives conv_shifted where it gives no scratch: resnet8-cifar's 16-channel
  // 32 x 32 layer and its 8 x 8 one, one input channel (its runs masked at both ends of the plane),
  // odd planes of 7 to 17 columns (tiles wrapping across rows, partial last vectors), a 5 x 5
  // kernel on a 6 x 6 plane, dilation 2, a 1-d row, partial panels of output channels, a batch of two;
  // 16 output channels or more take tall tiles (16 x 1 vector: 33 = two of them and a 1-row panel,
  // on a 13-column plane whose vectors wrap across rows), each layer also with a sigmoid epilogue.
  // Deep products take passes of channels (kTallPassDepth channels x taps): 29 x 3 x 3 two
  // (15 + 14 channels), 61 x 3 x 3 on 7 x 7 three (21 + 21 + 19, partial sums in y, the border
  // tiles' masked first and last channels in the first and last pass), 23 x 5 x 5 three (8 + 8 + 7).
  // Planes whose last vector has one live column (7 x 7 = 3 x 16 + 1, 9 x 9 = 5 x 16 + 1) take it
  // through tall_columns: 61 -> 33 on 7 x 7 over its three passes, 23 -> 32 5 x 5 on 9 x 9 (taps in
  // the padding skipped; channel counts of a pass not multiples of 4).
  ConvParams row_1d = conv2d(3, 5, 1, 1, 3, 1, 1, 1);
  row_1d.in_w = row_1d.out_w = 37, row_1d.in_h = row_1d.out_h = 1, row_1d.k_h = 1, row_1d.pad_h = 0;
  ConvParams batch2 = conv2d(4, 9, 1, 9, 3, 1, 1, 1);
  batch2.batch = 2;
  for (ConvParams p : {conv2d(16, 16, 1, 32, 3, 1, 1, 1), conv2d(64, 64, 1, 8, 3, 1, 1, 1), conv2d(1, 3, 1, 17, 3, 1, 1, 1),
                       conv2d(2, 11, 1, 7, 3, 1, 1, 1), conv2d(3, 8, 1, 6, 5, 1, 2, 1), conv2d(5, 17, 1, 13, 3, 1, 2, 2),
                       conv2d(16, 32, 1, 15, 3, 1, 1, 1), conv2d(5, 33, 1, 13, 3, 1, 1, 1), row_1d, batch2,
                       conv2d(29, 16, 1, 11, 3, 1, 1, 1), conv2d(61, 33, 1, 7, 3, 1, 1, 1), conv2d(23, 32, 1, 9, 5, 1, 2, 1)}) {
    INFO("channels " << p.in_channels << " -> " << p.out_channels << ", plane " << p.in_h << "x" << p.in_w
                     << ", kernel " << p.k_h << "x" << p.k_w << ", pad " << p.pad_w << ", dilation " << p.dilation_w);
    REQUIRE(onnxc::rt::conv_shape_reads_shifted_input(p));
    if (!onnxc::rt::kShiftedInputProduct) continue;  // built without AVX-512: the compiler never calls it
    auto [x, w, bias, expected, packed] = conv_case(p);
    std::vector<float> y(expected.size());
    onnxc::rt::conv_shifted(p, x.data(), packed.data(), bias.data(), y.data(), {onnxc::rt::Activation::None, 0.0f, 0.0f});
    for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-4));
    onnxc::rt::conv_shifted(p, x.data(), packed.data(), bias.data(), y.data(),
                            {onnxc::rt::Activation::Sigmoid, 0.0f, 0.0f});
    for (std::size_t i = 0; i < y.size(); ++i)
      REQUIRE(y[i] == Approx(1.0 / (1.0 + std::exp(-static_cast<double>(expected[i])))).margin(1e-5));
  }
  // Shapes it cannot read in place: stride 2, output rows narrower than the input's, a 5 x 5 reach
  // on a 4 x 4 plane.
  CHECK_FALSE(onnxc::rt::conv_shape_reads_shifted_input(conv2d(16, 32, 1, 32, 3, 2, 1, 1)));
  CHECK_FALSE(onnxc::rt::conv_shape_reads_shifted_input(conv2d(16, 16, 1, 32, 3, 1, 0, 1)));
  CHECK_FALSE(onnxc::rt::conv_shape_reads_shifted_input(conv2d(4, 4, 1, 4, 5, 1, 2, 1)));
}

TEST_CASE("conv_gemm over the phase planes of a stride-2 input matches the reference convolution") {
  // With scratch for the four phase planes (AVX-512: rt::conv_phase_gemm; im2col blocks without
  // it): resnet8-cifar's 16 -> 32 channels on 32 x 32, one input channel, odd planes (7 x 7: the
  // odd phases one column and row short, zero-filled; 9 x 9, 11 x 11), a 2 x 2 kernel with and
  // without padding, a plane of 6 rows of 13 columns, partial panels of output channels (tall tiles
  // of 16 and a 1-row panel: 33 channels on 9 x 9, 5 x 5 outputs), a batch of two.
  ConvParams batch2 = conv2d(2, 5, 1, 10, 3, 2, 1, 1);
  batch2.batch = 2;
  ConvParams flat = conv2d(3, 7, 1, 13, 3, 2, 1, 1);
  flat.in_h = 6, flat.out_h = 3;
  for (ConvParams p : {conv2d(16, 32, 1, 32, 3, 2, 1, 1), conv2d(1, 3, 1, 7, 3, 2, 1, 1), conv2d(5, 9, 1, 9, 3, 2, 1, 1),
                       conv2d(4, 17, 1, 11, 3, 2, 1, 1), conv2d(3, 10, 1, 12, 2, 2, 0, 1), conv2d(4, 6, 1, 11, 2, 2, 1, 1),
                       conv2d(6, 33, 1, 9, 3, 2, 1, 1), flat, batch2}) {
    INFO("channels " << p.in_channels << " -> " << p.out_channels << ", plane " << p.in_h << "x" << p.in_w
                     << ", kernel " << p.k_h << "x" << p.k_w << ", pad " << p.pad_w);
    REQUIRE(onnxc::rt::conv_shape_reads_phase_planes(p));
    const index_t k = onnxc::rt::conv_gemm_k(p), n = onnxc::rt::conv_gemm_n(p);
    // conv_gemm takes them with the block the compiler gives it (resnet8-cifar's layer, deep
    // enough: kPhaseMinDepth); the shallower ones (which keep im2col there) through the kernel.
    const index_t block = (onnxc::rt::conv_phase_floats(p) + k - 1) / k;
    const bool through_gemm = k >= onnxc::rt::kPhaseMinDepth;
    if (through_gemm) REQUIRE(onnxc::rt::conv_gemm_scratch_floats(p, block) >= onnxc::rt::conv_phase_floats(p));
    if (!through_gemm && !onnxc::rt::kShiftedInputProduct) continue;
    auto [x, w, bias, expected, packed] = conv_case(p);
    std::vector<float> y(expected.size());
    std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_phase_floats(p)), 1e30f);
    if (through_gemm) {
      scratch.resize(static_cast<std::size_t>(onnxc::rt::conv_gemm_scratch_floats(p, block)), 1e30f);
      onnxc::rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block,
                           {onnxc::rt::Activation::None, 0.0f, 0.0f});
    } else {
      const index_t in_image = p.in_channels * p.in_h * p.in_w, out_image = p.out_channels * n;
      for (index_t b = 0; b < p.batch; ++b)  // one image a call
        onnxc::rt::conv_phase_gemm(p, x.data() + b * in_image, packed.data(), bias.data(), y.data() + b * out_image,
                                   scratch.data(), {onnxc::rt::Activation::None, 0.0f, 0.0f}, nullptr);
    }
    for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-4));
  }
  // Not taken: a tap past the phase planes (3 x 3 without padding, 4 x 4, dilation 2), stride 1,
  // a 1 x 1 kernel (im2col copies one phase, not four).
  CHECK_FALSE(onnxc::rt::conv_shape_reads_phase_planes(conv2d(4, 4, 1, 12, 3, 2, 0, 1)));
  CHECK_FALSE(onnxc::rt::conv_shape_reads_phase_planes(conv2d(4, 4, 1, 12, 4, 2, 1, 1)));
  CHECK_FALSE(onnxc::rt::conv_shape_reads_phase_planes(conv2d(4, 4, 1, 12, 3, 2, 2, 2)));
  CHECK_FALSE(onnxc::rt::conv_shape_reads_phase_planes(conv2d(4, 4, 1, 12, 3, 1, 1, 1)));
  CHECK_FALSE(onnxc::rt::conv_shape_reads_phase_planes(conv2d(4, 4, 1, 12, 1, 2, 0, 1)));
  // conv_gemm keeps im2col for shallow products (MobileNet's first layer, 3 channels x 3 x 3).
  CHECK_FALSE(onnxc::rt::conv_reads_phase_planes(conv2d(3, 32, 1, 224, 3, 2, 1, 1)));
}

TEST_CASE("packed_gemm matches a plain matrix product, narrow products included") {
  // Narrow shapes (fewer columns than a wide tile: vectors along the rows on AVX-512) with whole
  // groups of 32 rows, a last group of whole and partial panels, every column-tile width and
  // MobileNet's 49 columns; a wide product for comparison; with bias and each kind of epilogue
  // the tiles apply in registers: none, a clamp, another activation (LeakyRelu).
  namespace rt = onnxc::rt;
  struct Shape {
    index_t m, n, k;
  };
  const rt::Epilogue epilogues[] = {{rt::Activation::Clip, -20.0f, 20.0f}, rt::kNoActivation,
                                    {rt::Activation::LeakyRelu, 0.5f, 0.0f}};
  for (const rt::Epilogue& e : epilogues)
    for (Shape s : {Shape{32, 49, 64}, Shape{64, 7, 96}, Shape{45, 50, 70}, Shape{40, 1, 64}, Shape{96, 63, 160},
                    Shape{33, 17, 80}, Shape{20, 49, 64}, Shape{32, 49, 8}, Shape{24, 200, 64}}) {
      auto a = ramp(s.m * s.k, 0.25f), b = ramp(s.k * s.n, 0.5f), bias = ramp(s.m, 1.0f);
      std::vector<float> packed(a.size()), y(static_cast<std::size_t>(s.m * s.n));
      rt::pack_weights(a.data(), s.m, s.k, packed.data());
      rt::packed_gemm(s.m, s.n, s.k, packed.data(), b.data(), s.n, y.data(), s.n, bias.data(), e);
      INFO("m " << s.m << ", n " << s.n << ", k " << s.k << ", activation " << static_cast<int>(e.activation));
      for (index_t i = 0; i < s.m; ++i)
        for (index_t j = 0; j < s.n; ++j) {
          double sum = bias[static_cast<std::size_t>(i)];
          for (index_t l = 0; l < s.k; ++l)
            sum += static_cast<double>(a[static_cast<std::size_t>(i * s.k + l)]) * b[static_cast<std::size_t>(l * s.n + j)];
          double want = sum;
          if (e.activation == rt::Activation::Clip) want = sum < -20.0 ? -20.0 : (sum > 20.0 ? 20.0 : sum);
          if (e.activation == rt::Activation::LeakyRelu && sum < 0) want = 0.5 * sum;
          REQUIRE(y[static_cast<std::size_t>(i * s.n + j)] == Approx(want).margin(1e-4));
        }
    }
}

TEST_CASE("conv_gemm's im2col scratch is one block of the chosen width, or the whole output when smaller") {
  const ConvParams p = conv2d(3, 8, 1, 7, 3, 1, 1, 1);  // K = 27, N = 49
  CHECK(onnxc::rt::conv_gemm_scratch_floats(p, 16) == 27 * 16);
  CHECK(onnxc::rt::conv_gemm_scratch_floats(p, 96) == 27 * 49);
  CHECK(onnxc::rt::conv_gemm_scratch_floats(conv2d(16, 12, 1, 5, 1, 1, 0, 1), 96) == 0);  // 1x1: reads x in place
}

TEST_CASE("conv_direct matches the reference convolution") {
  // Output-channel counts that leave every remainder of the 4-channel block (1, 2, 3), groups,
  // padding wider than a block of columns, strides, dilation, a 1-d row, a kernel wider than
  // its padded input's interior (no column without bounds checks) and a batch of two.
  ConvParams row_1d = conv2d(3, 6, 1, 1, 3, 1, 1, 1);
  row_1d.in_w = row_1d.out_w = 29, row_1d.in_h = row_1d.out_h = 1, row_1d.k_h = 1, row_1d.pad_h = 0;
  ConvParams overhang = conv2d(2, 3, 1, 3, 5, 1, 2, 1);
  ConvParams batch2 = conv2d(3, 5, 1, 9, 3, 1, 1, 1);
  batch2.batch = 2;
  for (ConvParams p : {conv2d(1, 8, 1, 28, 5, 1, 2, 1), conv2d(8, 16, 1, 14, 5, 1, 2, 1), conv2d(3, 7, 1, 11, 3, 1, 1, 1),
                       conv2d(4, 6, 2, 10, 3, 2, 1, 1), conv2d(6, 9, 3, 12, 3, 1, 2, 2), conv2d(5, 10, 1, 13, 1, 1, 0, 1),
                       conv2d(2, 3, 1, 17, 7, 3, 3, 1), row_1d, overhang, batch2}) {
    const index_t icg = p.in_channels / p.group;
    auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f);
    auto w = ramp(p.out_channels * icg * p.k_h * p.k_w, 0.25f), bias = ramp(p.out_channels, 1.0f);
    std::vector<float> expected(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w)),
        y(expected.size());
    onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
    onnxc::rt::conv_direct(p, x.data(), w.data(), bias.data(), y.data());
    INFO("channels " << p.in_channels << " -> " << p.out_channels << " in " << p.group << " groups, plane " << p.in_h
                     << "x" << p.in_w << ", kernel " << p.k_h << "x" << p.k_w << ", stride " << p.stride_w << ", pad "
                     << p.pad_w << ", dilation " << p.dilation_w);
    for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-5));
  }
}

TEST_CASE("conv_depthwise matches the reference convolution") {
  // Rows narrower and wider than a vector with tails, rows of several groups of four vectors,
  // stride 2 (the even-lane loads), strides and kernels with no fixed-size path, dilation, a
  // 1-d plane and a tall narrow one; rows of at most two vectors computed in pairs, with an odd
  // row left over (29 x 29, 23 x 23 from stride 2) and dilated (the ring keeps both rows' inputs).
  ConvParams wide_1d = conv2d(3, 3, 3, 1, 3, 1, 1, 1);
  wide_1d.in_w = 37, wide_1d.out_w = 37, wide_1d.in_h = wide_1d.out_h = 1, wide_1d.k_h = 1, wide_1d.pad_h = 0;
  ConvParams tall = conv2d(2, 2, 2, 5, 3, 1, 1, 1);
  tall.in_h = tall.out_h = 25;  // kws-dscnn's 25 x 5 planes
  for (ConvParams p : {conv2d(4, 4, 4, 7, 3, 1, 1, 1), conv2d(3, 3, 3, 8, 3, 2, 1, 1), conv2d(2, 2, 2, 9, 5, 2, 2, 1),
                       conv2d(2, 2, 2, 9, 3, 1, 2, 2), conv2d(3, 3, 3, 35, 3, 1, 1, 1), conv2d(3, 3, 3, 45, 3, 2, 1, 1),
                       conv2d(2, 2, 2, 40, 3, 2, 0, 1), conv2d(2, 2, 2, 50, 5, 3, 2, 1), conv2d(2, 2, 2, 19, 3, 2, 2, 3),
                       conv2d(2, 2, 2, 6, 1, 1, 0, 1), conv2d(2, 2, 2, 70, 3, 1, 1, 1), conv2d(1, 1, 1, 140, 3, 2, 1, 1),
                       conv2d(2, 2, 2, 28, 3, 1, 1, 1), conv2d(2, 2, 2, 29, 3, 1, 1, 1), conv2d(2, 2, 2, 46, 3, 2, 1, 1),
                       conv2d(2, 2, 2, 30, 3, 1, 2, 2), conv2d(2, 2, 2, 33, 5, 2, 2, 1), wide_1d, tall,
                       // rows whose last group has four vectors (49 to 63 columns after whole groups):
                       // MobileNet's 112 x 112 -> 56 x 56, 100 -> 50, and a stride-1 'valid' 60 -> 58
                       conv2d(1, 1, 1, 112, 3, 2, 1, 1), conv2d(2, 2, 2, 100, 3, 2, 1, 1), conv2d(2, 2, 2, 60, 3, 1, 0, 1)}) {
    auto x = ramp(p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * p.k_h * p.k_w, 0.25f);
    auto bias = ramp(p.out_channels, 1.0f);
    std::vector<float> expected(static_cast<std::size_t>(p.out_channels * p.out_h * p.out_w)), y(expected.size());
    std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_depthwise_scratch_floats(p)));
    onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
    onnxc::rt::conv_depthwise(p, x.data(), w.data(), bias.data(), y.data(), scratch.data(),
                              {onnxc::rt::Activation::Clip, -1.0f, 6.0f});
    INFO("plane " << p.in_h << "x" << p.in_w << ", kernel " << p.k_h << "x" << p.k_w << ", stride " << p.stride_w
                  << ", pad " << p.pad_w << ", dilation " << p.dilation_w);
    for (std::size_t i = 0; i < y.size(); ++i) {
      const float want = expected[i] < -1.0f ? -1.0f : (expected[i] > 6.0f ? 6.0f : expected[i]);
      REQUIRE(y[i] == Approx(want).margin(1e-5));
    }
  }
}

TEST_CASE("conv_depthwise_in_place matches the reference convolution") {
  // conv_depthwise's shapes and more, two images, activation in registers (Clip) and over the
  // stored rows (LeakyRelu). Rows narrower and wider than a vector with tails, rows of several
  // groups of four vectors, stride 2 (the even-lane loads; odd widths whose last column's
  // whole-vector load would read past the row), strides and kernels with no fixed-size path,
  // dilation, a 1-d plane and a tall narrow one; rows of at most two vectors computed in pairs.
  // Border cases: no padding, padding wider than the kernel's overhang (border rows and columns
  // of padding only), a kernel wider than the input (no interior column), and "same" planes the
  // flat path takes: symmetric, all padding after or before, an even kernel, dilated, 5x5.
  ConvParams wide_1d = conv2d(3, 3, 3, 1, 3, 1, 1, 1);
  wide_1d.in_w = 37, wide_1d.out_w = 37, wide_1d.in_h = wide_1d.out_h = 1, wide_1d.k_h = 1, wide_1d.pad_h = 0;
  ConvParams tall = conv2d(2, 2, 2, 5, 3, 1, 1, 1);
  tall.in_h = tall.out_h = 25;  // kws-dscnn's 25 x 5 planes
  ConvParams pad_after = conv2d(2, 2, 2, 6, 3, 1, 0, 1);
  pad_after.out_h = pad_after.out_w = 6;  // pads 0 before, 2 after
  ConvParams pad_before = conv2d(2, 2, 2, 9, 3, 1, 2, 1);
  pad_before.out_h = pad_before.out_w = 9;  // pads 2 before, 0 after
  ConvParams even_kernel = conv2d(2, 2, 2, 7, 4, 1, 1, 1);
  even_kernel.out_h = even_kernel.out_w = 7;  // 4x4, pads 1 before and 2 after
  ConvParams tiny = conv2d(2, 2, 2, 2, 5, 1, 2, 1);  // 5x5 over 2x2: every tap of every output checked
  ConvParams wide_pad = conv2d(2, 2, 2, 20, 3, 2, 4, 1);  // pads past the kernel's reach
  for (ConvParams p : {conv2d(4, 4, 4, 7, 3, 1, 1, 1), conv2d(3, 3, 3, 8, 3, 2, 1, 1), conv2d(2, 2, 2, 9, 5, 2, 2, 1),
                       conv2d(2, 2, 2, 9, 3, 1, 2, 2), conv2d(3, 3, 3, 35, 3, 1, 1, 1), conv2d(3, 3, 3, 45, 3, 2, 1, 1),
                       conv2d(2, 2, 2, 40, 3, 2, 0, 1), conv2d(2, 2, 2, 50, 5, 3, 2, 1), conv2d(2, 2, 2, 19, 3, 2, 2, 3),
                       conv2d(2, 2, 2, 6, 1, 1, 0, 1), conv2d(2, 2, 2, 70, 3, 1, 1, 1), conv2d(1, 1, 1, 140, 3, 2, 1, 1),
                       conv2d(2, 2, 2, 28, 3, 1, 1, 1), conv2d(2, 2, 2, 29, 3, 1, 1, 1), conv2d(2, 2, 2, 46, 3, 2, 1, 1),
                       conv2d(2, 2, 2, 30, 3, 1, 2, 2), conv2d(2, 2, 2, 33, 5, 2, 2, 1), conv2d(2, 2, 2, 33, 3, 2, 0, 1),
                       conv2d(2, 2, 2, 35, 5, 2, 0, 1), conv2d(2, 2, 2, 34, 5, 1, 0, 1), conv2d(2, 2, 2, 12, 5, 1, 2, 1),
                       conv2d(2, 2, 2, 3, 3, 1, 1, 1), wide_1d, tall, pad_after, pad_before, even_kernel, tiny,
                       wide_pad,
                       // vector columns whose last group has four vectors (MobileNet's 112 x 112 -> 56 x 56)
                       conv2d(1, 1, 1, 112, 3, 2, 1, 1), conv2d(2, 2, 2, 100, 3, 2, 1, 1), conv2d(2, 2, 2, 60, 3, 1, 0, 1),
                       // 3x3 stride 2 on AVX-512: whole vectors whose last tap reads column 32 of the
                       // vector's loads, inside the row (64 -> 32) or in the padding (31 -> 16, 63 -> 32)
                       conv2d(2, 2, 2, 64, 3, 2, 1, 1), conv2d(2, 2, 2, 31, 3, 2, 1, 1), conv2d(2, 2, 2, 63, 3, 2, 1, 1)}) {
    for (onnxc::rt::Epilogue e : {onnxc::rt::Epilogue{onnxc::rt::Activation::Clip, -1.0f, 6.0f},
                                  onnxc::rt::Epilogue{onnxc::rt::Activation::LeakyRelu, 0.5f, 0.0f}}) {
      p.batch = 2;
      auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * p.k_h * p.k_w, 0.25f);
      auto bias = ramp(p.out_channels, 1.0f);
      std::vector<float> expected(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
      std::vector<float> y(expected.size());
      onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
      onnxc::rt::activate_row(e, expected.data(), static_cast<std::ptrdiff_t>(expected.size()));
      onnxc::rt::conv_depthwise_in_place(p, x.data(), w.data(), bias.data(), y.data(), e);
      INFO("plane " << p.in_h << "x" << p.in_w << " -> " << p.out_h << "x" << p.out_w << ", kernel " << p.k_h << "x"
                    << p.k_w << ", stride " << p.stride_w << ", pad " << p.pad_w << ", dilation " << p.dilation_w
                    << ", activation " << static_cast<int>(e.activation));
      for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-5));
    }
  }
}

TEST_CASE("depthwise 'same' stride-1 planes (one flat array, no padded copy) match the reference") {
  // The flat path of conv_depthwise_in_place, which conv_depthwise also takes: many channels and
  // two images (channel index wrapping), planes narrower and wider than a vector (a vector's
  // lanes span several rows, or two), plane sizes that are and are not whole vectors, vectors
  // whose loads all stay inside the plane and vectors at both ends, kernels with no fixed-size
  // path up to 7 x 7, asymmetric padding and dilation; Relu in registers, LeakyRelu over the rows.
  auto same = [](index_t c, index_t h, index_t w, index_t k, index_t pad_before, index_t dilation) {
    ConvParams p = conv2d(c, c, c, w, k, 1, pad_before, dilation);
    p.in_h = p.out_h = h, p.out_w = w;
    return p;
  };
  for (ConvParams p : {same(64, 25, 5, 3, 1, 1), same(9, 14, 14, 3, 1, 1), same(7, 7, 7, 3, 1, 1),
                       same(5, 7, 7, 5, 2, 1), same(3, 9, 9, 7, 3, 1), same(3, 16, 16, 3, 1, 1), same(4, 3, 16, 3, 1, 1),
                       same(3, 11, 13, 3, 2, 2), same(3, 8, 8, 4, 1, 1), same(3, 8, 8, 3, 0, 1), same(3, 5, 2, 3, 2, 1),
                       same(17, 1, 5, 3, 1, 1), same(3, 17, 17, 3, 1, 1), same(2, 56, 56, 3, 1, 1),
                       same(3, 20, 37, 5, 2, 1), same(2, 9, 33, 3, 2, 2), same(3, 1, 37, 3, 1, 1),
                       // register tiles of several vectors (kFlatTileVectors) then single vectors:
                       // 7x7 on 32 x 32 and 23 x 29, dilated 5x5, an 8x8 kernel (no fixed-size path)
                       same(3, 32, 32, 7, 3, 1), same(2, 23, 29, 7, 3, 1), same(2, 30, 31, 5, 4, 2),
                       same(2, 26, 27, 8, 3, 1)}) {
    for (onnxc::rt::Epilogue e : {onnxc::rt::Epilogue{onnxc::rt::Activation::Relu, 0.0f, 0.0f},
                                  onnxc::rt::Epilogue{onnxc::rt::Activation::LeakyRelu, 0.5f, 0.0f}}) {
      p.batch = 2;
      if (p.in_h == 1) p.k_h = 1, p.pad_h = 0;  // a 1-d plane
      auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * p.k_h * p.k_w, 0.25f);
      auto bias = ramp(p.out_channels, 1.0f);
      std::vector<float> expected(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
      std::vector<float> y(expected.size()), z(expected.size());
      std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_depthwise_scratch_floats(p)));
      onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
      onnxc::rt::activate_row(e, expected.data(), static_cast<std::ptrdiff_t>(expected.size()));
      onnxc::rt::conv_depthwise_in_place(p, x.data(), w.data(), bias.data(), y.data(), e);
      onnxc::rt::conv_depthwise(p, x.data(), w.data(), bias.data(), z.data(), scratch.data(), e);
      INFO(p.in_channels << " channels, plane " << p.in_h << "x" << p.in_w << ", kernel " << p.k_h << "x" << p.k_w
                         << ", pad " << p.pad_w << ", dilation " << p.dilation_w << ", activation "
                         << static_cast<int>(e.activation));
      for (std::size_t i = 0; i < y.size(); ++i) {
        REQUIRE(y[i] == Approx(expected[i]).margin(1e-5));
        REQUIRE(z[i] == Approx(expected[i]).margin(1e-5));
      }
    }
  }
}

TEST_CASE("depthwise 3x3 stride-2 planes (depthwise_stride2_detail on AVX-512 and AVX2) match the reference") {
  // Both entry points (conv_depthwise leaves its scratch unused there), two images: MobileNet's
  // shapes (112 -> 56, 56 -> 28, 28 -> 14 and 14 -> 7, a 7-wide row in one vector of 8 lanes or
  // half of 16), 'same' padding all after (TensorFlow's), no padding, padding past the kernel's
  // reach, rows of whole vectors and one column more, blocks of 7 output rows with 2 and 1 left,
  // planes taller than wide and wider than tall, 1- to 3-pixel planes (every load masked, rows
  // skipped); Clip and no activation in registers, LeakyRelu over the stored plane.
  auto s2 = [](index_t c, index_t h, index_t w, index_t pad_before, index_t pad_after) {
    ConvParams p = conv2d(c, c, c, w, 3, 2, pad_before, 1);
    p.in_h = h;
    p.out_h = (h + pad_before + pad_after - 3) / 2 + 1, p.out_w = (w + pad_before + pad_after - 3) / 2 + 1;
    return p;
  };
  for (ConvParams p : {s2(1, 112, 112, 1, 1), s2(2, 56, 56, 1, 1), s2(3, 28, 28, 1, 1), s2(5, 14, 14, 1, 1),
                       s2(3, 14, 14, 0, 1), s2(3, 15, 15, 1, 1), s2(3, 17, 17, 1, 1), s2(3, 16, 33, 1, 1),
                       s2(3, 33, 16, 0, 0), s2(3, 29, 29, 1, 1), s2(2, 40, 40, 0, 0), s2(2, 31, 30, 2, 2),
                       s2(3, 3, 3, 1, 1), s2(3, 2, 2, 1, 1), s2(3, 1, 1, 1, 1), s2(3, 5, 37, 1, 0), s2(2, 49, 7, 1, 1)}) {
    for (onnxc::rt::Epilogue e : {onnxc::rt::Epilogue{onnxc::rt::Activation::Clip, -1.0f, 6.0f},
                                  onnxc::rt::Epilogue{onnxc::rt::Activation::None, 0.0f, 0.0f},
                                  onnxc::rt::Epilogue{onnxc::rt::Activation::LeakyRelu, 0.5f, 0.0f}}) {
      p.batch = 2;
      REQUIRE(onnxc::rt::depthwise_in_place_detail::depthwise_shape_is_3x3_stride2(p));
      auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * 9, 0.25f);
      auto bias = ramp(p.out_channels, 1.0f);
      std::vector<float> expected(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
      std::vector<float> y(expected.size(), -7.0f), z(expected.size(), -7.0f);
      std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_depthwise_scratch_floats(p)));
      onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
      onnxc::rt::activate_row(e, expected.data(), static_cast<std::ptrdiff_t>(expected.size()));
      onnxc::rt::conv_depthwise_in_place(p, x.data(), w.data(), bias.data(), y.data(), e);
      onnxc::rt::conv_depthwise(p, x.data(), w.data(), bias.data(), z.data(), scratch.data(), e);
      INFO(p.in_channels << " channels, plane " << p.in_h << "x" << p.in_w << " -> " << p.out_h << "x" << p.out_w
                         << ", pad " << p.pad_w << ", activation " << static_cast<int>(e.activation));
      for (std::size_t i = 0; i < y.size(); ++i) {
        REQUIRE(y[i] == Approx(expected[i]).margin(1e-5));
        REQUIRE(z[i] == Approx(expected[i]).margin(1e-5));
      }
    }
  }
}

namespace {

// A parallel-for that runs the tasks on the calling thread, last first, and records how often
// each ran: a kernel whose tasks overlap or depend on their order gives different bits.
struct ReversedParallelFor {
  std::vector<int> runs;
  onnxc_parallel_for as_parallel_for() { return {&ReversedParallelFor::run, this}; }
  static void run(void* self, std::size_t tasks, onnxc_task_fn task, void* task_context) {
    auto& counts = static_cast<ReversedParallelFor*>(self)->runs;
    counts.assign(tasks, 0);
    for (std::size_t i = tasks; i-- > 0;) {
      task(task_context, i);
      ++counts[i];
    }
  }
  bool each_task_ran_once() const {
    for (int r : runs)
      if (r != 1) return false;
    return !runs.empty();
  }
};

}  // namespace

namespace {

// conv_direct_packed's geometries: every output-channel count around the 16-channel panel and
// the groups of panels narrow rows take (1, 5, 16, 17, 40, 70), row widths that take every
// block width (32, 13, 8, 5, 3, 1 columns), padding on one or both sides and wider than the
// interior, strides 1, 2 and 3, dilation, 1-d rows (silero-vad's 3-column strided STFT), a
// batch of two.
std::vector<ConvParams> direct_packed_geometries() {
  auto row_1d = [](index_t c, index_t m, index_t w, index_t k, index_t stride, index_t pad) {
    ConvParams p = conv2d(c, m, 1, 1, k, stride, pad, 1);
    p.in_h = p.out_h = 1, p.k_h = 1, p.pad_h = 0, p.in_w = w;
    p.out_w = (w + 2 * pad - k) / stride + 1;
    return p;
  };
  ConvParams batch2 = conv2d(3, 17, 1, 9, 3, 1, 1, 1);
  batch2.batch = 2;
  ConvParams asymmetric = conv2d(4, 16, 1, 10, 3, 1, 1, 1);
  asymmetric.pad_w = 2, asymmetric.out_w = 11;  // more padding on the left than the right
  return {conv2d(16, 16, 1, 32, 3, 1, 1, 1), conv2d(3, 5, 1, 13, 3, 1, 1, 1), conv2d(7, 40, 1, 8, 3, 1, 1, 1),
          conv2d(5, 17, 1, 11, 5, 2, 2, 1), conv2d(6, 70, 1, 7, 3, 3, 0, 1), conv2d(4, 33, 1, 12, 3, 1, 2, 2),
          conv2d(2, 16, 1, 3, 5, 1, 2, 1), conv2d(3, 1, 1, 5, 3, 1, 0, 1), row_1d(1, 40, 48, 16, 16, 0),
          row_1d(9, 17, 3, 3, 1, 1), row_1d(2, 5, 29, 4, 1, 2), batch2, asymmetric};
}

std::string describe(const ConvParams& p) {
  std::ostringstream o;
  o << "batch " << p.batch << ", channels " << p.in_channels << " -> " << p.out_channels << ", plane " << p.in_h << "x"
    << p.in_w << " -> " << p.out_h << "x" << p.out_w << ", kernel " << p.k_h << "x" << p.k_w << ", stride "
    << p.stride_w << ", pad " << p.pad_h << "/" << p.pad_w << ", dilation " << p.dilation_w;
  return o.str();
}

}  // namespace

TEST_CASE("conv_direct_packed matches the reference convolution, serially and split into tasks") {
  ReversedParallelFor pool;
  const onnxc_parallel_for parallel = pool.as_parallel_for();
  for (const ConvParams& p : direct_packed_geometries()) {
    INFO(describe(p));
    const index_t k = onnxc::rt::conv_gemm_k(p);
    auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f);
    auto w = ramp(p.out_channels * k, 0.25f), bias = ramp(p.out_channels, 1.0f);
    std::vector<float> packed(w.size());
    onnxc::rt::pack_direct_weights(w.data(), p.out_channels, k, packed.data());
    const std::size_t out = static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
    std::vector<float> expected(out), y(out, -1.0f), split(out, -2.0f), no_bias(out), y_no_bias(out, -1.0f);
    onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
    onnxc::rt::conv_direct_packed(p, x.data(), packed.data(), bias.data(), y.data());
    for (std::size_t i = 0; i < out; ++i) REQUIRE(y[i] == Approx(expected[i]).margin(1e-4));
    onnxc::rt::conv(p, x.data(), w.data(), static_cast<const float*>(nullptr), no_bias.data());
    onnxc::rt::conv_direct_packed(p, x.data(), packed.data(), nullptr, y_no_bias.data());
    for (std::size_t i = 0; i < out; ++i) REQUIRE(y_no_bias[i] == Approx(no_bias[i]).margin(1e-4));
    onnxc::rt::conv_direct_packed(p, x.data(), packed.data(), bias.data(), split.data(), &parallel);
#if defined(ONNXC_SIMD)  // the portable fallback runs serially
    CHECK((p.out_h < 2 || pool.each_task_ran_once()));
#endif
    CHECK(split == y);
  }
}

TEST_CASE("pack_direct_weights puts a tap's channels of one panel side by side") {
  // 18 rows of 2 taps: a panel of 16 rows, then one of 2; element (row r, tap l) = 10 * r + l.
  std::vector<float> w(36), packed(36);
  for (int r = 0; r < 18; ++r)
    for (int l = 0; l < 2; ++l) w[static_cast<std::size_t>(r * 2 + l)] = static_cast<float>(10 * r + l);
  onnxc::rt::pack_direct_weights(w.data(), 18, 2, packed.data());
  CHECK(packed[0] == 0.0f);    // tap 0: rows 0..15
  CHECK(packed[15] == 150.0f);
  CHECK(packed[16] == 1.0f);   // tap 1: rows 0..15
  CHECK(packed[31] == 151.0f);
  CHECK(packed[32] == 160.0f);  // the last panel: rows 16 and 17, tap by tap
  CHECK(packed[33] == 170.0f);
  CHECK(packed[34] == 161.0f);
  CHECK(packed[35] == 171.0f);
}

TEST_CASE("conv_gemm, conv_depthwise(_in_place) and max_pool split into tasks compute the serial kernels' bits") {
  ReversedParallelFor pool;
  const onnxc_parallel_for parallel = pool.as_parallel_for();
  // 1x1 (every block and panel a task), and im2col with several blocks (channel tasks, then
  // panel tasks; 17 output channels leave a partial panel).
  // The padded-input product: channel tasks for the copy, then panel tasks; a narrow 1x1
  // product (7 x 7): tasks of 32 rows, the last of whole and partial panels.
  for (ConvParams p : {conv2d(16, 12, 1, 30, 1, 1, 0, 1), conv2d(3, 17, 1, 50, 3, 1, 1, 1), conv2d(8, 17, 1, 20, 3, 1, 1, 1),
                       conv2d(64, 40, 1, 7, 1, 1, 0, 1)}) {
    const index_t k = onnxc::rt::conv_gemm_k(p), n = onnxc::rt::conv_gemm_n(p);
    const index_t block = onnxc::rt::conv_gemm_reads_padded_input(p, 384) ? 384 : 96;
    auto x = ramp(p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * k, 0.25f);
    std::vector<float> packed(w.size()), serial(static_cast<std::size_t>(p.out_channels * n)), split(serial.size());
    std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_gemm_scratch_floats(p, block)) + 1);
    onnxc::rt::pack_weights(w.data(), p.out_channels, k, packed.data());
    onnxc::rt::conv_gemm(p, x.data(), packed.data(), nullptr, serial.data(), scratch.data(), block,
                         onnxc::rt::kNoActivation);
    onnxc::rt::conv_gemm(p, x.data(), packed.data(), nullptr, split.data(), scratch.data(), block,
                         onnxc::rt::kNoActivation, &parallel);
    CHECK(pool.each_task_ran_once());
    CHECK(split == serial);
  }
  // Depthwise: 4 slots of scratch over 2 images x 5 channels (ranges of 2 or 3 planes), with
  // the ring-of-rows path and the flat-plane path.
  for (ConvParams p : {conv2d(5, 5, 5, 40, 3, 2, 1, 1), conv2d(5, 5, 5, 7, 3, 1, 1, 1)}) {
    p.batch = 2;
    const index_t slots = 4, slot_floats = onnxc::rt::conv_depthwise_scratch_floats(p);
    auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * p.k_h * p.k_w, 0.25f);
    std::vector<float> serial(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
    std::vector<float> split(serial.size()), scratch(static_cast<std::size_t>(slots * slot_floats));
    onnxc::rt::conv_depthwise(p, x.data(), w.data(), nullptr, serial.data(), scratch.data(), onnxc::rt::kNoActivation);
    onnxc::rt::conv_depthwise(p, x.data(), w.data(), nullptr, split.data(), scratch.data(), onnxc::rt::kNoActivation,
                              &parallel, slots);
    CHECK(pool.runs.size() == static_cast<std::size_t>(slots));
    CHECK(pool.each_task_ran_once());
    CHECK(split == serial);
  }
  // In place: 2 images x 5 channels cut into kDepthwiseTasks ranges (of 2 or 3 planes), with
  // the row path and the flat-plane path.
  for (ConvParams p : {conv2d(5, 5, 5, 40, 3, 2, 1, 1), conv2d(5, 5, 5, 7, 3, 1, 1, 1)}) {
    p.batch = 2;
    auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * p.k_h * p.k_w, 0.25f);
    std::vector<float> serial(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
    std::vector<float> split(serial.size());
    onnxc::rt::conv_depthwise_in_place(p, x.data(), w.data(), nullptr, serial.data(), onnxc::rt::kNoActivation);
    onnxc::rt::conv_depthwise_in_place(p, x.data(), w.data(), nullptr, split.data(), onnxc::rt::kNoActivation, &parallel);
    CHECK(pool.runs.size() == static_cast<std::size_t>(onnxc::rt::kDepthwiseTasks));
    CHECK(pool.each_task_ran_once());
    CHECK(split == serial);
  }
  // MaxPool: 11 planes of squeezenet's 3x3 stride-2 window cut into 8 ranges.
  const onnxc::rt::PoolParams pool_p{11, 1, 27, 27, 1, 13, 13, 1, 3, 3, 1, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, false};
  auto x = ramp(11 * 27 * 27, 0.5f);
  std::vector<float> serial(11 * 13 * 13), split(serial.size());
  onnxc::rt::max_pool(pool_p, x.data(), serial.data(), static_cast<std::int64_t*>(nullptr), 0);
  onnxc::rt::max_pool(pool_p, x.data(), split.data(), static_cast<std::int64_t*>(nullptr), 0, &parallel);
  CHECK(pool.runs.size() == static_cast<std::size_t>(onnxc::rt::kPoolTasks));
  CHECK(pool.each_task_ran_once());
  CHECK(split == serial);
}

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One forward LSTM layer (gates i, o, f, c; no peepholes, clip or sequence lengths) in double
// precision, written from the ONNX formulas: h after the last step.
std::vector<double> reference_lstm(index_t seq, index_t input, index_t hidden, const std::vector<float>& x,
                                   const std::vector<float>& w, const std::vector<float>& r,
                                   const std::vector<float>& bias) {
  std::vector<double> h(static_cast<std::size_t>(hidden)), c(h.size()), g(static_cast<std::size_t>(4 * hidden));
  auto at = [](const std::vector<float>& v, index_t i) { return static_cast<double>(v[static_cast<std::size_t>(i)]); };
  for (index_t t = 0; t < seq; ++t) {
    for (index_t row = 0; row < 4 * hidden; ++row) {
      double sum = at(bias, row) + at(bias, 4 * hidden + row);
      for (index_t k = 0; k < input; ++k) sum += at(w, row * input + k) * at(x, t * input + k);
      for (index_t k = 0; k < hidden; ++k) sum += at(r, row * hidden + k) * h[static_cast<std::size_t>(k)];
      g[static_cast<std::size_t>(row)] = sum;
    }
    for (index_t j = 0; j < hidden; ++j) {
      auto gate = [&](index_t which) { return g[static_cast<std::size_t>(which * hidden + j)]; };
      const std::size_t u = static_cast<std::size_t>(j);
      c[u] = sigmoid(gate(2)) * c[u] + sigmoid(gate(0)) * std::tanh(gate(3));
      h[u] = sigmoid(gate(1)) * std::tanh(c[u]);
    }
  }
  return h;
}

}  // namespace

TEST_CASE("lstm matches a double-precision reference on rows with vector tails") {
  namespace rt = onnxc::rt;
  const index_t seq = 5, input = 19, hidden = 21;  // neither a multiple of any vector width
  auto x = ramp(seq * input, 0.2f), w = ramp(4 * hidden * input, 0.05f), r = ramp(4 * hidden * hidden, 0.04f);
  auto bias = ramp(8 * hidden, 0.1f);
  const rt::RnnFunction sig{rt::RnnActivation::Sigmoid, 0, 0}, tanh{rt::RnnActivation::Tanh, 0, 0};
  const rt::RnnParams p{seq,   1,     input, hidden,     1,          false,      false,
                        std::numeric_limits<float>::infinity(), false, false, {sig, sig}, {tanh, tanh}, {tanh, tanh},
                        false, false};
  std::vector<float> y_h(static_cast<std::size_t>(hidden));
  std::vector<float> scratch(static_cast<std::size_t>(rt::lstm_scratch_elements(hidden)));
  const float* none = nullptr;
  rt::lstm<float>(p, x.data(), w.data(), r.data(), bias.data(), nullptr, none, none, none, nullptr, y_h.data(), nullptr,
                  scratch.data());
  const std::vector<double> expected = reference_lstm(seq, input, hidden, x, w, r, bias);
  for (std::size_t i = 0; i < y_h.size(); ++i) REQUIRE(y_h[i] == Approx(expected[i]).margin(1e-5));
}

TEST_CASE("lstm_in_outputs, the state in Y and Y_c, computes lstm's bits") {
  // Bidirectional, two batch entries of lengths 5 and 3, initial states and peepholes; 21 hidden
  // units: a 16-unit chunk and a 5-unit one, neither a multiple of every vector width.
  namespace rt = onnxc::rt;
  const index_t seq = 5, batch = 2, input = 19, hidden = 21, dirs = 2;
  auto x = ramp(seq * batch * input, 0.2f), w = ramp(dirs * 4 * hidden * input, 0.05f);
  auto r = ramp(dirs * 4 * hidden * hidden, 0.04f), bias = ramp(dirs * 8 * hidden, 0.1f);
  auto h0 = ramp(dirs * batch * hidden, 0.1f), c0 = ramp(dirs * batch * hidden, 0.3f);
  auto peep = ramp(dirs * 3 * hidden, 0.02f);
  const std::int32_t lens[] = {5, 3};
  const rt::RnnFunction sig{rt::RnnActivation::Sigmoid, 0, 0}, tanh{rt::RnnActivation::Tanh, 0, 0};
  const rt::RnnParams p{seq, batch, input, hidden, dirs, false, false, 2.5f, false, false,
                        {sig, sig}, {tanh, tanh}, {tanh, tanh}, false, false};
  const std::size_t y_size = static_cast<std::size_t>(seq * dirs * batch * hidden);
  const std::size_t state_size = static_cast<std::size_t>(dirs * batch * hidden);
  std::vector<float> y(y_size), y_h(state_size), y_c(state_size);
  std::vector<float> scratch(static_cast<std::size_t>(rt::lstm_scratch_elements(hidden)));
  rt::lstm<float>(p, x.data(), w.data(), r.data(), bias.data(), lens, h0.data(), c0.data(), peep.data(), y.data(),
                  y_h.data(), y_c.data(), scratch.data());
  std::vector<float> y2(y_size, -1.0f), y_h2(state_size, -1.0f), y_c2(state_size, -1.0f);
  rt::lstm_in_outputs<float>(p, x.data(), w.data(), r.data(), bias.data(), lens, h0.data(), c0.data(), peep.data(),
                             y2.data(), y_h2.data(), y_c2.data());
  for (std::size_t i = 0; i < y_size; ++i) REQUIRE(y2[i] == y[i]);
  for (std::size_t i = 0; i < state_size; ++i) {
    REQUIRE(y_h2[i] == y_h[i]);
    REQUIRE(y_c2[i] == y_c[i]);
  }
  // And without initial states (zeros: the recurrence term of the first step is skipped).
  rt::lstm<float>(p, x.data(), w.data(), r.data(), bias.data(), lens, nullptr, nullptr, nullptr, y.data(), y_h.data(),
                  y_c.data(), scratch.data());
  rt::lstm_in_outputs<float>(p, x.data(), w.data(), r.data(), bias.data(), lens, nullptr, nullptr, nullptr, y2.data(),
                             y_h2.data(), y_c2.data());
  for (std::size_t i = 0; i < y_size; ++i) REQUIRE(y2[i] == y[i]);
  for (std::size_t i = 0; i < state_size; ++i) REQUIRE(y_c2[i] == y_c[i]);
}

TEST_CASE("lstm with W and R in the unit-chunk layout, projected or not, matches the row-major kernel") {
  // Bidirectional, two batch entries of lengths 5 and 3, initial states, peepholes and clip;
  // hidden sizes with a tail chunk (5, 21, 37) or none (16, 32): every kernel variant (state in
  // the outputs or in scratch, input projections first or per step) against rt::lstm on the
  // row-major weights (itself checked against the double-precision reference above).
  namespace rt = onnxc::rt;
  const rt::RnnFunction sig{rt::RnnActivation::Sigmoid, 0, 0}, tanh{rt::RnnActivation::Tanh, 0, 0};
  for (index_t hidden : {5, 16, 21, 32, 37})
    for (index_t input : {3, 19}) {
      const index_t seq = 5, batch = 2, dirs = 2;
      auto x = ramp(seq * batch * input, 0.2f), w = ramp(dirs * 4 * hidden * input, 0.05f);
      auto r = ramp(dirs * 4 * hidden * hidden, 0.04f), bias = ramp(dirs * 8 * hidden, 0.1f);
      auto h0 = ramp(dirs * batch * hidden, 0.1f), c0 = ramp(dirs * batch * hidden, 0.3f);
      auto peep = ramp(dirs * 3 * hidden, 0.02f);
      const std::int32_t lens[] = {5, 3};
      rt::RnnParams p{seq, batch, input, hidden, dirs, false, false, 2.5f, false, false,
                      {sig, sig}, {tanh, tanh}, {tanh, tanh}, false, false};
      const std::size_t y_size = static_cast<std::size_t>(seq * dirs * batch * hidden);
      const std::size_t state_size = static_cast<std::size_t>(dirs * batch * hidden);
      std::vector<float> y(y_size), y_h(state_size), y_c(state_size);
      std::vector<float> scratch(static_cast<std::size_t>(rt::lstm_scratch_elements(hidden) +
                                                          rt::lstm_projection_elements(seq, batch, hidden)));
      rt::lstm<float>(p, x.data(), w.data(), r.data(), bias.data(), lens, h0.data(), c0.data(), peep.data(), y.data(),
                      y_h.data(), y_c.data(), scratch.data());
      std::vector<float> wp(w.size()), rp(r.size());
      rt::pack_recurrent_weights(dirs, 4, hidden, input, w.data(), wp.data());
      rt::pack_recurrent_weights(dirs, 4, hidden, hidden, r.data(), rp.data());
      p.packed = true;
      for (bool projected : {false, true})
        for (bool in_outputs : {false, true}) {
          CAPTURE(hidden, input, projected, in_outputs);
          p.projected = projected;
          std::vector<float> y2(y_size, -1.0f), y_h2(state_size, -1.0f), y_c2(state_size, -1.0f);
          if (in_outputs)
            rt::lstm_in_outputs<float>(p, x.data(), wp.data(), rp.data(), bias.data(), lens, h0.data(), c0.data(),
                                       peep.data(), y2.data(), y_h2.data(), y_c2.data(), scratch.data());
          else
            rt::lstm<float>(p, x.data(), wp.data(), rp.data(), bias.data(), lens, h0.data(), c0.data(), peep.data(),
                            y2.data(), y_h2.data(), y_c2.data(), scratch.data());
          for (std::size_t i = 0; i < y_size; ++i) REQUIRE(y2[i] == Approx(y[i]).margin(2e-6));
          for (std::size_t i = 0; i < state_size; ++i) {
            REQUIRE(y_h2[i] == Approx(y_h[i]).margin(2e-6));
            REQUIRE(y_c2[i] == Approx(y_c[i]).margin(2e-6));
          }
        }
    }
}

TEST_CASE("float global_average_pool's vector sums match a double-precision mean") {
  // Planes shorter than a vector, every remainder around one and two vectors (16 lanes on
  // AVX-512, 8 on AVX2), and squeezenet1_1's 13 x 13.
  for (index_t size : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 169}) {
    const index_t planes = 3;
    auto x = ramp(planes * size, 0.37f);
    std::vector<float> y(static_cast<std::size_t>(planes));
    onnxc::rt::global_average_pool(planes, size, x.data(), y.data());
    for (index_t c = 0; c < planes; ++c) {
      double sum = 0;
      for (index_t i = 0; i < size; ++i) sum += x[static_cast<std::size_t>(c * size + i)];
      INFO("plane size " << size << ", plane " << c);
      REQUIRE(y[static_cast<std::size_t>(c)] == Approx(sum / static_cast<double>(size)).margin(1e-6));
    }
  }
}

TEST_CASE("float map of Exp, Log, Sigmoid, Tanh, Erf and Gelu (their vector forms) matches double-precision math") {
  // Every remainder of a vector (n up to 40), values from -100 to 100 (Sigmoid's and Exp's tails,
  // Tanh's and Erf's saturation), and infinities and NaN through the same lanes.
  std::vector<float> x;
  for (int i = -200; i <= 200; ++i) x.push_back(static_cast<float>(i) * 0.5f);
  for (int i = -40; i <= 40; ++i) x.push_back(static_cast<float>(i) * 0.037f);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  auto check = [&](auto f, double (*want)(double), const char* name, bool positive_only) {
    for (index_t n : {index_t{1}, index_t{7}, index_t{15}, index_t{17}, index_t{40}, static_cast<index_t>(x.size())}) {
      for (index_t at = 0; at + n <= static_cast<index_t>(x.size()); at += n) {
        std::vector<float> in(x.begin() + at, x.begin() + at + n), y(static_cast<std::size_t>(n));
        if (positive_only)
          for (float& v : in) v = std::fabs(v);
        onnxc::rt::map(in.data(), y.data(), n, f);
        for (index_t i = 0; i < n; ++i) {
          const double w = want(in[static_cast<std::size_t>(i)]);
          INFO(name << "(" << in[static_cast<std::size_t>(i)] << ")");
          if (std::isnan(w)) {
            REQUIRE(std::isnan(y[static_cast<std::size_t>(i)]));
          } else if (std::isinf(w) || std::fabs(w) > 3e38) {
            REQUIRE(y[static_cast<std::size_t>(i)] == static_cast<float>(w));
          } else {
            REQUIRE(y[static_cast<std::size_t>(i)] == Approx(w).epsilon(1e-5).margin(1e-7));
          }
        }
      }
    }
  };
  check(onnxc::rt::Exp{}, [](double v) { return std::exp(v); }, "exp", false);
  check(onnxc::rt::Log{}, [](double v) { return std::log(v); }, "log", true);
  check(onnxc::rt::Sigmoid{}, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, "sigmoid", false);
  check(onnxc::rt::Tanh{}, [](double v) { return std::tanh(v); }, "tanh", false);
  check(onnxc::rt::Erf{}, [](double v) { return std::erf(v); }, "erf", false);
  check(onnxc::rt::Gelu{}, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }, "gelu", false);
  check(onnxc::rt::GeluTanh{},
        [](double v) { return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); },
        "gelu_tanh", false);
}

TEST_CASE("AveragePool whose window is the whole plane (the global mean's path) matches a double-precision mean") {
  // resnet8-cifar's 8 x 8 window over 64 channels, a 7 x 7 one (mobilenet-style), a 1-d one;
  // then the same 8 x 8 window with one pad at the end, which must not take that path.
  struct Case {
    index_t h, w, pad_end;
  };
  for (const Case& c : {Case{8, 8, 0}, Case{7, 7, 0}, Case{1, 37, 0}, Case{8, 8, 1}}) {
    const index_t planes = 5, out = 1;  // with the end pad too: the next window would start in it
    const onnxc::rt::PoolParams p{planes, 1, c.h, c.w, 1, out, out, 1, c.h, c.w, 1, c.h, c.w, 1, 1, 1, 0, 0, 0, 0,
                                  c.pad_end, c.pad_end, false};
    CHECK(onnxc::rt::pools_whole_plane(p) == (c.pad_end == 0));
    auto x = ramp(planes * c.h * c.w, 0.29f);
    std::vector<float> y(static_cast<std::size_t>(planes));
    onnxc::rt::average_pool(p, x.data(), y.data());
    for (index_t ch = 0; ch < planes; ++ch) {
      double sum = 0;
      for (index_t i = 0; i < c.h * c.w; ++i) sum += x[static_cast<std::size_t>(ch * c.h * c.w + i)];
      INFO(c.h << " x " << c.w << ", pad_end " << c.pad_end << ", plane " << ch);
      REQUIRE(y[static_cast<std::size_t>(ch)] == Approx(sum / static_cast<double>(c.h * c.w)).margin(1e-6));
    }
  }
}

#if defined(ONNXC_QCONV_VNNI)
TEST_CASE("qconv_vnni (AVX-512 VNNI) equals conv_integer, with padding, strides, dilation and partial tiles") {
  // in channels (not a multiple of 4), out channels (not a multiple of the 16-channel tile),
  // input height x width, kernel h x w, stride h x w, pad, dilation; batch 2. Widths leave partial
  // 16-column segments; the 1x1 cases run as one row of the whole plane.
  struct Case {
    index_t c, m, h, w, kh, kw, sh, sw, pad, dilation;
  };
  const Case cases[] = {{3, 5, 9, 20, 3, 3, 1, 1, 1, 1},   {5, 20, 11, 37, 3, 3, 2, 2, 1, 1},
                        {8, 33, 8, 8, 1, 1, 1, 1, 0, 1},   {6, 16, 10, 24, 3, 3, 1, 1, 2, 2},
                        {1, 7, 5, 40, 5, 5, 2, 2, 2, 1},   {16, 17, 12, 18, 1, 1, 2, 2, 0, 1},
                        {4, 3, 49, 10, 10, 4, 2, 1, 4, 1}, {12, 40, 6, 16, 3, 1, 1, 2, 1, 1},
                        // Output rows narrower than a vector: several rows (and parts of rows) per vector.
                        {16, 33, 8, 8, 3, 3, 1, 1, 1, 1},  {9, 20, 16, 16, 3, 3, 2, 2, 1, 1},
                        {1, 19, 49, 10, 10, 4, 2, 2, 1, 1}, {3, 5, 9, 6, 3, 3, 1, 1, 0, 1},
                        {5, 7, 7, 7, 3, 3, 2, 2, 1, 1},    {6, 17, 5, 6, 3, 3, 1, 1, 1, 2},
                        {8, 18, 11, 7, 3, 3, 1, 1, 1, 1},
                        // Rows of whole 16-column blocks: by output rows (stride 2, dilation, 5 wide).
                        {7, 18, 12, 32, 3, 3, 1, 1, 1, 1}, {6, 20, 10, 64, 3, 3, 2, 2, 1, 1},
                        {5, 17, 9, 32, 3, 3, 1, 1, 2, 2},  {4, 16, 9, 64, 5, 5, 2, 2, 2, 1}};
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  int by_rows = 0;
  for (const Case& c : cases) {
    const index_t oh = (c.h + 2 * c.pad - c.dilation * (c.kh - 1) - 1) / c.sh + 1;
    const index_t ow = (c.w + 2 * c.pad - c.dilation * (c.kw - 1) - 1) / c.sw + 1;
    const ConvParams p = {2, c.c, c.m, 1, 1, c.h, c.w, 1, oh, ow, 1, c.kh, c.kw, 1, c.sh, c.sw,
                          1, c.dilation, c.dilation, 0, c.pad, c.pad};
    if (!onnxc::rt::qconv_vnni_applies(p)) FAIL("case not run by qconv_vnni: " << c.c << "x" << c.h << "x" << c.w);
    by_rows += onnxc::rt::detail::qconv_vnni_by_rows(p) ? 1 : 0;
    std::vector<uint8_t> x(static_cast<std::size_t>(2 * c.c * c.h * c.w));
    std::vector<int8_t> w(static_cast<std::size_t>(c.m * c.c * c.kh * c.kw));
    for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
    const uint8_t zx = 101;
    const std::size_t outputs = static_cast<std::size_t>(2 * c.m * oh * ow);
    std::vector<int32_t> reference(outputs), vnni(outputs, -1), plane(static_cast<std::size_t>(oh * ow));
    onnxc::rt::conv_integer(p, onnxc::rt::QuantOperand<uint8_t>{x.data(), &zx, 0},
                            onnxc::rt::QuantOperand<int8_t>{w.data(), nullptr, 0},
                            onnxc::rt::StoreInt32{reference.data()}, plane.data());
    std::vector<int8_t> packed(static_cast<std::size_t>(onnxc::rt::qconv_vnni_weights_bytes(p)));
    onnxc::rt::qconv_vnni_pack_weights(p, w.data(), packed.data());
    std::vector<index_t> row_sums(static_cast<std::size_t>(c.m));
    onnxc::rt::qconv_weight_row_sums(p, w.data(), row_sums.data());
    onnxc::rt::qconv_vnni(p, x.data(), zx, packed.data(), row_sums.data(), onnxc::rt::StoreInt32{vnni.data()});
    CHECK(vnni == reference);
  }
  CHECK(by_rows == 5);  // the last four cases and the 15-column one; the others walk the plane flat
}
#endif

namespace {

// depthwise_integer against conv_integer (the reference the compiler folds with) on the same
// random data: int32 accumulators, then requantized with per-channel bias and multipliers (large
// ones, so both ends saturate).
template <class X>
void check_depthwise_integer(const ConvParams& p, X zx, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  const index_t c = p.in_channels, taps = p.k_h * p.k_w;
  std::vector<X> x(static_cast<std::size_t>(p.batch * c * p.in_h * p.in_w));
  std::vector<std::int8_t> w(static_cast<std::size_t>(c * taps)), zw(static_cast<std::size_t>(c));
  for (auto& v : x) v = static_cast<X>(byte(rng) + std::numeric_limits<X>::lowest());
  for (auto& v : w) v = static_cast<std::int8_t>(byte(rng) - 128);
  for (auto& v : zw) v = static_cast<std::int8_t>(byte(rng) - 128);  // |w - zw| up to 255
  const onnxc::rt::QuantOperand<X> xq{x.data(), &zx, 0};
  const onnxc::rt::QuantOperand<std::int8_t> wq{w.data(), zw.data(), 1};
  const std::size_t outputs = static_cast<std::size_t>(p.batch * c * p.out_h * p.out_w);
  std::vector<std::int32_t> plane(static_cast<std::size_t>(p.out_h * p.out_w));
  std::vector<unsigned char> scratch(static_cast<std::size_t>(onnxc::rt::depthwise_integer_scratch_bytes(p)));

  std::vector<std::int32_t> reference(outputs), depthwise(outputs, -1);
  onnxc::rt::conv_integer(p, xq, wq, onnxc::rt::StoreInt32{reference.data()}, plane.data());
  onnxc::rt::depthwise_integer(p, xq, wq, onnxc::rt::StoreInt32{depthwise.data()}, scratch.data());
  CHECK(depthwise == reference);

  std::vector<std::int32_t> bias(static_cast<std::size_t>(c));
  std::vector<onnxc::rt::Requant> requant;
  for (index_t i = 0; i < c; ++i) {
    bias[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * 997 % 4001) - 2000;
    requant.push_back(onnxc::rt::make_requant(0.0007f * static_cast<float>(i + 1)));
  }
  std::vector<X> y_reference(outputs), y(outputs);
  const std::int32_t zy = 3;
  onnxc::rt::conv_integer(p, xq, wq, onnxc::rt::RequantizeOutput<X>{y_reference.data(), bias.data(), requant.data(), 1, zy},
                          plane.data());
  onnxc::rt::depthwise_integer(p, xq, wq, onnxc::rt::RequantizeOutput<X>{y.data(), bias.data(), requant.data(), 1, zy},
                               scratch.data());
  CHECK(y == y_reference);
}

}  // namespace

TEST_CASE("depthwise_integer equals conv_integer: uint8 and int8 inputs, weight zero points, requantized") {
  // channels, input height x width, kernel h x w, pad top/left and bottom/right (the output keeps
  // the input's width, as the vector kernel needs, or not), batch 2; planes not a multiple of 16.
  struct Case {
    index_t c, h, w, kh, kw, pad_begin, pad_end;
  };
  const Case cases[] = {{5, 25, 5, 3, 3, 1, 1}, {3, 7, 9, 3, 5, 2, 2}, {2, 6, 6, 1, 1, 0, 0}, {1, 5, 4, 3, 3, 1, 0},
                        {4, 11, 13, 5, 5, 2, 2}, {3, 4, 3, 3, 3, 0, 0}, {2, 9, 7, 2, 2, 1, 0}, {6, 1, 17, 1, 3, 0, 1}};
  std::mt19937 rng(9);
  for (const Case& k : cases) {
    const index_t oh = k.h + k.pad_begin + k.pad_end - k.kh + 1, ow = k.w + k.pad_begin + k.pad_end - k.kw + 1;
    const ConvParams p = {2, k.c, k.c, k.c, 1, k.h, k.w, 1, oh, ow, 1, k.kh, k.kw, 1, 1, 1,
                          1, 1, 1, 0, k.pad_begin, k.pad_begin};
    INFO("channels " << k.c << ", plane " << k.h << "x" << k.w << ", kernel " << k.kh << "x" << k.kw << ", pads "
                     << k.pad_begin << "/" << k.pad_end);
    REQUIRE(onnxc::rt::depthwise_integer_applies(p));
    check_depthwise_integer<std::uint8_t>(p, 131, rng);
    check_depthwise_integer<std::int8_t>(p, -7, rng);
  }
}

TEST_CASE("conv_winograd (F(2x2, 3x3)) matches the reference convolution") {
  // Odd and even output sizes (a last tile with one row or column), rows of tiles wider than a
  // vector and narrower, paddings 0 to 2, output channels that do not fill a panel, one input
  // channel, two images; blocks of one row, two and all of them; product buffers from one to
  // more than the panels, with a parallel-for that runs the tasks last first.
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  auto random = [&](index_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& f : v) f = normal(rng);
    return v;
  };
  const onnxc_parallel_for backwards{[](void*, size_t n, onnxc_task_fn task, void* context) {
                                       for (size_t i = n; i-- > 0;) task(context, i);
                                     },
                                     nullptr};
  ConvParams two_images = conv2d(4, 9, 1, 11, 3, 1, 1, 1);
  two_images.batch = 2;
  for (ConvParams p : {conv2d(3, 8, 1, 8, 3, 1, 1, 1), conv2d(5, 17, 1, 13, 3, 1, 1, 1), conv2d(1, 4, 1, 7, 3, 1, 0, 1),
                       conv2d(6, 12, 1, 40, 3, 1, 1, 1), conv2d(16, 24, 1, 35, 3, 1, 2, 1), conv2d(2, 3, 1, 3, 3, 1, 1, 1),
                       // a full group of 32 output channels and a partial one, few tiles (the narrow
                       // product on AVX-512)
                       conv2d(8, 40, 1, 9, 3, 1, 1, 1), conv2d(16, 64, 1, 13, 3, 1, 1, 1), two_images}) {
    REQUIRE(onnxc::rt::conv_fits_winograd(p));
    const index_t n = p.out_h * p.out_w, th = onnxc::rt::winograd_tiles_h(p);
    auto x = random(p.batch * p.in_channels * p.in_h * p.in_w), w = random(p.out_channels * p.in_channels * 9);
    auto bias = random(p.out_channels);
    std::vector<float> expected(static_cast<std::size_t>(p.batch * p.out_channels * n)), y(expected.size());
    std::vector<float> u(static_cast<std::size_t>(16 * p.out_channels * p.in_channels));
    onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
    onnxc::rt::winograd_pack_weights(w.data(), p.out_channels, p.in_channels, u.data());
    for (index_t rows : {index_t{1}, index_t{2}, th})
      for (index_t slots : {index_t{1}, index_t{2}, index_t{5}})
        for (index_t group : {onnxc::rt::kPanelRows, onnxc::rt::kWinogradNarrowRows})
        for (onnxc::rt::Activation act : {onnxc::rt::Activation::None, onnxc::rt::Activation::Relu,
                                          onnxc::rt::Activation::Clip, onnxc::rt::Activation::Sigmoid}) {
          std::vector<float> scratch(
              static_cast<std::size_t>(onnxc::rt::winograd_scratch_floats(p, rows, slots, group)));
          const onnxc::rt::Epilogue e{act, -0.5f, 0.75f};
          std::fill(y.begin(), y.end(), std::numeric_limits<float>::quiet_NaN());
          onnxc::rt::conv_winograd(p, x.data(), u.data(), bias.data(), y.data(), scratch.data(), rows, slots, e,
                                   slots > 1 ? &backwards : nullptr, group);
          for (std::size_t i = 0; i < y.size(); ++i) {
            float want = expected[i];
            if (act == onnxc::rt::Activation::Relu) want = want > 0 ? want : 0.0f;
            if (act == onnxc::rt::Activation::Clip) want = std::min(std::max(want, -0.5f), 0.75f);
            if (act == onnxc::rt::Activation::Sigmoid) want = 1.0f / (1.0f + std::exp(-want));
            INFO("rows " << rows << " slots " << slots << " group " << group << " activation " << static_cast<int>(act) << " at " << i);
            REQUIRE(y[i] == Approx(want).margin(1e-4).epsilon(1e-4));
          }
        }
  }
}
