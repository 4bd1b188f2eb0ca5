// rt::resize_interpolate's plane-by-plane path (only the last two axes with several taps) against
// rt::resize_interpolate_any_axes, the per-element walk over every axis, bit for bit, over odd
// sizes, linear and cubic tap counts and extrapolated coordinates; and a hand-computed blend.
// rt::resize_interpolate_rows (separable: resampled rows in scratch, blended; the xsimd blend
// where this file is compiled with ONNXC_SIMD) against the per-element walk to float rounding,
// over ranks 1 to 5, every axis with several taps, tails of every vector width and rows kept
// across output rows; rt::resize_nearest's row copies against a gather written here.
#include <catch2/catch.hpp>

#include <cmath>
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
#if defined(__FMA__)
        // Compiled with FMA (the xsimd test binaries), the compiler contracts the two loops'
        // multiply-adds differently: same to rounding, not to the bit.
        REQUIRE(std::fabs(got[i] - want[i]) <= 1e-6f * (1.0f + std::fabs(want[i])));
#else
        REQUIRE(got[i] == want[i]);
#endif
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

namespace {

struct Shapes {
  std::vector<index_t> in, out, taps;
};

// Resize cases with several taps on any axis: each computed by rt::resize_interpolate_rows and
// by the per-element walk, in and outside the input.
const std::vector<Shapes> kRowsCases = {
    {{1, 3, 5, 7}, {1, 3, 11, 13}, {1, 1, 2, 2}},       // bilinear, upsampling
    {{1, 21, 7, 7}, {1, 21, 56, 56}, {1, 1, 2, 2}},     // bilinear x8: 8 output rows share a pair
    {{2, 5, 9, 6}, {2, 5, 4, 3}, {1, 1, 4, 4}},         // cubic, downsampling
    {{1, 4, 1, 1}, {1, 4, 5, 37}, {1, 1, 2, 2}},        // 1 x 1 -> H x W
    {{3, 4, 7}, {3, 9, 15}, {1, 2, 2}},                 // rank 3
    {{19}, {45}, {2}},                                  // rank 1
    {{6, 5}, {1, 19}, {1, 4}},                          // rank 2: rows of one tap
    {{2, 3, 4, 5}, {3, 3, 5, 5}, {1, 1, 3, 1}},         // an outer axis resized with one tap, uneven taps
    {{1, 2, 3, 4, 5}, {1, 2, 7, 9, 33}, {1, 1, 2, 2, 2}},  // 5-D trilinear: 4 vertical taps
    {{1, 2, 3, 4, 6}, {1, 2, 2, 3, 17}, {1, 1, 4, 4, 4}},  // 5-D tricubic: 16 vertical taps
    {{2, 3, 8, 9}, {2, 3, 8, 31}, {1, 1, 1, 6}},        // width only (antialias-wide taps)
    {{1, 2, 9, 16}, {1, 2, 3, 16}, {1, 1, 5, 1}},       // height only, width as it is
};

index_t count(const std::vector<index_t>& v) {
  index_t n = 1;
  for (index_t d : v) n *= d;
  return n;
}

}  // namespace

TEST_CASE("resize_interpolate_rows blends resampled rows as the per-element walk does", "[resize]") {
  for (bool outside : {false, true})
    for (std::size_t c = 0; c < kRowsCases.size(); ++c) {
      const Shapes& k = kRowsCases[c];
      INFO("case " << c << (outside ? " with extrapolation" : ""));
      const Tables t = random_tables(k.in, k.out, k.taps, outside, 91u + static_cast<std::uint32_t>(c));
      const std::vector<float> x = ramp(count(k.in));
      std::vector<float> got(static_cast<std::size_t>(count(k.out)), -9.0f), want(got);
      const int rank = static_cast<int>(k.in.size());
      std::vector<unsigned char> scratch(static_cast<std::size_t>(
          onnxc::rt::resize_rows_scratch_bytes<float>(rank, t.out_shape.data(), t.taps.data())));
      onnxc::rt::resize_interpolate_rows(x.data(), got.data(), rank, t.out_shape.data(), t.taps.data(),
                                         t.start.data(), t.src.data(), t.weight.data(), 42.0f, scratch.data());
      onnxc::rt::resize_interpolate_any_axes(x.data(), want.data(), rank, t.out_shape.data(), t.taps.data(),
                                             t.start.data(), t.src.data(), t.weight.data(), 42.0f);
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        REQUIRE(std::fabs(got[i] - want[i]) <= 1e-5f * (1.0f + std::fabs(want[i])));
      }
      // Cut into tasks (3 and 5 ranges of output rows, each with its own scratch slot), run
      // last first through a parallel-for, and in turn without one: the same bits as one task.
      const index_t slot = onnxc::rt::resize_rows_slot_bytes<float>(rank, t.out_shape.data(), t.taps.data());
      const onnxc_parallel_for backwards{[](void*, size_t n, onnxc_task_fn task, void* context) {
                                           for (size_t i = n; i-- > 0;) task(context, i);
                                         },
                                         nullptr};
      for (index_t tasks : {3, 5})
        for (const onnxc_parallel_for* parallel : {static_cast<const onnxc_parallel_for*>(nullptr), &backwards}) {
          INFO(tasks << " tasks" << (parallel ? " backwards" : " in turn"));
          std::vector<unsigned char> slots(static_cast<std::size_t>(tasks * slot));
          std::vector<float> split(got.size(), -9.0f);
          onnxc::rt::resize_interpolate_rows(x.data(), split.data(), rank, t.out_shape.data(), t.taps.data(),
                                             t.start.data(), t.src.data(), t.weight.data(), 42.0f, slots.data(),
                                             parallel, tasks);
          REQUIRE(split == got);
        }
    }
}

