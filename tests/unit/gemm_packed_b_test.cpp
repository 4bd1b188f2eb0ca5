// rt::gemm_packed_b (onnxc/gemm_packed_b.h) against a double-precision product computed here,
// over row counts that cut into uneven tiles, columns that end inside a panel or a vector, short
// and long K, transposed A and B, a bias, activations and a parallel-for. Built into
// onnxc_unit_tests (the portable kernel), into onnxc_simd_kernel_tests (ONNXC_SIMD, -march=native:
// AVX-512 here) and into onnxc_avx2_kernel_tests (ONNXC_SIMD, -mavx2 -mfma).
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <vector>

#include "onnxc/gemm_dots.h"
#include "onnxc/gemm_packed_b.h"
#include "kernel_test_values.h"

namespace {

using onnxc::rt::index_t;

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

struct Case {
  index_t m, n, k;
  bool trans_a, trans_b, bias;
  onnxc::rt::Activation activation;
};

// Runs one case serially or through a parallel-for that runs the tasks last first on this thread,
// with B packed (pack_b_panels) or, when plain and B is not transposed, read in place, or, with
// dots (A not transposed), through rt::gemm_dots reading B (either way) in place.
void check(const Case& c, bool parallel, bool plain = false, bool dots = false) {
  const index_t m = c.m, n = c.n, k = c.k;
  const std::vector<float> a = kernel_test_values(m * k, 1), b = kernel_test_values(k * n, 2);
  const std::vector<float> bias = kernel_test_values(n, 3);
  // A is [M, K] or, transposed, [K, M]; B is [K, N] or [N, K].
  std::vector<double> expected(static_cast<std::size_t>(m * n));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      double s = c.bias ? bias[static_cast<std::size_t>(j)] : 0.0;
      for (index_t l = 0; l < k; ++l)
        s += double(a[static_cast<std::size_t>(c.trans_a ? l * m + i : i * k + l)]) *
             double(b[static_cast<std::size_t>(c.trans_b ? j * k + l : l * n + j)]);
      if (c.activation == onnxc::rt::Activation::Relu) s = s > 0 ? s : 0;
      if (c.activation == onnxc::rt::Activation::Gelu) s = gelu(s);
      expected[static_cast<std::size_t>(i * n + j)] = s;
    }
  std::vector<float> packed(static_cast<std::size_t>(onnxc::rt::packed_b_floats(k, n)), -1.0f);
  onnxc::rt::pack_b_panels(b.data(), k, n, c.trans_b ? 1 : n, c.trans_b ? k : 1, packed.data());
  // y has two more columns than the product: they must stay untouched.
  const index_t ldy = n + 2;
  std::vector<float> y(static_cast<std::size_t>(m * ldy), 7.0f);
  const onnxc_parallel_for backwards{[](void*, size_t tasks, onnxc_task_fn task, void* context) {
                                       for (size_t i = tasks; i-- > 0;) task(context, i);
                                     },
                                     nullptr};
  const onnxc::rt::StridedRows a_rows{a.data(), c.trans_a ? 1 : k, c.trans_a ? m : 1};
  const onnxc::rt::Epilogue e{c.activation, 0.0f, 0.0f};
  if (dots)
    onnxc::rt::gemm_dots(m, n, k, a.data(), k, onnxc::rt::DotColumns{b.data(), c.trans_b ? 1 : n, c.trans_b ? k : 1},
                         c.bias ? bias.data() : nullptr, y.data(), ldy, e, parallel ? &backwards : nullptr);
  else if (plain)
    onnxc::rt::gemm_tiles(m, n, k, a_rows, onnxc::rt::PlainRows{b.data(), n}, c.bias ? bias.data() : nullptr, y.data(),
                          ldy, e, parallel ? &backwards : nullptr);
  else
    onnxc::rt::gemm_packed_b(m, n, k, a_rows, packed.data(), c.bias ? bias.data() : nullptr, y.data(), ldy, e,
                             parallel ? &backwards : nullptr);
  std::ostringstream what;
  what << "m " << m << " n " << n << " k " << k << " transA " << c.trans_a << " transB " << c.trans_b << " bias "
       << c.bias << " activation " << static_cast<int>(c.activation) << " parallel " << parallel << " plain " << plain
       << " dots " << dots;
  INFO(what.str());
  for (index_t i = 0; i < m; ++i) {
    for (index_t j = 0; j < n; ++j) {
      const double want = expected[static_cast<std::size_t>(i * n + j)];
      REQUIRE(std::abs(y[static_cast<std::size_t>(i * ldy + j)] - want) <= 1e-4 * (1.0 + std::abs(want)) * k);
    }
    REQUIRE(y[static_cast<std::size_t>(i * ldy + n)] == 7.0f);
    REQUIRE(y[static_cast<std::size_t>(i * ldy + n + 1)] == 7.0f);
  }
}

}  // namespace

TEST_CASE("pack_b_panels stores 16-column panels, K rows each, the last panel's missing columns zero") {
  // B [2, 17]: b[l][j] = 100 l + j. Panel 0: columns 0-15, panel 1: column 16 then 15 zeros.
  std::vector<float> b(2 * 17);
  for (index_t l = 0; l < 2; ++l)
    for (index_t j = 0; j < 17; ++j) b[static_cast<std::size_t>(l * 17 + j)] = static_cast<float>(100 * l + j);
  std::vector<float> p(static_cast<std::size_t>(onnxc::rt::packed_b_floats(2, 17)));
  REQUIRE(p.size() == 64);
  onnxc::rt::pack_b_panels(b.data(), 2, 17, 17, 1, p.data());
  CHECK(p[0] == 0.0f);
  CHECK(p[15] == 15.0f);
  CHECK(p[16] == 100.0f);   // panel 0, row 1, column 0
  CHECK(p[31] == 115.0f);
  CHECK(p[32] == 16.0f);    // panel 1, row 0, column 16
  CHECK(p[33] == 0.0f);
  CHECK(p[48] == 116.0f);   // panel 1, row 1, column 16
  CHECK(p[63] == 0.0f);
}

