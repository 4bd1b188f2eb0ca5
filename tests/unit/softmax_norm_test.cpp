// Softmax, LogSoftmax and LayerNormalization (onnxc/normalization.h) against float64 references
// computed here, over rows that end in vector tails, lanes across `inner`, -inf masks and large
// magnitudes; and the SIMD exponential over the whole float range. This file depends on
// runtime-support only: it is built into onnxc_unit_tests (the portable kernels) and, with
// ONNXC_SIMD, into onnxc_simd_kernel_tests (-march=native) and onnxc_avx2_kernel_tests.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "onnxc/activation.h"
#include "onnxc/math_simd.h"
#include "onnxc/normalization.h"

namespace {

using onnxc::rt::index_t;

// Distance in representable floats (both finite, or equal).
[[maybe_unused]] int64_t ulp_distance(float a, float b) {
  if (a == b) return 0;
  auto ordered = [](float v) {
    int32_t i;
    std::memcpy(&i, &v, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Random rows with a few -inf (masked) entries and some large negatives.
std::vector<float> softmax_input(index_t size, unsigned seed, float spread) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-spread, spread);
  std::vector<float> x(static_cast<std::size_t>(size));
  for (auto& v : x) v = u(rng);
  for (std::size_t i = 3; i < x.size(); i += 11) x[i] = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 5; i < x.size(); i += 13) x[i] = -1e30f;
  return x;
}

void check_softmax(index_t outer, index_t n, index_t inner, float spread, bool log, bool in_place) {
  const index_t size = outer * n * inner;
  std::vector<float> x = softmax_input(size, static_cast<unsigned>(size + n), spread);
  // A lane that is not wholly masked: its first element finite.
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) x[static_cast<std::size_t>(o * n * inner + i)] = 0.5f;
  std::vector<float> y(x.size());
  if (in_place) y = x;
  const float* src = in_place ? y.data() : x.data();
  if (log) onnxc::rt::log_softmax(src, y.data(), outer, n, inner);
  else onnxc::rt::softmax(src, y.data(), outer, n, inner);
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) {
      auto at = [&](index_t j) { return static_cast<std::size_t>((o * n + j) * inner + i); };
      double mx = -INFINITY, sum = 0;
      for (index_t j = 0; j < n; ++j) mx = std::max(mx, static_cast<double>(x[at(j)]));
      for (index_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(x[at(j)]) - mx);
      for (index_t j = 0; j < n; ++j) {
        const double d = static_cast<double>(x[at(j)]) - mx;
        const double expected = log ? d - std::log(sum) : std::exp(d) / sum;
        INFO("outer " << o << " lane " << i << " j " << j << " of " << n << " x " << x[at(j)]);
        // x - max rounds to float in the kernels (as in ONNX Runtime): up to half an ulp of d.
        const double rounding = std::isinf(d) ? 0.0 : std::fabs(d) * 6e-8;
        // LogSoftmax's offset max + log(sum) rounds too, and the difference with x.
        const double offset_rounding = std::isinf(d) ? 0.0 : (std::fabs(x[at(j)]) + std::fabs(mx)) * 1.2e-7;
        const double tolerance = log ? 1e-6 * std::fabs(expected) + offset_rounding + 1e-6
                                     : (2e-6 + rounding) * std::fabs(expected) + 1e-37;
        if (std::isinf(expected)) REQUIRE(y[at(j)] == static_cast<float>(expected));
        else REQUIRE(std::fabs(y[at(j)] - expected) <= tolerance);
      }
    }
}

}  // namespace

TEST_CASE("softmax and log_softmax match float64 over rows, vector tails and lanes across inner") {
  for (bool log : {false, true})
    for (index_t n : {1, 2, 5, 15, 16, 17, 37, 100, 197, 512, 1500})
      for (index_t inner : {1, 3, 16, 21}) {
        INFO("log " << log << " n " << n << " inner " << inner);
        check_softmax(3, n, inner, 8.0f, log, false);
        check_softmax(2, n, inner, 80.0f, log, true);
      }
}

TEST_CASE("softmax sums long rows in blocks: a 300000-long row stays within float64's") {
  check_softmax(1, 300000, 1, 4.0f, false, false);
  check_softmax(1, 300000, 1, 4.0f, true, false);
}

