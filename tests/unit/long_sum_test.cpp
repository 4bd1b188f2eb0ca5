// Sums over long axes (LayerNormalization, RMSNormalization, MeanVarianceNormalization, the
// summing reductions, Softmax, GlobalAveragePool) against the same statistics in double: a single
// float chain over 465,708 values drifts to ~1e-3 in LayerNormalization's output (the operator
// sweep's norm_LayerNormalization_1x12x197x197_axis1); blocked sums stay near 1e-5.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "onnxc/normalization.h"
#include "onnxc/pool.h"
#include "onnxc/reduce.h"

using namespace onnxc;

namespace {

// Standard normal values from a fixed 64-bit LCG (Box-Muller), so the test needs no library RNG.
std::vector<float> normal_values(std::size_t n, float mean, std::uint64_t seed) {
  std::vector<float> v(n);
  std::uint64_t s = seed;
  auto uniform = [&s] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(s >> 11) + 0.5) / 9007199254740992.0;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double u = uniform(), w = uniform();
    v[i] = static_cast<float>(mean + std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * w));
  }
  return v;
}

double mean_of(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += v;
  return s / static_cast<double>(x.size());
}

rt::ReduceParams one_row(rt::index_t count) {
  rt::ReduceParams p{};
  p.kept_rank = 1;
  p.kept_dims[0] = 1;
  p.kept_strides[0] = count;
  p.reduced_rank = 1;
  p.reduced_dims[0] = count;
  p.reduced_strides[0] = 1;
  return p;
}

constexpr rt::index_t kLong = 12 * 197 * 197;  // 465,708

}  // namespace

TEST_CASE("LayerNormalization over 465,708 values stays within 1e-4 of float64") {
  const std::vector<float> x = normal_values(kLong, 0.0f, 1);
  const float one = 1.0f;
  std::vector<float> y(kLong);
  float mean = 0, inv_std = 0;
  rt::layer_norm<float>(x.data(), &one, static_cast<const float*>(nullptr), y.data(), &mean, &inv_std, 1, kLong, 1, 0,
                        1e-5f);
  const double m = mean_of(x);
  double sq = 0;
  for (float v : x) sq += (v - m) * (v - m);
  const double inv = 1 / std::sqrt(sq / kLong + 1e-5);
  double worst = 0;
  for (rt::index_t i = 0; i < kLong; ++i) worst = std::max(worst, std::fabs(y[i] - (x[i] - m) * inv));
  CHECK(worst < 1e-4);
  CHECK(std::fabs(inv_std - inv) < 1e-5 * inv);
}

TEST_CASE("RMSNormalization over 465,708 values stays within 1e-4 of float64") {
  const std::vector<float> x = normal_values(kLong, 0.5f, 2);
  const float one = 1.0f;
  std::vector<float> y(kLong);
  rt::rms_norm<float>(x.data(), &one, y.data(), 1, kLong, 1, 1e-5f);
  double sq = 0;
  for (float v : x) sq += static_cast<double>(v) * v;
  const double inv = 1 / std::sqrt(sq / kLong + 1e-5);
  double worst = 0;
  for (rt::index_t i = 0; i < kLong; ++i) worst = std::max(worst, std::fabs(y[i] - x[i] * inv));
  CHECK(worst < 1e-4);
}

TEST_CASE("ReduceMean, ReduceSum and ReduceSumSquare over 465,708 values match float64") {
  const std::vector<float> x = normal_values(kLong, 3.0f, 3);
  const rt::ReduceParams p = one_row(kLong);
  const double m = mean_of(x);
  double sq = 0;
  for (float v : x) sq += static_cast<double>(v) * v;
  CHECK(std::fabs(rt::ReduceMean::apply(x.data(), p) - m) < 2e-6 * std::fabs(m));
  CHECK(std::fabs(rt::ReduceSum::apply(x.data(), p) - m * kLong) < 2e-6 * std::fabs(m * kLong));
  CHECK(std::fabs(rt::ReduceSumSquare::apply(x.data(), p) - sq) < 2e-6 * sq);
}

TEST_CASE("Softmax and GlobalAveragePool over 465,708 values match float64") {
  const std::vector<float> x = normal_values(kLong, 3.0f, 4);
  std::vector<float> y(kLong);
  float avg = 0;
  rt::global_average_pool(1, kLong, x.data(), &avg);
  CHECK(std::fabs(avg - mean_of(x)) < 2e-6 * 3);
  rt::softmax(x.data(), y.data(), 1, kLong, 1);
  double mx = x[0];
  for (float v : x) mx = std::max<double>(mx, v);
  double sum = 0;
  for (float v : x) sum += std::exp(v - mx);
  double worst = 0;  // relative to each output
  for (rt::index_t i = 0; i < kLong; ++i) {
    const double want = std::exp(x[i] - mx) / sum;
    worst = std::max(worst, std::fabs(y[i] - want) / want);
  }
  CHECK(worst < 2e-5);
}

TEST_CASE("blocked_sum is the plain left-to-right sum up to kSumBlock terms") {
  const std::vector<float> x = normal_values(rt::kSumBlock, 1.0f, 5);
  for (rt::index_t n : {rt::index_t(1), rt::index_t(37), rt::index_t(192), rt::kSumBlock}) {
    float chain = 0;
    for (rt::index_t i = 0; i < n; ++i) chain += x[i];
    const float blocked = rt::blocked_sum<float>(n, [&x](rt::index_t i) { return x[i]; });
    CHECK(blocked == chain);  // the same bits: the common case's results do not move
  }
  // Past one block, blocked_sum and accumulate_sum cover every term once (integers: exact).
  for (rt::index_t n : {rt::kSumBlock + 1, 3 * rt::kSumBlock, 3 * rt::kSumBlock + 7}) {
    const std::int64_t want = n * (n - 1) / 2;
    CHECK(rt::blocked_sum<std::int64_t>(n, [](rt::index_t i) { return std::int64_t(i); }) == want);
    std::vector<std::int64_t> v(static_cast<std::size_t>(n));
    for (rt::index_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
    CHECK(rt::ReduceSum::apply(v.data(), one_row(n)) == want);
  }
}