TEST_CASE("resize_interpolate_rows takes the identity width table and integer data", "[resize]") {
  // Height x3 linear (taps 2), width copied (src[o] = o, weight 1): the input rows are blended
  // as they are; int32 data blends in float and truncates.
  const std::vector<index_t> out_shape = {6, 4}, taps = {2, 1}, start = {0, 12};
  std::vector<index_t> src;
  std::vector<float> weight;
  for (index_t o = 0; o < 6; ++o) {
    src.push_back((o / 3) * 4);
    src.push_back(4);  // rows 3 to 5 list input row 1 twice
    weight.push_back(1.0f - static_cast<float>(o % 3) / 3.0f);
    weight.push_back(static_cast<float>(o % 3) / 3.0f);
  }
  for (index_t o = 0; o < 4; ++o) {
    src.push_back(o);
    weight.push_back(1.0f);
  }
  const std::vector<float> x = {0, 1, 2, 3, 30, 31, 32, 33};
  std::vector<float> y(24, -1.0f);
  std::vector<unsigned char> scratch(
      static_cast<std::size_t>(onnxc::rt::resize_rows_scratch_bytes<float>(2, out_shape.data(), taps.data())));
  onnxc::rt::resize_interpolate_rows(x.data(), y.data(), 2, out_shape.data(), taps.data(), start.data(), src.data(),
                                     weight.data(), 0.0f, scratch.data());
  // Row o: x row o / 3 weighted 1 - (o % 3) / 3 plus x row 1 weighted (o % 3) / 3.
  for (index_t o = 0; o < 6; ++o)
    for (index_t i = 0; i < 4; ++i) {
      const double a = 1.0 - static_cast<double>(o % 3) / 3.0, r = static_cast<double>(o / 3);
      const double want = a * (30.0 * r + static_cast<double>(i)) + (1.0 - a) * (30.0 + static_cast<double>(i));
      CHECK(std::fabs(y[static_cast<std::size_t>(o * 4 + i)] - want) < 1e-5);
    }
  const std::vector<std::int32_t> xi = {0, 10, 20, 30, 100, 110, 120, 130};
  std::vector<std::int32_t> yi(24, -1);
  onnxc::rt::resize_interpolate_rows(xi.data(), yi.data(), 2, out_shape.data(), taps.data(), start.data(), src.data(),
                                     weight.data(), std::int32_t{0}, scratch.data());
  CHECK(yi[4] == 33);  // row 1: 2/3 * 0 + 1/3 * 100 = 33.3, truncated
  CHECK(yi[11] == 96);  // row 2, column 3: 1/3 * 30 + 2/3 * 130 = 96.67, truncated
  CHECK(yi[23] == 130);
}

TEST_CASE("resize_nearest's row copies give the gathered rows", "[resize]") {
  // Nearest tables (one tap): rows repeated (upsampling), rows outside the input, a last axis
  // copied as it is, gathered, or with columns outside.
  struct Case {
    std::vector<index_t> in, out;
    int last;  // 0: gathered, 1: as it is, 2: some columns outside
  };
  const std::vector<Case> cases = {{{2, 3, 5, 7}, {2, 3, 15, 14}, 0}, {{1, 4, 6, 9}, {1, 4, 18, 9}, 1},
                                   {{2, 5, 6}, {3, 11, 13}, 2},       {{13}, {40}, 0},
                                   {{1, 2, 3, 4, 5}, {1, 2, 6, 8, 5}, 1}};
  for (bool outside : {false, true})
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const Case& k = cases[c];
      INFO("case " << c << (outside ? " with rows outside" : ""));
      const std::size_t rank = k.in.size();
      std::vector<index_t> stride(rank, 1), start, src;
      for (std::size_t d = rank - 1; d > 0; --d) stride[d - 1] = stride[d] * k.in[d];
      std::uint32_t seed = 5u + static_cast<std::uint32_t>(c);
      auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
      for (std::size_t d = 0; d < rank; ++d) {
        start.push_back(static_cast<index_t>(src.size()));
        for (index_t o = 0; o < k.out[d]; ++o) {
          index_t i = o * k.in[d] / k.out[d];  // floor: runs of equal rows
          if (d + 1 == rank && k.last == 0) i = static_cast<index_t>(next() % static_cast<std::uint32_t>(k.in[d]));
          bool off = d + 1 < rank ? outside && next() % 5 == 0 : k.last == 2 && next() % 4 == 0;
          src.push_back(off ? -1 : i * stride[d]);
        }
      }
      const std::vector<float> x = ramp(count(k.in));
      std::vector<float> got(static_cast<std::size_t>(count(k.out)), -9.0f);
      onnxc::rt::resize_nearest(x.data(), got.data(), static_cast<int>(rank), k.out.data(), start.data(), src.data(),
                                42.0f);
      // The gather: every output element from its coordinates' offsets.
      std::vector<index_t> idx(rank, 0);
      for (std::size_t e = 0; e < got.size(); ++e) {
        index_t offset = 0;
        bool in = true;
        for (std::size_t d = 0; d < rank; ++d) {
          const index_t s = src[static_cast<std::size_t>(start[d] + idx[d])];
          in = in && s >= 0;
          offset += s;
        }
        INFO("element " << e);
        REQUIRE(got[e] == (in ? x[static_cast<std::size_t>(offset)] : 42.0f));
        for (std::size_t d = rank; d-- > 0;) {
          if (++idx[d] < k.out[d]) break;
          idx[d] = 0;
        }
      }
    }
}