TEST_CASE("softmax of a row with a NaN is NaN; a row of -inf but one gives one-hot") {
  std::vector<float> x = {1.0f, std::nanf(""), 2.0f, 3.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
                          0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> y(x.size());
  onnxc::rt::softmax(x.data(), y.data(), 1, static_cast<index_t>(x.size()), 1);
  for (float v : y) REQUIRE(std::isnan(v));
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> m(19, ninf);
  m[17] = -3.0f;
  onnxc::rt::softmax(m.data(), y.data(), 1, 19, 1);
  for (std::size_t j = 0; j < y.size(); ++j) REQUIRE(y[j] == (j == 17 ? 1.0f : 0.0f));
  onnxc::rt::log_softmax(m.data(), y.data(), 1, 19, 1);
  for (std::size_t j = 0; j < y.size(); ++j) REQUIRE(y[j] == (j == 17 ? 0.0f : ninf));
}

#if defined(ONNXC_SIMD)
TEST_CASE("exp_vec is within 2 ulp of float64's exp over the whole float range") {
  using onnxc::rt::vfloat;
  using onnxc::rt::kFloatLanes;
  std::vector<float> xs;
  // Every 61st float from -110 to 90 (through the subnormal results and the overflow).
  auto every_61st = [&xs](float from, float to) {  // from and to of one sign, |from| < |to|
    uint32_t b0, b1;
    std::memcpy(&b0, &from, sizeof b0);
    std::memcpy(&b1, &to, sizeof b1);
    for (uint32_t b = b0; b < b1; b += 61) {
      float v;
      std::memcpy(&v, &b, sizeof v);
      xs.push_back(v);
    }
  };
  every_61st(-0.0f, -110.0f);
  every_61st(0.0f, 90.0f);
  for (float v : {88.72283f, 88.7229f, 88.5f, -87.33654f, -87.4f, -103.97f, -103.98f, -104.0f, -149.0f * 0.6931472f})
    xs.push_back(v);
  while (xs.size() % static_cast<std::size_t>(kFloatLanes) != 0) xs.push_back(0.0f);
  int64_t worst = 0;
  float worst_x = 0;
  for (std::size_t i = 0; i < xs.size(); i += static_cast<std::size_t>(kFloatLanes)) {
    alignas(64) float out[64];
    onnxc::rt::exp_vec(vfloat::load_unaligned(&xs[i])).store_aligned(out);
    for (index_t l = 0; l < kFloatLanes; ++l) {
      const float x = xs[i + static_cast<std::size_t>(l)];
      const float expected = static_cast<float>(std::exp(static_cast<double>(x)));
      if (std::isinf(expected)) {
        REQUIRE(std::isinf(out[l]));
        continue;
      }
      const int64_t d = ulp_distance(out[l], expected);
      if (d > worst) {
        worst = d;
        worst_x = x;
      }
    }
  }
  INFO("worst at x = " << worst_x);
  REQUIRE(worst <= 2);
  // The masks and NaN.
  alignas(64) float in[64], out[64];
  for (index_t l = 0; l < kFloatLanes; ++l) in[l] = l % 2 ? -std::numeric_limits<float>::infinity() : std::nanf("");
  onnxc::rt::exp_vec(vfloat::load_aligned(in)).store_aligned(out);
  for (index_t l = 0; l < kFloatLanes; ++l) {
    if (l % 2) REQUIRE(out[l] == 0.0f);
    else REQUIRE(std::isnan(out[l]));
  }
}
#endif

namespace {

void check_layer_norm(index_t outer, index_t n, index_t scale_n, bool with_bias, float offset) {
  std::mt19937 rng(static_cast<unsigned>(outer * 131 + n));
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> x(static_cast<std::size_t>(outer * n)), scale(static_cast<std::size_t>(scale_n)),
      bias(static_cast<std::size_t>(scale_n)), y(x.size()), mean(static_cast<std::size_t>(outer)),
      inv_std(static_cast<std::size_t>(outer));
  for (auto& v : x) v = offset + u(rng);
  for (auto& v : scale) v = u(rng);
  for (auto& v : bias) v = u(rng);
  onnxc::rt::layer_norm<float>(x.data(), scale.data(), with_bias ? bias.data() : nullptr, y.data(), mean.data(),
                               inv_std.data(), outer, n, scale_n, scale_n, 1e-5f);
  for (index_t o = 0; o < outer; ++o) {
    double m = 0, var = 0;
    for (index_t j = 0; j < n; ++j) m += x[static_cast<std::size_t>(o * n + j)];
    m /= static_cast<double>(n);
    for (index_t j = 0; j < n; ++j) {
      const double d = x[static_cast<std::size_t>(o * n + j)] - m;
      var += d * d;
    }
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(n) + 1e-5);
    REQUIRE(mean[static_cast<std::size_t>(o)] == Approx(m).epsilon(1e-6).margin(1e-6));
    REQUIRE(inv_std[static_cast<std::size_t>(o)] == Approx(inv).epsilon(1e-5));
    for (index_t j = 0; j < n; ++j) {
      const std::size_t i = static_cast<std::size_t>(o * n + j), p = scale_n == 1 ? 0 : static_cast<std::size_t>(j);
      const double expected = (x[i] - m) * inv * scale[p] + (with_bias ? bias[p] : 0.0);
      INFO("row " << o << " j " << j << " of " << n);
      // x - mean rounds to float around a large offset (and the float mean is off by its ulp too):
      // three times the offset's half ulp, scaled by inv_std and scale.
      const double tolerance = (1e-5 + std::fabs(offset) * 3.6e-7 * inv) * (1.0 + std::fabs(scale[p]));
      REQUIRE(std::fabs(y[i] - expected) <= tolerance);
    }
  }
}

}  // namespace

