// Grouped convolution through the one-group kernels (onnxc/conv_grouped.h) against the reference
// loop nest rt::conv with the same groups. Depends on runtime-support only: built into
// onnxc_unit_tests (portable kernels) and onnxc_simd_kernel_tests (ONNXC_SIMD, -march=native).
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "onnxc/conv.h"
#include "onnxc/conv_grouped.h"
#include "onnxc/thread_pool.h"
#include "conv_test_shapes.h"

namespace {

// A 1-d convolution geometry over a row of w.
ConvParams grouped1d(index_t c, index_t m, index_t group, index_t w, index_t k, index_t stride, index_t pad,
                     index_t dilation) {
  const index_t out = (w + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  return ConvParams{1, c, m, group, 1, 1, w, 1, 1, out, 1, 1, k, 1, 1, stride, 1, 1, dilation, 0, 0, pad};
}

std::string describe(const ConvParams& p) {
  std::ostringstream s;
  s << "batch " << p.batch << ", " << p.in_channels << " -> " << p.out_channels << " channels in " << p.group
    << " groups, plane " << p.in_h << "x" << p.in_w << ", kernel " << p.k_h << "x" << p.k_w << ", stride "
    << p.stride_w << ", pad " << p.pad_w << ", dilation " << p.dilation_w;
  return s.str();
}

struct GroupedCase {
  std::vector<float> x, w, bias, expected, packed, direct_packed;
};

// Input, weights and bias, the reference output, and the weights packed group by group as the
// compiler packs them for the matrix product and for the packed direct kernel.
GroupedCase grouped_case(const ConvParams& p) {
  const ConvParams q = onnxc::rt::conv_group_params(p);
  const index_t k = onnxc::rt::conv_gemm_k(q), weights = p.out_channels * k;
  GroupedCase c{ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), ramp(weights, 0.125f), ramp(p.out_channels, 1.0f),
                std::vector<float>(static_cast<std::size_t>(p.batch * p.out_channels * onnxc::rt::conv_gemm_n(p))),
                std::vector<float>(static_cast<std::size_t>(weights)), std::vector<float>(static_cast<std::size_t>(weights))};
  onnxc::rt::conv(p, c.x.data(), c.w.data(), c.bias.data(), c.expected.data());
  for (index_t g = 0; g < p.group; ++g) {
    const index_t at = g * q.out_channels * k;
    onnxc::rt::pack_weights(c.w.data() + at, q.out_channels, k, c.packed.data() + at);
    onnxc::rt::pack_direct_weights(c.w.data() + at, q.out_channels, k, c.direct_packed.data() + at);
  }
  return c;
}

void require_matches(const std::vector<float>& y, const std::vector<float>& expected, bool relu) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float want = relu && expected[i] < 0 ? 0.0f : expected[i];
    INFO("output " << i);
    REQUIRE(y[i] == Approx(want).margin(1e-4));
  }
}

std::vector<ConvParams> grouped_shapes() {
  ConvParams batch2 = conv2d(12, 18, 3, 9, 3, 1, 1, 1);
  batch2.batch = 2;
  return {
      // group widths 2, 3, 8, 16 (regnet's), 24; odd channel counts and output widths per group
      conv2d(8, 8, 4, 11, 3, 1, 1, 1), conv2d(9, 15, 3, 13, 3, 2, 1, 1), conv2d(32, 32, 4, 17, 3, 1, 1, 1),
      conv2d(32, 32, 2, 23, 3, 2, 1, 1), conv2d(48, 48, 3, 14, 3, 1, 1, 1), conv2d(48, 24, 2, 10, 3, 2, 1, 1),
      // kernels 1, 5 and 7, dilation 2, padding wider than the kernel's reach, no padding
      conv2d(32, 64, 4, 12, 1, 1, 0, 1), conv2d(20, 20, 5, 15, 5, 1, 2, 1), conv2d(16, 16, 2, 19, 7, 2, 3, 1),
      conv2d(24, 24, 3, 16, 3, 1, 2, 2), conv2d(12, 12, 2, 9, 3, 1, 0, 1), batch2,
      // 1-d: stride 1 and 2, kernel 9, dilation 2
      grouped1d(16, 16, 2, 70, 3, 1, 1, 1), grouped1d(32, 32, 4, 61, 9, 2, 4, 1), grouped1d(12, 18, 3, 40, 5, 1, 4, 2)};
}

const onnxc_parallel_for backwards{[](void*, size_t n, onnxc_task_fn task, void* context) {
                                     for (size_t i = n; i-- > 0;) task(context, i);
                                   },
                                   nullptr};

}  // namespace

