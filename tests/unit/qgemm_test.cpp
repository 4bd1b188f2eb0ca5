// rt::qgemm_packed (the AVX-512 VNNI kernel where the build has it: onnxc_simd_kernel_tests; the AVX2 one:
// onnxc_avx2_kernel_tests) and
// rt::qgemm_packed_reference against a direct sum of (a - za)(b - zb) in 64-bit integers, over
// m, n, k around the tile sizes (1 to 4 rows, 1 to 4 panels of 16, k not a multiple of 4),
// uint8 and int8 a and b, zero points per tensor and per row/column, int32 and requantized
// outputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "onnxc/qgemm.h"

namespace rt = onnxc::rt;
using rt::index_t;

namespace {

template <class A, class B>
void check(index_t m, index_t n, index_t k, bool per_row, bool per_column, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(std::is_same<A, std::int8_t>::value ? -128 : 0,
                                          std::is_same<A, std::int8_t>::value ? 127 : 255);
  std::uniform_int_distribution<int> wbyte(std::is_same<B, std::int8_t>::value ? -128 : 0,
                                           std::is_same<B, std::int8_t>::value ? 127 : 255);
  std::vector<A> a(static_cast<std::size_t>(m * k)), za(static_cast<std::size_t>(per_row ? m : 1));
  std::vector<B> b(static_cast<std::size_t>(k * n)), zb(static_cast<std::size_t>(per_column ? n : 1));
  for (auto& v : a) v = static_cast<A>(byte(rng));
  for (auto& v : za) v = static_cast<A>(byte(rng));
  for (auto& v : b) v = static_cast<B>(wbyte(rng));
  for (auto& v : zb) v = static_cast<B>(wbyte(rng));
  std::vector<std::int32_t> expected(static_cast<std::size_t>(m * n));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      std::int64_t s = 0;
      for (index_t l = 0; l < k; ++l)
        s += (std::int64_t{a[static_cast<std::size_t>(i * k + l)]} - za[static_cast<std::size_t>(per_row ? i : 0)]) *
             (std::int64_t{b[static_cast<std::size_t>(l * n + j)]} - zb[static_cast<std::size_t>(per_column ? j : 0)]);
      expected[static_cast<std::size_t>(i * n + j)] = static_cast<std::int32_t>(s);
    }
  std::vector<std::int8_t> packed(static_cast<std::size_t>(rt::qgemm_packed_bytes(k, n)));
  std::vector<std::int32_t> terms(static_cast<std::size_t>(rt::qgemm_column_terms(n)));
  rt::qgemm_pack<B>(k, n, {b.data(), zb.data(), per_column ? 1 : 0}, packed.data(), terms.data());
  const rt::QuantOperand<A> qa{a.data(), za.data(), per_row ? 1 : 0};
  std::vector<std::int32_t> y(expected.size(), 12345);
  rt::qgemm_packed_reference(m, n, k, qa, packed.data(), terms.data(), rt::StoreInt32{y.data()});
  REQUIRE(y == expected);
#if defined(ONNXC_QGEMM_PACKED)
  std::fill(y.begin(), y.end(), 12345);
  rt::qgemm_packed(m, n, k, qa, packed.data(), terms.data(), rt::StoreInt32{y.data()});
  REQUIRE(y == expected);
  // A requantized output stage takes the lanes one by one: against the same stage on the sums.
  const rt::Requant r = rt::make_requant(0.0007f);
  const std::int32_t zy = 3;
  std::vector<std::uint8_t> q(expected.size()), q_expected(expected.size());
  rt::qgemm_packed(m, n, k, qa, packed.data(), terms.data(), rt::RequantizeOutput<std::uint8_t>{q.data(), nullptr, &r, 0, zy});
  for (std::size_t i = 0; i < expected.size(); ++i) q_expected[i] = rt::requantize<std::uint8_t>(expected[i], r, zy);
  REQUIRE(q == q_expected);
#endif
}

}  // namespace

TEST_CASE("qgemm_packed: every tile shape and tail against a direct sum", "[quant][qgemm]") {
  std::mt19937 rng(7);
  for (index_t m : {1, 2, 3, 4, 5, 7, 9})
    for (index_t n : {1, 15, 16, 17, 40, 64, 65, 100})
      for (index_t k : {1, 3, 4, 5, 8, 31, 64}) {
        CAPTURE(m, n, k);
        check<std::uint8_t, std::int8_t>(m, n, k, false, false, rng);
        check<std::int8_t, std::int8_t>(m, n, k, true, false, rng);
        check<std::uint8_t, std::uint8_t>(m, n, k, false, true, rng);
        check<std::int8_t, std::uint8_t>(m, n, k, false, false, rng);
      }
}

// DynamicQuantizeLinear's range (quant_range_simd.h on SIMD builds) against the definition:
// lengths around the vector widths, the extremes anywhere, NaN skipped, all-positive and
// all-negative data (the range always holds 0).
TEST_CASE("dynamic_quantize_linear: range and values against the definition", "[quant][qgemm]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-3.0f, 5.0f);
  for (index_t n : {1, 7, 15, 16, 17, 33, 64, 100, 257}) {
    for (int sign : {0, 1, -1}) {
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = sign == 0 ? value(rng) : sign * std::abs(value(rng));
      if (n > 3) x[static_cast<std::size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
      float lo = 0.0f, hi = 0.0f;
      for (float v : x)
        if (v == v) lo = std::min(lo, v), hi = std::max(hi, v);
      std::vector<std::uint8_t> y(x.size());
      float scale = 0.0f;
      std::uint8_t zp = 0;
      rt::dynamic_quantize_linear(n, x.data(), y.data(), &scale, &zp);
      CAPTURE(n, sign);
      REQUIRE(scale == (hi - lo) / 255.0f);
      REQUIRE(static_cast<int>(zp) == static_cast<int>(std::nearbyint(std::clamp(-lo / scale, 0.0f, 255.0f))));
      for (std::size_t i = 0; i < x.size(); ++i) {
        const float q = x[i] == x[i] ? std::nearbyint(x[i] / scale) + zp : static_cast<float>(zp);
        REQUIRE(static_cast<int>(y[i]) == static_cast<int>(std::clamp(q, 0.0f, 255.0f)));
      }
    }
  }
}