TEST_CASE("gemm_packed_b matches a double-precision product over uneven rows, column tails and K, deep K in ranges") {
  using onnxc::rt::Activation;
  for (index_t m : {1, 2, 5, 6, 7, 12, 13, 25, 37})
    for (index_t n : {1, 3, 8, 15, 16, 17, 31, 32, 33, 47, 64, 100})
      for (index_t k : {1, 3, 16, 67, 300}) check({m, n, k, false, false, (m + n) % 2 == 0, Activation::None}, (m + k) % 3 == 0);
}

TEST_CASE("gemm_packed_b reads transposed A and B, adds the bias and applies the activation") {
  using onnxc::rt::Activation;
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (index_t m : {3, 13, 37})
          for (index_t n : {5, 40, 577}) {
            check({m, n, 192, ta, tb, true, act}, false);
            check({m, n, 19, ta, tb, false, act}, true);
          }
}

TEST_CASE("gemm_tiles reads a plain row-major B in place, its last vector a partial load") {
  using onnxc::rt::Activation;
  for (index_t m : {1, 4, 13, 37})
    for (index_t n : {1, 7, 15, 16, 17, 24, 33, 37, 64, 70})
      for (index_t k : {1, 5, 64, 520}) check({m, n, k, m % 2 == 1, false, n % 2 == 1, Activation::Relu}, (n + k) % 2 == 0, true);
}

TEST_CASE("gemm_dots matches a double-precision product over few and many columns, K tails and depth ranges") {
  using onnxc::rt::Activation;
  for (Activation act : {Activation::None, Activation::Gelu})
    for (bool tb : {false, true})
      for (index_t m : {1, 2, 3, 5, 8, 13})
        for (index_t n : {1, 2, 3, 4, 5, 7, 9})
          for (index_t k : {1, 7, 16, 17, 33, 255, 256, 257, 600})
            check({m, n, k, false, tb, (m + k) % 2 == 0, act}, (n + k) % 3 == 0, false, true);
  // A short depth (at most half a vector: vectors along N) over column counts around one and two
  // vectors (8 and 16 lanes) with their tails, and the depths just past it.
  for (bool tb : {false, true})
    for (index_t m : {1, 7})
      for (index_t n : {5, 8, 15, 16, 17, 33, 40})
        for (index_t k : {1, 2, 3, 4, 5, 8, 9})
          check({m, n, k, false, tb, (n + k) % 2 == 0, (m + n) % 2 ? Activation::Relu : Activation::None},
                (n + k) % 3 == 0, false, true);
}

// A batched product of 4 batches, A [4, m, k] by two distinct B (broadcast over the batches by
// their offsets), B row-major [k, n] or transposed [n, k] (B^T read in place), against double.
template <class Product>
void check_batched_product(index_t m, index_t n, index_t k, bool transposed, const Product& product) {
  const std::vector<float> a = kernel_test_values(4 * m * k, 6), b = kernel_test_values(2 * k * n, 7);
  const std::vector<index_t> a_off = {0, m * k, 2 * m * k, 3 * m * k}, b_off = {0, k * n, 0, k * n};
  std::vector<float> y(static_cast<std::size_t>(4 * m * n));
  product(a_off.data(), b_off.data(), a.data(), b.data(), y.data());
  for (index_t t = 0; t < 4; ++t)
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        double s = 0;
        for (index_t l = 0; l < k; ++l)
          s += double(a[static_cast<std::size_t>(a_off[t] + i * k + l)]) *
               double(b[static_cast<std::size_t>(b_off[t] + (transposed ? j * k + l : l * n + j))]);
        REQUIRE(std::abs(y[static_cast<std::size_t>((t * m + i) * n + j)] - s) <= 1e-4 * (1.0 + std::abs(s)) * k);
      }
}

TEST_CASE("matmul_dots multiplies batches, B broadcast over them by its offsets, plain or transposed") {
  // n = 3 (few columns) and wider products with column tails (n = 37: nine tiles of four and one
  // of one); K with a vector tail (19) and over one depth range (300).
  for (const bool transposed : {false, true})
    for (const index_t n : {index_t{3}, index_t{37}})
      for (const index_t k : {index_t{19}, index_t{300}})
        check_batched_product(7, n, k, transposed, [&](const index_t* ao, const index_t* bo, const float* a,
                                                       const float* b, float* y) {
          onnxc::rt::matmul_dots(4, ao, bo, 7, n, k, a, b, transposed, y);
        });
}

TEST_CASE("matmul_tiles multiplies batches, B broadcast over them by its offsets, plain or transposed") {
  // B^T is packed a block of 32 columns at a time: n = 37 (a second block of 5 columns, its second
  // panel all zeros), 64 (whole blocks) and 16 (one panel); K with 8 x 8 transposes and an edge
  // (19), two depth ranges (300); m = 5 (one row group) and 29 (three).
  for (const bool transposed : {false, true})
    for (const index_t n : {index_t{16}, index_t{37}, index_t{64}})
      for (const index_t k : {index_t{19}, index_t{300}})
        for (const index_t m : {index_t{5}, index_t{29}})
          check_batched_product(m, n, k, transposed, [&](const index_t* ao, const index_t* bo, const float* a,
                                                         const float* b, float* y) {
            onnxc::rt::matmul_tiles(4, ao, bo, m, n, k, a, b, transposed, y);
          });
}