TEST_CASE("conv_each_group with conv_gemm matches the grouped reference convolution") {
  for (const ConvParams& p : grouped_shapes()) {
    INFO(describe(p));
    GroupedCase c = grouped_case(p);
    const ConvParams q = onnxc::rt::conv_group_params(p);
    std::vector<float> y(c.expected.size());
    for (index_t block : {onnxc::rt::packed_gemm_block_cols(onnxc::rt::conv_gemm_k(q)), index_t{16}, index_t{5}}) {
      INFO("im2col block " << block);
      std::vector<float> scratch(static_cast<std::size_t>(onnxc::rt::conv_gemm_scratch_floats(q, block)) + 1);
      for (onnxc::rt::Parallel parallel : {static_cast<onnxc::rt::Parallel>(nullptr), &backwards}) {
        std::fill(y.begin(), y.end(), -99.0f);
        onnxc::rt::conv_each_group(
            p, c.x.data(), c.packed.data(), c.bias.data(), y.data(),
            [&](const ConvParams& g, const float* xg, const float* wg, const float* bg, float* yg) {
              onnxc::rt::conv_gemm(g, xg, wg, bg, yg, scratch.data(), block, {onnxc::rt::Activation::Relu, 0, 0},
                                   parallel);
            });
        require_matches(y, c.expected, true);
      }
    }
  }
}

TEST_CASE("conv_each_group_in_slots: groups as the tasks of two threads, an im2col slot each") {
  onnxc::ThreadPool pool(2);
  const onnxc_parallel_for two_threads = pool.parallel_for();
  for (const ConvParams& p : grouped_shapes()) {
    INFO(describe(p));
    GroupedCase c = grouped_case(p);
    const ConvParams q = onnxc::rt::conv_group_params(p);
    const index_t block = onnxc::rt::packed_gemm_block_cols(onnxc::rt::conv_gemm_k(q));
    const index_t slot_floats = onnxc::rt::conv_gemm_scratch_floats(q, block);
    std::vector<float> y(c.expected.size());
    for (index_t slots : {index_t{1}, index_t{3}, index_t{8}}) {
      INFO(slots << " slots");
      std::vector<float> scratch(static_cast<std::size_t>(slot_floats * slots) + 1);
      for (onnxc::rt::Parallel parallel : {static_cast<onnxc::rt::Parallel>(nullptr), &backwards, &two_threads}) {
        std::fill(y.begin(), y.end(), -99.0f);
        std::atomic<bool> slots_in_range{true};
        onnxc::rt::conv_each_group_in_slots(
            p, c.x.data(), c.packed.data(), c.bias.data(), y.data(), slots,
            [&](const ConvParams& g, const float* xg, const float* wg, const float* bg, float* yg, index_t slot) {
              if (slot < 0 || slot >= slots) slots_in_range = false;
              onnxc::rt::conv_gemm(g, xg, wg, bg, yg, scratch.data() + slot * slot_floats, block,
                                   {onnxc::rt::Activation::Relu, 0, 0});
            },
            parallel);
        REQUIRE(slots_in_range);
        require_matches(y, c.expected, true);
      }
    }
  }
}

TEST_CASE("conv_each_group with the packed direct kernel matches the grouped reference, groups split into tasks") {
  for (const ConvParams& p : grouped_shapes()) {
    INFO(describe(p));
    GroupedCase c = grouped_case(p);
    std::vector<float> y(c.expected.size());
    for (onnxc::rt::Parallel parallel : {static_cast<onnxc::rt::Parallel>(nullptr), &backwards}) {
      std::fill(y.begin(), y.end(), -99.0f);
      onnxc::rt::conv_each_group(
          p, c.x.data(), c.direct_packed.data(), c.bias.data(), y.data(),
          [](const ConvParams& g, const float* xg, const float* wg, const float* bg, float* yg) {
            onnxc::rt::conv_direct_packed(g, xg, wg, bg, yg);
          },
          parallel);
      require_matches(y, c.expected, false);
    }
  }
}

TEST_CASE("conv_each_group with the product reading the input in place matches the grouped reference") {
  if (!onnxc::rt::kShiftedInputProduct) return;  // AVX-512 only; its stub is never called elsewhere
  int computed = 0;
  for (const ConvParams& p : grouped_shapes()) {
    const ConvParams q = onnxc::rt::conv_group_params(p);
    if (!onnxc::rt::conv_shape_reads_shifted_input(q)) continue;
    INFO(describe(p));
    GroupedCase c = grouped_case(p);
    std::vector<float> y(c.expected.size(), -99.0f);
    onnxc::rt::conv_each_group(
        p, c.x.data(), c.packed.data(), c.bias.data(), y.data(),
        [](const ConvParams& g, const float* xg, const float* wg, const float* bg, float* yg) {
          onnxc::rt::conv_shifted(g, xg, wg, bg, yg, {onnxc::rt::Activation::None, 0, 0});
        },
        &backwards);
    require_matches(y, c.expected, false);
    ++computed;
  }
  REQUIRE(computed >= 4);
}

TEST_CASE("conv_group_params is one group of one image") {
  const ConvParams q = onnxc::rt::conv_group_params(conv2d(400, 200, 25, 7, 3, 1, 1, 1));
  CHECK(q.batch == 1);
  CHECK(q.group == 1);
  CHECK(q.in_channels == 16);
  CHECK(q.out_channels == 8);
  CHECK(onnxc::rt::conv_gemm_k(q) == 16 * 9);
}
