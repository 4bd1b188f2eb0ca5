// ConvTranspose by stride phases with no scratch (onnxc/conv_transpose_phases.h, plain C++, and
// onnxc/conv_transpose_phases_simd.h, register tiles) against the reference loops
// rt::conv_transpose, over kernels 1-5, strides 1-4 (phases without taps where k < stride),
// dilations, pads wider than the stride, output_padding, groups, batches, odd planes (every
// register tile's tails), input channels in several blocks and a fused Relu. Runtime-support
// only: built into onnxc_unit_tests (the SIMD entry falls back to the plain kernel),
// onnxc_simd_kernel_tests (-march=native) and onnxc_avx2_kernel_tests.
#include <catch2/catch.hpp>

#include <vector>

#include "onnxc/conv_transpose.h"
#include "onnxc/conv_transpose_phases_simd.h"
#include "conv_test_shapes.h"

namespace {

const onnxc_parallel_for backwards_phases{[](void*, size_t n, onnxc_task_fn task, void* context) {
                                            for (size_t i = n; i-- > 0;) task(context, i);
                                          },
                                          nullptr};

void check(const ConvParams& p, bool relu = false) {
  REQUIRE(onnxc::rt::conv_transpose_phases_simd_apply(p));
  const index_t weights = p.in_channels * (p.out_channels / p.group) * p.k_h * p.k_w;
  const std::vector<float> x = lcg_values(p.batch * p.in_channels * p.in_h * p.in_w, 1), w = lcg_values(weights, 2),
                           bias = lcg_values(p.out_channels, 3);
  const std::size_t out = static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
  std::vector<float> expected(out), packed(static_cast<std::size_t>(weights));
  onnxc::rt::conv_transpose(p, x.data(), w.data(), bias.data(), expected.data());
  if (relu)
    for (float& v : expected) v = v < 0.0f ? 0.0f : v;
  onnxc::rt::pack_conv_transpose_phase_weights(p, w.data(), packed.data());
  const onnxc::rt::Epilogue e =
      relu ? onnxc::rt::Epilogue{onnxc::rt::Activation::Relu, 0.0f, 0.0f} : onnxc::rt::kNoActivation;
  INFO("batch " << p.batch << " c " << p.in_channels << " m " << p.out_channels << " group " << p.group << " plane "
                << p.in_h << "x" << p.in_w << " k " << p.k_h << "x" << p.k_w << " stride " << p.stride_h << "x"
                << p.stride_w << " dilation " << p.dilation_w << " pad " << p.pad_h << "," << p.pad_w << " out "
                << p.out_h << "x" << p.out_w << " relu " << relu);
  for (int variant = 0; variant < 3; ++variant) {
    INFO("variant " << (variant == 0 ? "plain" : variant == 1 ? "simd" : "simd, parallel"));
    std::vector<float> y(out, 1e30f);
    if (variant == 0) onnxc::rt::conv_transpose_phases(p, x.data(), packed.data(), bias.data(), y.data(), e);
    else
      onnxc::rt::conv_transpose_phases_simd(p, x.data(), packed.data(), bias.data(), y.data(), e,
                                            variant == 2 ? &backwards_phases : nullptr);
    for (std::size_t i = 0; i < out; ++i) {
      INFO("output " << i);
      REQUIRE(y[i] == Approx(expected[i]).margin(1e-4));
    }
  }
}

}  // namespace

TEST_CASE("conv_transpose_phases matches the reference loops over kernels, strides, dilations and pads",
          "[conv_transpose]") {
  for (index_t k = 1; k <= 5; ++k)
    for (index_t stride = 1; stride <= 4; ++stride)
      for (index_t dilation = 1; dilation <= 2; ++dilation)
        for (index_t pad = 0; pad <= (k - 1) * dilation / 2 + (k > 1 ? 1 : 0); pad += (k > 2 ? 2 : 1))
          for (index_t output_padding = 0; output_padding < stride; output_padding += 2) {
            const ConvParams p = transposed2d(1, 5, 19, 1, 3, 7, k, stride, dilation, pad, output_padding);
            if (p.out_h < 1 || p.out_w < 1) continue;
            check(p);
          }
}

TEST_CASE("conv_transpose_phases: groups, batches, rectangles, channel blocks, a fused Relu", "[conv_transpose]") {
  check(transposed2d(2, 6, 9, 3, 5, 4, 3, 2, 1, 1, 1));
  check(transposed2d(1, 8, 8, 8, 9, 11, 4, 2, 1, 1, 0));   // depthwise
  check(transposed2d(1, 37, 35, 1, 9, 11, 3, 2, 1, 1, 1));  // 35 output channels: two panels of 16 and 3 left
  check(transposed2d(1, 16, 8, 1, 6, 6, 5, 2, 1, 2, 1), true);
  check(transposed2d(1, 12, 10, 1, 3, 9, 4, 3, 2, 2, 1), true);
  check(transposed2d(1, 16, 24, 1, 4, 5, 1, 3, 1, 0, 2));  // 1x1 stride 3: most outputs the bias alone
  check(transposed2d(1, 4, 4, 1, 1, 1, 4, 4, 1, 0, 1));    // one input pixel
  ConvParams rect = transposed2d(1, 6, 7, 1, 5, 8, 3, 2, 1, 1, 0);
  rect.k_h = 2;
  rect.stride_h = 1;
  rect.out_h = (rect.in_h - 1) * rect.stride_h - 2 * rect.pad_h + rect.k_h;
  check(rect, true);
  // More input channels than the stack buffer holds for one band row: blocks of channels, each
  // after the first adding into Y; the Relu once the band is complete.
  for (const ConvParams& p : {transposed2d(1, 300, 5, 1, 3, 40, 3, 2, 1, 1, 1), transposed2d(1, 200, 3, 1, 2, 70, 2, 2, 1, 0, 0)}) {
#if defined(ONNXC_SIMD)  // (the plan is the SIMD kernel's)
    REQUIRE(onnxc::rt::phases_simd_detail::plan(p).channels < p.in_channels);
#endif
    check(p, true);
  }
}

TEST_CASE("conv_transpose_phases: 1-d", "[conv_transpose]") {
  for (index_t k = 1; k <= 5; k += 2)
    for (index_t stride = 1; stride <= 3; ++stride) {
      const index_t in = 37, pad = k / 2, out = (in - 1) * stride - 2 * pad + k;
      check(ConvParams{1, 4, 6, 2, 1, 1, in, 1, 1, out, 1, 1, k, 1, 1, stride, 1, 1, 1, 0, 0, pad});
    }
}
