// rt::matmul_integer where built with AVX-512 VNNI (quant_matmul_avx512vnni.h) against the direct
// sum written here: uint8 and int8 on either side, zero points per tensor, per row of a and per
// column of b, row counts of every tile size and their remainders, columns around the 16-lane
// vector, k not a multiple of four and beyond the kernel's cached block (1,024), batches with
// broadcast offsets; int32 and requantized outputs (per-column bias and multipliers, both ends
// saturating). Built in onnxc_simd_kernel_tests (-march=native); elsewhere it tests the portable loop.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "onnxc/quant.h"

namespace rt = onnxc::rt;
using rt::index_t;

namespace {

template <class A, class B>
void check_product(index_t m, index_t n, index_t k, bool per_row, bool per_column, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  const index_t batches = 2;
  std::vector<A> a(static_cast<std::size_t>(batches * m * k)), za(static_cast<std::size_t>(m));
  std::vector<B> b(static_cast<std::size_t>(k * n)), zb(static_cast<std::size_t>(n));
  for (auto& v : a) v = static_cast<A>(byte(rng));
  for (auto& v : b) v = static_cast<B>(byte(rng));
  for (auto& v : za) v = static_cast<A>(byte(rng));
  for (auto& v : zb) v = static_cast<B>(byte(rng));
  const index_t a_offsets[] = {0, m * k}, b_offsets[] = {0, 0};  // b broadcast over the batch
  const rt::QuantOperand<A> aq{a.data(), za.data(), per_row ? 1 : 0};
  const rt::QuantOperand<B> bq{b.data(), zb.data(), per_column ? 1 : 0};
  std::vector<std::int32_t> expected(static_cast<std::size_t>(batches * m * n));
  for (index_t batch = 0; batch < batches; ++batch)
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        std::int32_t sum = 0;
        for (index_t l = 0; l < k; ++l)
          sum += (static_cast<std::int32_t>(a[static_cast<std::size_t>(a_offsets[batch] + i * k + l)]) - aq.zero_point_at(i)) *
                 (static_cast<std::int32_t>(b[static_cast<std::size_t>(l * n + j)]) - bq.zero_point_at(j));
        expected[static_cast<std::size_t>((batch * m + i) * n + j)] = sum;
      }
  std::vector<std::int32_t> got(expected.size(), -1);
  rt::matmul_integer(batches, a_offsets, b_offsets, m, n, k, aq, bq, rt::StoreInt32{got.data()});
  CHECK(got == expected);

  std::vector<std::int32_t> bias(static_cast<std::size_t>(n));
  std::vector<rt::Requant> requant;
  for (index_t j = 0; j < n; ++j) {
    bias[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(j * 733 % 2001) - 1000;
    requant.push_back(rt::make_requant(0.0003f * static_cast<float>(j % 7 + 1)));
  }
  std::vector<std::uint8_t> y(expected.size()), y_expected(expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::size_t j = i % static_cast<std::size_t>(n);
    y_expected[i] = rt::requantize<std::uint8_t>(expected[i] + bias[j], requant[j], 117);
  }
  rt::matmul_integer(batches, a_offsets, b_offsets, m, n, k, aq, bq,
                     rt::RequantizeOutput<std::uint8_t>{y.data(), bias.data(), requant.data(), 1, 117});
  CHECK(y == y_expected);
}

}  // namespace

TEST_CASE("matmul_integer equals the direct sum: int8 and uint8, zero points per row and column, odd shapes", "[quant]") {
  std::mt19937 rng(31);
  struct Shape {
    index_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1}, {1, 16, 64}, {1, 10, 640}, {3, 17, 5}, {8, 15, 3}, {13, 40, 100}, {16, 256, 33},
                          {7, 33, 1030}, {2, 5, 4}, {64, 18, 27}};
  for (const Shape& s : shapes) {
    INFO("m " << s.m << " n " << s.n << " k " << s.k);
    check_product<std::uint8_t, std::int8_t>(s.m, s.n, s.k, false, false, rng);
    check_product<std::uint8_t, std::uint8_t>(s.m, s.n, s.k, true, false, rng);
    check_product<std::int8_t, std::int8_t>(s.m, s.n, s.k, false, true, rng);
    check_product<std::int8_t, std::uint8_t>(s.m, s.n, s.k, true, true, rng);
  }
}
