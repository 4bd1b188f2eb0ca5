// rt::conv_channel_lanes (onnxc/conv_channel_lanes.h) against the reference loop nest rt::conv:
// 1 x 1 layers read in place and k x k / strided ones through im2col blocks narrower than the
// plane, on planes 1 x 1 to 14 x 14, channel counts that leave partial vectors and partial
// panels (odd, below a vector, between one and two), groups, every tile height, and a fused
// Relu; serially and with a parallel-for (tasks over ranges of vector pairs of channels, and with
// fewer pairs than rt::kChannelLaneTasks over ranges of positions too). Built native
// (onnxc_simd_kernel_tests) and AVX2 (onnxc_avx2_kernel_tests: 8-lane vectors, tiles of 6
// positions). Ramp values are multiples of 1/8 and every partial sum is exact, so the
// outputs must be equal.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <vector>

#include "onnxc/conv_channel_lanes.h"
#include "conv_test_shapes.h"

#if defined(ONNXC_SIMD)  // the kernel is xsimd's only (onnxc_unit_tests builds without it)

namespace {

std::string shape_of(const ConvParams& p, index_t block) {
  std::ostringstream o;
  o << p.in_channels << " -> " << p.out_channels << " in " << p.group << " groups, " << p.in_h << "x" << p.in_w
    << " -> " << p.out_h << "x" << p.out_w << ", kernel " << p.k_h << ", stride " << p.stride_w << ", pad " << p.pad_w
    << ", im2col block " << block;
  return o.str();
}

// A parallel-for that runs the tasks last first (every task must be independent of the others).
const onnxc_parallel_for backwards{[](void*, size_t n, onnxc_task_fn task, void* context) {
                                     for (size_t i = n; i-- > 0;) task(context, i);
                                   },
                                   nullptr};

void check(const ConvParams& p, index_t block, const onnxc::rt::Epilogue& e) {
  using namespace onnxc::rt;
  INFO(shape_of(p, block));
  const ConvParams q = conv_group_params(p);
  const index_t k = conv_gemm_k(q);
  const auto x = ramp(p.batch * p.in_channels * p.in_h * p.in_w, 0.5f), w = ramp(p.out_channels * k, 0.25f);
  const auto bias = ramp(p.out_channels, 1.0f);
  std::vector<float> packed(static_cast<std::size_t>(p.group * channel_lanes_group_floats(p)), -7.0f);
  pack_channel_lane_weights(w.data(), p.out_channels, p.group, k, packed.data());
  const std::size_t out = static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
  std::vector<float> expected(out), y(out, -1.0f);
  conv(p, x.data(), w.data(), bias.data(), expected.data());
  if (e.activation == Activation::Relu)
    for (float& v : expected) v = std::max(v, 0.0f);
  std::vector<float> scratch(static_cast<std::size_t>(conv_gemm_scratch_floats(q, block)) + 1, 3.0f);
  for (Parallel parallel : {static_cast<Parallel>(nullptr), &backwards}) {
    INFO("parallel " << (parallel != nullptr));
    std::fill(y.begin(), y.end(), -1.0f);
    conv_channel_lanes(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block, e, parallel);
    REQUIRE(y == expected);
  }
}

}  // namespace

TEST_CASE("conv_channel_lanes computes small-plane convolutions as the reference does") {
  using onnxc::rt::kNoActivation;
  const onnxc::rt::Epilogue relu{onnxc::rt::Activation::Relu, 0.0f, 0.0f};
  // 1 x 1, read in place: planes 1 x 1 to 14 x 14 (1 to 196 positions: every tile height),
  // channels below a vector, odd, one and a half panels, many panels.
  for (index_t hw : {1, 2, 3, 4, 5, 7, 9, 11, 14})
    for (index_t m : {1, 5, 16, 24, 33, 40, 67}) check(conv2d(13, m, 1, hw, 1, 1, 0, 1), 96, kNoActivation);
  check(conv2d(400, 400, 1, 7, 1, 1, 0, 1), 96, relu);  // regnet_x_400mf's layer
  check(conv2d(160, 160, 1, 14, 1, 1, 0, 1), 96, kNoActivation);
  // More vector pairs than tasks (AVX-512: 19 pairs, AVX2: 38): tasks of one or two pairs, whole planes.
  check(conv2d(8, 600, 1, 3, 1, 1, 0, 1), 96, relu);
  // Through im2col blocks: the whole plane, and blocks narrower than it (some partial).
  for (index_t block : {5, 13, 96}) {
    check(conv2d(19, 37, 1, 7, 3, 1, 1, 1), block, relu);     // 3 x 3 'same' onto 7 x 7
    check(conv2d(24, 50, 1, 14, 3, 2, 1, 1), block, kNoActivation);  // deep stride 2 onto 7 x 7
    check(conv2d(16, 21, 1, 9, 1, 2, 0, 1), block, kNoActivation);   // 1 x 1 stride 2
    check(conv2d(8, 17, 1, 6, 3, 1, 2, 2), block, relu);      // dilation 2
  }
  // Deep products whose input spans more than kChannelLaneBlockFloats (128 K floats): blocks of
  // positions of equal whole tiles (81 positions: 48 + 33), each streaming all the weights.
  check(conv2d(2048, 20, 1, 9, 1, 1, 0, 1), 96, relu);
  check(conv2d(300, 18, 1, 9, 3, 1, 1, 1), 81, kNoActivation);
  // Groups: whole vectors per group, partial panels per group, 1 x 1 and 3 x 3.
  check(conv2d(64, 64, 4, 7, 1, 1, 0, 1), 96, kNoActivation);
  check(conv2d(30, 42, 3, 5, 3, 1, 1, 1), 96, relu);
  check(conv2d(48, 48, 3, 14, 3, 2, 1, 1), 20, kNoActivation);
  // Two images.
  ConvParams two = conv2d(12, 20, 2, 4, 1, 1, 0, 1);
  two.batch = 2;
  check(two, 96, relu);
}

#endif  // ONNXC_SIMD
