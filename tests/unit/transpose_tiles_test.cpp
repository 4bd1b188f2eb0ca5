// strided_copy's tiled transposes (layout.h's tiled_transpose_copy: the fast output dim strided, an
// outer one contiguous in the input) against the element-by-element definition y[i] =
// x[sum_d i_d * strides[d]] computed here: every permutation of ranks 2-4 with odd extents around
// the tile (16), negative strides (a reversed slice), and a broadcast dim.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "onnxc/layout.h"

namespace rt = onnxc::rt;
using rt::index_t;

namespace {

std::vector<std::int32_t> expected(const std::int32_t* x, const std::vector<index_t>& shape,
                                   const std::vector<index_t>& strides) {
  index_t n = 1;
  for (index_t s : shape) n *= s;
  std::vector<std::int32_t> y(static_cast<std::size_t>(n));
  for (index_t flat = 0; flat < n; ++flat) {
    index_t rest = flat, off = 0;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const std::size_t u = static_cast<std::size_t>(d);
      off += (rest % shape[u]) * strides[u];
      rest /= shape[u];
    }
    y[static_cast<std::size_t>(flat)] = x[off];
  }
  return y;
}

}  // namespace

TEST_CASE("strided_copy transposes every permutation of ranks 2-4 as the definition", "[layout]") {
  for (std::vector<index_t> in_shape : {std::vector<index_t>{17, 33}, std::vector<index_t>{3, 16, 31},
                                        std::vector<index_t>{2, 5, 40, 7}, std::vector<index_t>{1, 64, 3, 18}}) {
    const std::size_t rank = in_shape.size();
    std::vector<index_t> in_strides(rank, 1);
    for (std::size_t d = rank - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * in_shape[d + 1];
    index_t n = 1;
    for (index_t s : in_shape) n *= s;
    std::vector<std::int32_t> x(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(i * 7 + 3);
    std::vector<int> perm(rank);
    for (std::size_t d = 0; d < rank; ++d) perm[d] = static_cast<int>(d);
    do {
      std::vector<index_t> shape, strides;
      for (int p : perm) {
        shape.push_back(in_shape[static_cast<std::size_t>(p)]);
        strides.push_back(in_strides[static_cast<std::size_t>(p)]);
      }
      std::vector<std::int32_t> y(x.size(), -1);
      rt::strided_copy(x.data(), y.data(), shape.data(), strides.data(), static_cast<int>(rank));
      INFO("rank " << rank << ", perm starting " << perm[0] << perm[1]);
      REQUIRE(y == expected(x.data(), shape, strides));
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("strided_copy's tiles take negative strides and broadcast dims", "[layout]") {
  // x is [20, 37]; y is [3 (broadcast), 37 reversed, 20]: y[b, j, i] = x[i, 36 - j]
  std::vector<std::int32_t> x(20 * 37);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(i);
  const std::vector<index_t> shape{3, 37, 20}, strides{0, -1, 37};
  std::vector<std::int32_t> y(3 * 37 * 20, -1);
  rt::strided_copy(x.data() + 36, y.data(), shape.data(), strides.data(), 3);
  for (index_t b = 0; b < 3; ++b)
    for (index_t j = 0; j < 37; ++j)
      for (index_t i = 0; i < 20; ++i) REQUIRE(y[static_cast<std::size_t>((b * 37 + j) * 20 + i)] == x[static_cast<std::size_t>(i * 37 + 36 - j)]);
  // a contiguous outer dim reversed: y[j, i] = x[19 - i, j] read from [20, 37]
  const std::vector<index_t> shape2{37, 20}, strides2{1, -37};
  std::vector<std::int32_t> y2(37 * 20, -1);
  rt::strided_copy(x.data() + 19 * 37, y2.data(), shape2.data(), strides2.data(), 2);
  for (index_t j = 0; j < 37; ++j)
    for (index_t i = 0; i < 20; ++i) REQUIRE(y2[static_cast<std::size_t>(j * 20 + i)] == x[static_cast<std::size_t>((19 - i) * 37 + j)]);
}
