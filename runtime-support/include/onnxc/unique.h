// Unique: the distinct elements (or slices along an axis) of a tensor, a bounded output (how
// many there are is known only at run time).
#ifndef ONNXC_UNIQUE_H
#define ONNXC_UNIQUE_H

#include <algorithm>
#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// x is viewed as [outer, n, inner]: n slices x[:, i, :] (the elements themselves when the
// whole tensor is flattened: outer = inner = 1).
struct UniqueParams {
  index_t outer, n, inner;
  bool sorted;  // output in ascending order; else in order of first occurrence
};

namespace detail {

// -1, 0 or 1 as slice a of x compares to slice b, lexicographically in row-major order.
template <class T> inline int compare_slices(const UniqueParams& p, const T* x, index_t a, index_t b) {
  for (index_t o = 0; o < p.outer; ++o)
    for (index_t e = 0; e < p.inner; ++e) {
      const auto va = load(x[(o * p.n + a) * p.inner + e]), vb = load(x[(o * p.n + b) * p.inner + e]);
      if (va < vb) return -1;
      if (vb < va) return 1;
    }
  return 0;
}

}  // namespace detail

// Finds the k distinct slices and returns k. Writes y as [outer, k, inner] (packed for the k
// found; it must hold outer * n * inner values), and when not null: indices[j] the first slice
// equal to unique slice j, inverse[i] the unique slice slice i equals, counts[j] how many slices
// equal unique slice j. `scratch` holds 5 * n index_t.
template <class T>
inline index_t unique(const UniqueParams& p, const T* x, T* y, std::int64_t* indices, std::int64_t* inverse,
                      std::int64_t* counts, index_t* scratch) {
  index_t* order = scratch;            // slices in ascending order (then groups by first slice)
  index_t* group_of = order + p.n;     // per slice: its group, numbered in ascending order
  index_t* first = group_of + p.n;     // per group: its first slice
  index_t* size = first + p.n;         // per group: its number of slices
  index_t* position = size + p.n;      // per group: its position in the output
  for (index_t i = 0; i < p.n; ++i) order[i] = i;
  std::sort(order, order + p.n, [&](index_t a, index_t b) {
    const int c = detail::compare_slices(p, x, a, b);
    return c < 0 || (c == 0 && a < b);
  });
  index_t k = 0;
  for (index_t j = 0; j < p.n; ++j) {
    if (j == 0 || detail::compare_slices(p, x, order[j - 1], order[j]) != 0) {
      first[k] = order[j];  // the lowest index of its equal slices: they sort by index
      size[k] = 0;
      ++k;
    }
    group_of[order[j]] = k - 1;
    ++size[k - 1];
  }
  for (index_t g = 0; g < k; ++g) order[g] = g;
  if (!p.sorted) std::sort(order, order + k, [first](index_t a, index_t b) { return first[a] < first[b]; });
  for (index_t j = 0; j < k; ++j) position[order[j]] = j;
  for (index_t g = 0; g < k; ++g) {
    const index_t j = position[g];
    for (index_t o = 0; o < p.outer; ++o)
      for (index_t e = 0; e < p.inner; ++e) y[(o * k + j) * p.inner + e] = x[(o * p.n + first[g]) * p.inner + e];
    if (indices) indices[j] = static_cast<std::int64_t>(first[g]);
    if (counts) counts[j] = static_cast<std::int64_t>(size[g]);
  }
  if (inverse)
    for (index_t i = 0; i < p.n; ++i) inverse[i] = static_cast<std::int64_t>(position[group_of[i]]);
  return k;
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_UNIQUE_H
