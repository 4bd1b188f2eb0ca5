// Data movement: copies, transposes, concatenation.
#ifndef ONNXC_LAYOUT_H
#define ONNXC_LAYOUT_H

#include <cstring>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

template <class T>
inline void copy(const T* x, T* y, index_t n) {
  if (x != y && n > 0) std::memcpy(static_cast<void*>(y), static_cast<const void*>(x), sizeof(T) * static_cast<std::size_t>(n));
}

// Writes x permuted into y: y has `rank` dims `out_shape`; in_strides[d] is x's element
// stride along the input axis that becomes output axis d.
template <class T>
inline void transpose(const T* x, T* y, const index_t* out_shape, const index_t* in_strides, int rank) {
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  index_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const index_t inner = out_shape[rank - 1], is = in_strides[rank - 1];
  index_t outer = 1;
  for (int d = 0; d < rank - 1; ++d) outer *= out_shape[d];
  for (index_t o = 0; o < outer; ++o) {
    index_t off = 0;
    for (int d = 0; d < rank - 1; ++d) off += idx[d] * in_strides[d];
    for (index_t i = 0; i < inner; ++i) y[i] = x[off + i * is];
    y += inner;
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Copies `outer` blocks of `block` elements from x (contiguous) into y, where y's blocks are
// `y_stride` elements apart: one input of a Concat along an axis.
template <class T>
inline void copy_blocks(const T* x, T* y, index_t outer, index_t block, index_t y_stride) {
  for (index_t o = 0; o < outer; ++o) copy(x + o * block, y + o * y_stride, block);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_LAYOUT_H
