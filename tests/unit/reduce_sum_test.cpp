// ReduceSum and ReduceMean of float over contiguous elements (reduce_sum_simd.h's vector block
// sums where this file is compiled with ONNXC_SIMD, blocked_sum otherwise) and over strided ones
// (the general walk) against float64 sums written here: lengths around a vector and a block
// (512), long rows, several outputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "onnxc/reduce.h"

namespace rt = onnxc::rt;
using rt::index_t;

TEST_CASE("float ReduceSum and ReduceMean over contiguous and strided elements match float64 sums", "[reduce]") {
  for (index_t n : {1, 7, 15, 16, 17, 33, 511, 512, 513, 1500, 100000}) {
    const index_t rows = 3;
    std::vector<float> x(static_cast<std::size_t>(rows * n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 2654435761u >> 8) % 1000) / 300.0f - 1.0f;
    // [rows, n] reduced over axis 1 (contiguous), and over axis 0 of [n, rows] read as strided
    rt::ReduceParams contiguous{1, {rows}, {n}, 1, {n}, {1}};
    rt::ReduceParams strided{1, {rows}, {1}, 1, {n}, {rows}};
    for (const rt::ReduceParams* p : {&contiguous, &strided}) {
      std::vector<float> sum(static_cast<std::size_t>(rows)), mean(sum);
      rt::reduce<rt::ReduceSum>(*p, x.data(), sum.data());
      rt::reduce<rt::ReduceMean>(*p, x.data(), mean.data());
      for (index_t r = 0; r < rows; ++r) {
        double want = 0;
        for (index_t i = 0; i < n; ++i)
          want += x[static_cast<std::size_t>(p == &contiguous ? r * n + i : i * rows + r)];
        INFO("n " << n << (p == &contiguous ? ", contiguous" : ", strided") << ", output " << r);
        REQUIRE(std::fabs(sum[static_cast<std::size_t>(r)] - want) <= 1e-6 * static_cast<double>(n) + 1e-6);
        REQUIRE(std::fabs(mean[static_cast<std::size_t>(r)] - want / static_cast<double>(n)) <= 2e-6);
      }
    }
  }
}
