// rt::resize_interpolate's plane-by-plane path (only the last two axes with several taps) against
// rt::resize_interpolate_any_axes, the per-element walk over every axis, bit for bit, over odd
// sizes, linear and cubic tap counts and extrapolated coordinates; and a hand-computed blend.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "onnxc/resize.h"

using onnxc::rt::index_t;

namespace {

struct Tables {
  std::vector<index_t> out_shape, taps, start, src;
  std::vector<float> weight;
};

// Random taps for resizing `in` to `out` (row-major strides), the first tap of some output
// coordinates outside the input (-1) when `outside`.
Tables random_tables(const std::vector<index_t>& in, const std::vector<index_t>& out, const std::vector<index_t>& taps,
                     bool outside, std::uint32_t seed) {
  Tables t;
  t.out_shape = out;
  t.taps = taps;
  std::vector<index_t> stride(in.size(), 1);
  for (std::size_t d = in.size() - 1; d > 0; --d) stride[d - 1] = stride[d] * in[d];
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (std::size_t d = 0; d < in.size(); ++d) {
    t.start.push_back(static_cast<index_t>(t.src.size()));
    for (index_t o = 0; o < out[d]; ++o)
      for (index_t k = 0; k < taps[d]; ++k) {
        const bool off = outside && k == 0 && next() % 7 == 0;
        t.src.push_back(off ? -1 : static_cast<index_t>(next() % static_cast<std::uint32_t>(in[d])) * stride[d]);
        t.weight.push_back(static_cast<float>(next() % 1000) / 700.0f - 0.4f);
      }
  }
  return t;
}

std::vector<float> ramp(index_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 0.37f * static_cast<float>(i % 23) - 2.1f;
  return v;
}

}  // namespace

TEST_CASE("resize_interpolate's plane path computes the per-element walk's bits", "[resize]") {
  struct Case {
    std::vector<index_t> in, out, taps;
  };
  const std::vector<Case> cases = {
      {{1, 3, 5, 7}, {1, 3, 11, 13}, {1, 1, 2, 2}},    // linear, upsampling
      {{2, 5, 9, 6}, {2, 5, 4, 3}, {1, 1, 4, 4}},      // cubic, downsampling
      {{1, 1, 1, 1}, {1, 1, 3, 17}, {1, 1, 2, 2}},     // one input pixel
      {{3, 4, 7}, {3, 9, 15}, {1, 2, 2}},              // rank 3
      {{6, 5}, {1, 19}, {1, 4}},                        // rank 2: rows of one tap
      {{2, 3, 4, 5}, {3, 3, 5, 5}, {1, 1, 3, 1}},      // an outer axis resized with one tap, uneven taps
  };
  for (bool outside : {false, true})
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const Case& k = cases[c];
      INFO("case " << c << (outside ? " with extrapolation" : ""));
      const Tables t = random_tables(k.in, k.out, k.taps, outside, 17u + static_cast<std::uint32_t>(c));
      index_t in_n = 1, out_n = 1;
      for (index_t v : k.in) in_n *= v;
      for (index_t v : k.out) out_n *= v;
      const std::vector<float> x = ramp(in_n);
      std::vector<float> got(static_cast<std::size_t>(out_n), -9.0f), want(got);
      const int rank = static_cast<int>(k.in.size());
      onnxc::rt::resize_interpolate(x.data(), got.data(), rank, t.out_shape.data(), t.taps.data(), t.start.data(),
                                    t.src.data(), t.weight.data(), 42.0f);
      onnxc::rt::resize_interpolate_any_axes(x.data(), want.data(), rank, t.out_shape.data(), t.taps.data(),
                                             t.start.data(), t.src.data(), t.weight.data(), 42.0f);
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        REQUIRE(got[i] == want[i]);
      }
    }
}

TEST_CASE("resize_interpolate blends a hand-computed row", "[resize]") {
  // x is 2 x 2: [[0, 1], [2, 3]]; output 2 x 3 with align_corners' taps along W (weights
  // (1, 0), (0.5, 0.5), (0, 1)) and row 1 taken from input row 1 alone.
  const std::vector<float> x = {0, 1, 2, 3};
  const std::vector<index_t> out_shape = {2, 3}, taps = {1, 2}, start = {0, 2};
  const std::vector<index_t> src = {0, 2, 0, 1, 0, 1, 0, 1};
  const std::vector<float> weight = {1, 1, 1, 0, 0.5f, 0.5f, 0, 1};
  std::vector<float> y(6, -1.0f);
  onnxc::rt::resize_interpolate(x.data(), y.data(), 2, out_shape.data(), taps.data(), start.data(), src.data(),
                                weight.data(), 0.0f);
  CHECK(y == std::vector<float>{0, 0.5f, 1, 2, 2.5f, 3});
}
