// rt::zip_broadcast (merged dims, the fast loops for strides 0 and 1) against the broadcast
// computed element by element from each output index: squeeze-excite's [1, C, 1, 1] x
// [1, C, H, W] in both operand orders, a row or column vector against a matrix, inner dims of
// one, a scalar-like operand, a transposed read (stride neither 0 nor 1), in place on a.
#include <catch2/catch.hpp>

#include <vector>

#include "onnxc/eltwise.h"

namespace {

using onnxc::rt::index_t;

// Row-major strides of `dims`, with 0 where the operand's dim is 1 and the output's is not.
std::vector<index_t> broadcast_strides(const std::vector<index_t>& dims, const std::vector<index_t>& out) {
  std::vector<index_t> s(dims.size());
  index_t step = 1;
  for (std::size_t d = dims.size(); d-- > 0;) {
    s[d] = dims[d] == 1 && out[d] != 1 ? 0 : step;
    step *= dims[d];
  }
  return s;
}

void check(const std::vector<index_t>& a_dims, const std::vector<index_t>& b_dims, const std::vector<index_t>& out,
           bool transposed_b = false) {
  index_t na = 1, nb = 1, n = 1;
  for (auto d : a_dims) na *= d;
  for (auto d : b_dims) nb *= d;
  for (auto d : out) n *= d;
  std::vector<float> a(static_cast<std::size_t>(na)), b(static_cast<std::size_t>(nb));
  for (index_t i = 0; i < na; ++i) a[static_cast<std::size_t>(i)] = 0.5f + static_cast<float>(i % 13);
  for (index_t i = 0; i < nb; ++i) b[static_cast<std::size_t>(i)] = -1.0f + 0.25f * static_cast<float>(i % 7);
  auto as = broadcast_strides(a_dims, out), bs = broadcast_strides(b_dims, out);
  if (transposed_b) std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);  // b read as its transpose
  std::vector<float> y(static_cast<std::size_t>(n), -9.0f), expected(y.size());
  const int rank = static_cast<int>(out.size());
  for (index_t i = 0; i < n; ++i) {
    index_t rest = i, ao = 0, bo = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const index_t c = rest % out[static_cast<std::size_t>(d)];
      rest /= out[static_cast<std::size_t>(d)];
      ao += c * as[static_cast<std::size_t>(d)], bo += c * bs[static_cast<std::size_t>(d)];
    }
    expected[static_cast<std::size_t>(i)] = a[static_cast<std::size_t>(ao)] * b[static_cast<std::size_t>(bo)] + 1.0f;
  }
  auto f = [](float x, float z) { return x * z + 1.0f; };
  onnxc::rt::zip_broadcast(a.data(), as.data(), b.data(), bs.data(), y.data(), out.data(), rank, f);
  for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == expected[i]);
  if (na == n && !transposed_b) {  // in place on a (read with the output's strides)
    onnxc::rt::zip_broadcast(a.data(), as.data(), b.data(), bs.data(), a.data(), out.data(), rank, f);
    for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(a[i] == expected[i]);
  }
}

}  // namespace

TEST_CASE("zip_broadcast merges dims and matches the element-by-element broadcast", "[eltwise]") {
  check({1, 240, 1, 1}, {1, 240, 14, 14}, {1, 240, 14, 14});
  check({1, 24, 7, 9}, {1, 24, 1, 1}, {1, 24, 7, 9});
  check({2, 5, 1, 1}, {2, 5, 3, 3}, {2, 5, 3, 3});
  check({1, 1, 1, 1}, {1, 3, 4, 5}, {1, 3, 4, 5});
  check({6, 1}, {1, 7}, {6, 7});
  check({6, 7}, {1, 7}, {6, 7});
  check({3, 1, 5}, {3, 4, 5}, {3, 4, 5});
  check({4, 5, 5}, {1, 5, 5}, {4, 5, 5}, true);
  check({1}, {9}, {9});
}
