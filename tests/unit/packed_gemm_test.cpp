// rt::packed_gemm (onnxc/packed_gemm.h) against a double-precision product computed here, over
// the register tiles' remainders: every column count from 1 to 100 (tiles of 3, 2 and 1 vectors
// and a partial vector on AVX-512 and AVX2 alike), a 14 x 14 plane (196), primes; row counts that
// leave every partial panel; K of 1, a prime, the deepest the columns-outer order takes
// (packed_gemm_columns_outer, SIMD targets) and one more; the epilogue's activations. Built into
// onnxc_unit_tests (the portable kernel), onnxc_simd_kernel_tests (-march=native: AVX-512 here)
// and onnxc_avx2_kernel_tests (-mavx2 -mfma).
#include <catch2/catch.hpp>

#include <vector>

#include "onnxc/packed_gemm.h"
#include "onnxc/simd.h"
#include "kernel_test_values.h"

namespace {

using onnxc::rt::index_t;

void check_packed_gemm(index_t m, index_t n, index_t k, const onnxc::rt::Epilogue& e, bool with_bias) {
  namespace rt = onnxc::rt;
  const auto a = kernel_test_values(m * k, 1), b = kernel_test_values(k * n, 2), bias = kernel_test_values(m, 3);
  std::vector<float> packed(a.size()), y(static_cast<std::size_t>(m * n), -1.0f);
  rt::pack_weights(a.data(), m, k, packed.data());
  rt::packed_gemm(m, n, k, packed.data(), b.data(), n, y.data(), n, with_bias ? bias.data() : nullptr, e);
  INFO("m " << m << ", n " << n << ", k " << k << ", activation " << static_cast<int>(e.activation));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      double sum = with_bias ? bias[static_cast<std::size_t>(i)] : 0.0;
      for (index_t l = 0; l < k; ++l)
        sum += static_cast<double>(a[static_cast<std::size_t>(i * k + l)]) * b[static_cast<std::size_t>(l * n + j)];
      double want = sum;
      if (e.activation == rt::Activation::Relu && sum < 0) want = 0;
      if (e.activation == rt::Activation::LeakyRelu && sum < 0) want = 0.5 * sum;
      REQUIRE(y[static_cast<std::size_t>(i * n + j)] == Approx(want).margin(1e-3));
    }
}

}  // namespace

TEST_CASE("packed_gemm matches a double product at every column remainder of its register tiles") {
  for (index_t n = 1; n <= 100; ++n) check_packed_gemm(13, n, 7, onnxc::rt::kNoActivation, true);
  // A clamp in registers and an activation over the stored rows, on a strip and a half.
  const onnxc::rt::Epilogue relu{onnxc::rt::Activation::Relu, 0.0f, 0.0f};
  const onnxc::rt::Epilogue leaky{onnxc::rt::Activation::LeakyRelu, 0.5f, 0.0f};
  for (index_t n : {index_t{5}, index_t{51}}) check_packed_gemm(11, n, 9, n == 5 ? relu : leaky, true);
  for (index_t n : {index_t{196}, index_t{197}, index_t{211}})
    for (index_t m : {index_t{1}, index_t{7}, index_t{8}, index_t{37}})
      check_packed_gemm(m, n, 3, onnxc::rt::kNoActivation, m != 7);
}

TEST_CASE("packed_gemm: the columns-outer order and the panel order agree with a double product") {
  const onnxc::rt::Epilogue relu{onnxc::rt::Activation::Relu, 0.0f, 0.0f};
  const onnxc::rt::Epilogue leaky{onnxc::rt::Activation::LeakyRelu, 0.5f, 0.0f};
  // Columns outer (several panels, a K x 48 strip within L1, one block) and the cases just past it.
  namespace rt = onnxc::rt;
  const index_t deepest = rt::kColumnsOuterL1Floats / (rt::kTileVectorsMax * rt::kFloatLanes);  // 170 on AVX-512
#if defined(ONNXC_SIMD)
  CHECK(rt::packed_gemm_columns_outer(40, 196, deepest));
#else
  CHECK_FALSE(rt::packed_gemm_columns_outer(40, 196, deepest));  // the portable kernel keeps the panel order
#endif
  CHECK_FALSE(rt::packed_gemm_columns_outer(40, 196, deepest + 1));
  CHECK_FALSE(rt::packed_gemm_columns_outer(16, 196, 64));
  CHECK_FALSE(rt::packed_gemm_columns_outer(40, 2048, 64));
  for (index_t k : {index_t{1}, index_t{31}, deepest, deepest + 1})
    for (index_t n : {index_t{49}, index_t{97}, index_t{113}, index_t{196}})
      for (index_t m : {index_t{29}, index_t{40}}) check_packed_gemm(m, n, k, k == 31 ? relu : leaky, k != 1);
}
