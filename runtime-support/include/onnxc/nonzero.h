// NonZero: the indices of the non-zero elements, a bounded output (its column count is known
// only at run time).
#ifndef ONNXC_NONZERO_H
#define ONNXC_NONZERO_H

#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// x has `rank` dims `shape` (n elements). Writes y as [rank, k], packed for the k non-zero
// elements found (NaN counts as non-zero, -0 as zero), their indices in row-major order, and
// returns k. y must hold rank * n values.
template <class T>
inline index_t nonzero(const T* x, index_t n, const index_t* shape, int rank, std::int64_t* y) {
  using C = compute_t<T>;
  index_t k = 0;
  for (index_t i = 0; i < n; ++i)
    if (load(x[i]) != C(0)) ++k;
  index_t column = 0;
  for (index_t i = 0; i < n; ++i) {
    if (!(load(x[i]) != C(0))) continue;
    index_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      y[d * k + column] = static_cast<std::int64_t>(rest % shape[d]);
      rest /= shape[d];
    }
    ++column;
  }
  return k;
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_NONZERO_H
