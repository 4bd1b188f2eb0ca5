// rt::conv_band (onnxc/conv_band_simd.h: output rows in bands copied to the stack) against the
// reference loop nest rt::conv over group widths 1-64, first layers of 1-4 channels, kernels 1-7,
// strides 1-3, dilation 1-2, odd planes and output widths (tails of every register tile).
// Runtime-support only: built into onnxc_unit_tests (the portable fallback),
// onnxc_simd_kernel_tests (-march=native) and onnxc_avx2_kernel_tests.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "onnxc/conv_band_simd.h"
#include "conv_test_shapes.h"

namespace {

std::string describe_band(const ConvParams& p) {
  std::ostringstream s;
  s << "batch " << p.batch << ", " << p.in_channels << " -> " << p.out_channels << " channels in " << p.group
    << " groups, plane " << p.in_h << "x" << p.in_w << ", kernel " << p.k_h << "x" << p.k_w << ", stride "
    << p.stride_h << "x" << p.stride_w << ", pad " << p.pad_h << "x" << p.pad_w << ", dilation " << p.dilation_w;
  return s.str();
}

// A 2-d geometry with its own height and width (pads before; the output sizes as ONNX computes
// them with the same padding after).
ConvParams band2d(index_t c, index_t m, index_t group, index_t h, index_t w, index_t k, index_t stride,
                  index_t pad, index_t dilation) {
  ConvParams p = conv2d(c, m, group, h, k, stride, pad, dilation);
  p.in_w = w;
  p.out_w = (w + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  return p;
}

std::vector<ConvParams> band_shapes() {
  ConvParams batch2 = conv2d(32, 32, 2, 9, 3, 1, 1, 1);
  batch2.batch = 2;
  ConvParams stride3 = conv2d(6, 12, 3, 20, 3, 3, 1, 1);
  ConvParams wide_rect = band2d(16, 16, 2, 5, 37, 3, 1, 1, 1);
  ConvParams valid = conv2d(16, 32, 4, 12, 3, 1, 0, 1);
  return {
      // group widths 2, 4, 8, 16 (regnet's 7 x 7 and stride-2 layers), 32, 64; output channels per
      // group 2-40 (panels of 16 and the rows left, register tiles of 1-8 rows)
      conv2d(8, 8, 4, 11, 3, 1, 1, 1), conv2d(16, 16, 4, 13, 3, 2, 1, 1), conv2d(32, 32, 4, 17, 3, 1, 1, 1),
      conv2d(48, 48, 3, 7, 3, 1, 1, 1), conv2d(48, 48, 3, 14, 3, 2, 1, 1), conv2d(64, 64, 2, 10, 3, 1, 1, 1),
      conv2d(64, 128, 2, 6, 3, 2, 1, 1), conv2d(20, 80, 2, 9, 3, 1, 1, 1), conv2d(12, 18, 3, 9, 5, 1, 2, 1),
      // kernels 1, 5 and 7, dilation 2 (stride 1 and 2), stride 3, no padding, a wide short plane
      conv2d(32, 64, 4, 12, 1, 1, 0, 1), conv2d(20, 20, 5, 15, 5, 1, 2, 1), conv2d(16, 16, 2, 19, 7, 2, 3, 1),
      conv2d(24, 24, 3, 16, 3, 1, 2, 2), conv2d(24, 24, 3, 17, 3, 2, 2, 2), stride3, valid, wide_rect, batch2,
      // first layers: 3 -> 16/32/64, 3x3 and 7x7 stride 2, 1 and 4 channels, 5x5 stride 1
      conv2d(3, 32, 1, 31, 3, 2, 1, 1), conv2d(3, 16, 1, 24, 3, 2, 1, 1), conv2d(3, 64, 1, 29, 7, 2, 3, 1),
      conv2d(1, 8, 1, 20, 5, 1, 2, 1), conv2d(4, 24, 1, 18, 3, 1, 1, 1), band2d(3, 32, 1, 40, 9, 3, 2, 0, 1),
      // 1-d as one row
      band2d(16, 16, 2, 1, 70, 1, 1, 0, 1)};
}

const onnxc_parallel_for backwards_band{[](void*, size_t n, onnxc_task_fn task, void* context) {
                                          for (size_t i = n; i-- > 0;) task(context, i);
                                        },
                                        nullptr};

}  // namespace

TEST_CASE("conv_band matches the reference convolution over groups, kernels, strides and dilations") {
  for (ConvParams p : band_shapes()) {
    INFO(describe_band(p));
    REQUIRE(onnxc::rt::band_detail::applies(p));
    const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group, k = cg * p.k_h * p.k_w;
    const std::vector<float> x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * k, 0.125f),
                             bias = ramp(p.out_channels, 1.0f);
    std::vector<float> expected(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
    onnxc::rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
    std::vector<float> packed(w.size());
    for (index_t g = 0; g < p.group; ++g)
      onnxc::rt::pack_direct_weights(w.data() + g * mg * k, mg, k, packed.data() + g * mg * k);
    for (bool relu : {false, true})
      for (onnxc::rt::Parallel parallel : {static_cast<onnxc::rt::Parallel>(nullptr), &backwards_band}) {
        INFO("relu " << relu << ", parallel " << (parallel != nullptr));
        std::vector<float> y(expected.size(), -99.0f);
        onnxc::rt::conv_band(p, x.data(), packed.data(), bias.data(), y.data(),
                             {relu ? onnxc::rt::Activation::Relu : onnxc::rt::Activation::None, 0, 0}, parallel);
        for (std::size_t i = 0; i < y.size(); ++i) {
          INFO("output " << i);
          const float want = relu && expected[i] < 0 ? 0.0f : expected[i];
          REQUIRE(y[i] == Approx(want).margin(1e-4));
        }
      }
  }
}

TEST_CASE("conv_band's plan covers every output row with a band that fits its buffer") {
  using onnxc::rt::band_detail::Plan;
  for (const ConvParams& p : band_shapes()) {
    INFO(describe_band(p));
    const Plan plan = onnxc::rt::band_detail::plan(p);
    CHECK(plan.rows >= 1);
    CHECK(plan.rows <= p.out_h);
    CHECK(plan.vectors >= 1);
    CHECK(plan.vectors <= onnxc::rt::band_detail::kMaxVectors);
    CHECK(onnxc::rt::band_detail::band_floats(p, plan.rows) + onnxc::rt::band_detail::slack_floats(p) <=
          onnxc::rt::band_detail::kMaxBufferFloats);
  }
  // regnet's 7 x 7 layers: the whole plane in one band (7 rows of 9 flat columns)
  CHECK(onnxc::rt::band_detail::plan(conv2d(400, 400, 25, 7, 3, 1, 1, 1)).rows == 7);
}
