// TopK: the k largest (or smallest) elements along one axis, with their positions.
#ifndef ONNXC_TOPK_H
#define ONNXC_TOPK_H

#include <algorithm>
#include <cstdint>

#include "onnxc/base.h"
#include "onnxc/numeric.h"

namespace onnxc {
namespace rt {

// x is [outer, n, inner]; values and indices are [outer, k, inner]. Within each lane the
// results are ordered best first; equal values keep their input order (the lower index
// first), as ONNX requires. NaN ranks above every number, as in numpy's sort, so the order is
// total and "largest" returns NaNs first. `order` is scratch for n positions.
template <class T>
inline void top_k(const T* x, T* values, std::int64_t* indices, index_t outer, index_t n, index_t inner, index_t k,
                  bool largest, std::int64_t* order) {
  using C = compute_t<T>;
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) {
      const T* lane = x + o * n * inner + i;
      // a ranks before b: strictly better value, or the same value at a lower position.
      auto before = [lane, inner, largest](std::int64_t a, std::int64_t b) {
        const C va = load(lane[a * inner]), vb = load(lane[b * inner]);
        const bool a_nan = is_nan(va), b_nan = is_nan(vb);
        if (a_nan || b_nan) {
          if (a_nan && b_nan) return a < b;
          return largest ? a_nan : b_nan;
        }
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      };
      for (index_t j = 0; j < n; ++j) order[j] = static_cast<std::int64_t>(j);
      std::partial_sort(order, order + k, order + n, before);
      const index_t out = o * k * inner + i;
      for (index_t j = 0; j < k; ++j) {
        values[out + j * inner] = lane[order[j] * inner];
        indices[out + j * inner] = order[j];
      }
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_TOPK_H
