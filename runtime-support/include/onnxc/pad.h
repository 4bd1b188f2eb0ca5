// Pad: constant, reflect, edge and wrap padding of an N-d tensor.
#ifndef ONNXC_PAD_H
#define ONNXC_PAD_H

#include "onnxc/base.h"
#include "onnxc/layout.h"

namespace onnxc {
namespace rt {

enum class PadMode { Constant, Reflect, Edge, Wrap };

// The source coordinate of output coordinate o along a dim whose source has n elements and
// gets `begin` padding in front; -1 means "the constant value" (constant mode only).
inline index_t pad_source(index_t o, index_t begin, index_t n, PadMode mode) {
  index_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return i < 0 ? 0 : n - 1;
    case PadMode::Wrap: return ((i % n) + n) % n;
    case PadMode::Reflect: {
      if (n == 1) return 0;
      const index_t period = 2 * (n - 1);  // mirrored about the first and last elements
      i = ((i % period) + period) % period;
      return i < n ? i : period - i;
    }
  }
  return -1;
}

// y (rank dims out_shape) = the source padded by pad_begin (>= 0) in front of each dim and
// by whatever is left at the end. The source is x read with element strides x_strides and
// src_len elements per dim (x points at its first element: negative pads have cropped it).
template <class T>
inline void pad(const T* x, T* y, const index_t* x_strides, const index_t* src_len, const index_t* out_shape,
                const index_t* pad_begin, int rank, PadMode mode, T value) {
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  const int last = rank - 1;
  const index_t row = out_shape[last], n = src_len[last], begin = pad_begin[last];
  // The part of each output row read straight from the source row, as [lo, hi).
  const index_t lo = begin < row ? begin : row;
  const index_t hi = begin + n < row ? begin + n : row;
  index_t idx[kMaxCopyRank] = {};
  index_t rows = 1;
  for (int d = 0; d < last; ++d) rows *= out_shape[d];
  for (index_t r = 0; r < rows; ++r, y += row) {
    index_t offset = 0;
    bool in_source = true;
    for (int d = 0; d < last && in_source; ++d) {
      const index_t s = pad_source(idx[d], pad_begin[d], src_len[d], mode);
      in_source = s >= 0;
      offset += s * x_strides[d];
    }
    if (!in_source) {
      fill(y, row, value);
    } else {
      const T* src = x + offset;
      for (index_t o = 0; o < lo; ++o) {
        const index_t s = pad_source(o, begin, n, mode);
        y[o] = s < 0 ? value : src[s * x_strides[last]];
      }
      if (x_strides[last] == 1) {
        copy(src + (lo - begin), y + lo, hi - lo);
      } else {
        for (index_t o = lo; o < hi; ++o) y[o] = src[(o - begin) * x_strides[last]];
      }
      for (index_t o = hi; o < row; ++o) {
        const index_t s = pad_source(o, begin, n, mode);
        y[o] = s < 0 ? value : src[s * x_strides[last]];
      }
    }
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_PAD_H