TEST_CASE("layer_norm matches float64 over rows with vector tails, broadcast scale, no bias and a large mean") {
  for (index_t n : {1, 3, 16, 17, 37, 192, 197, 768, 1029}) {
    check_layer_norm(5, n, n, true, 0.0f);
    check_layer_norm(2, n, 1, false, 0.0f);
    check_layer_norm(3, n, n, true, 1000.0f);
  }
  // A long row: the sums go in blocks.
  check_layer_norm(1, 465708, 465708, true, 1.0f);
}

#if defined(ONNXC_SIMD)
TEST_CASE("erf_vec is within 3 ulp of float64's erf, and the GELU epilogue within float64's") {
  using onnxc::rt::vfloat;
  using onnxc::rt::kFloatLanes;
  std::vector<float> xs;
  // Every 7th float of magnitude up to 6 (both signs), then the branch points, tiny ones, infinities.
  uint32_t top;
  const float six = 6.0f;
  std::memcpy(&top, &six, sizeof top);
  for (uint32_t b = 0; b < top; b += 7) {
    float v;
    std::memcpy(&v, &b, sizeof v);
    xs.push_back(v);
    xs.push_back(-v);
  }
  for (float v : {1.0f, 0.99999994f, 1.0000001f, 4.0f, 3.9999998f, 10.0f, 1e-30f, -0.0f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()})
    xs.push_back(v);
  while (xs.size() % static_cast<std::size_t>(kFloatLanes) != 0) xs.push_back(0.0f);
  int64_t worst = 0;
  float worst_x = 0;
  double worst_gelu = 0;
  for (std::size_t i = 0; i < xs.size(); i += static_cast<std::size_t>(kFloatLanes)) {
    alignas(64) float out[64], gelu[64];
    const vfloat v = vfloat::load_unaligned(&xs[i]);
    onnxc::rt::erf_vec(v).store_aligned(out);
    onnxc::rt::activate(onnxc::rt::Epilogue{onnxc::rt::Activation::Gelu, 0, 0}, v).store_aligned(gelu);
    for (index_t l = 0; l < kFloatLanes; ++l) {
      const double x = xs[i + static_cast<std::size_t>(l)];
      const float expected = static_cast<float>(std::erf(x));
      REQUIRE(std::signbit(out[l]) == std::signbit(expected));
      const int64_t d = ulp_distance(out[l], expected);
      if (d > worst) {
        worst = d;
      }
      if (std::isinf(x)) continue;
      // GELU: 0.5 x (1 + erf(x / sqrt 2)), relative to its magnitude and to x's (1 + erf cancels
      // for large negative x, where the result is below an ulp of x).
      const double g = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
      // Excess over 1e-6 relative plus an ulp of 1 (what 1 + erf rounds to) times |x|: at most 0.
      const double err = std::fabs(gelu[l] - g) - (1e-6 * std::fabs(g) + 6e-8 * std::fabs(x) + 1e-44);  // and a subnormal ulp
      if (err > worst_gelu) {
        worst_gelu = err;
        worst_x = static_cast<float>(x);
      }
    }
  }
  INFO("worst erf " << worst << " ulp");
  REQUIRE(worst <= 3);
  INFO("GELU's error beyond its bound " << worst_gelu << " at x = " << worst_x);
  REQUIRE(worst_gelu <= 0.0);
  alignas(64) float in[64], out[64];
  for (index_t l = 0; l < kFloatLanes; ++l) in[l] = std::nanf("");
  onnxc::rt::erf_vec(vfloat::load_aligned(in)).store_aligned(out);
  for (index_t l = 0; l < kFloatLanes; ++l) REQUIRE(std::isnan(out[l]));
}
#endif
