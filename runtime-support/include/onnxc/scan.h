// Kernels that walk along one axis: cumulative sums and products (CumSum, CumProd) and per-batch reversals
// (ReverseSequence).
#ifndef ONNXC_SCAN_H
#define ONNXC_SCAN_H

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// The input is [outer, len, inner]; y[o, i, k] combines x[o, j, k] over j <= i (j < i when
// exclusive), or over j >= i (j > i) when reverse, starting from `identity`. It accumulates in
// compute_t<T>.
template <class T, class Combine>
inline void cumulate(const T* x, T* y, index_t outer, index_t len, index_t inner, bool exclusive, bool reverse,
                     compute_t<T> identity, Combine combine) {
  for (index_t o = 0; o < outer; ++o)
    for (index_t k = 0; k < inner; ++k) {
      compute_t<T> acc = identity;
      for (index_t step = 0; step < len; ++step) {
        const index_t i = reverse ? len - 1 - step : step;
        const index_t at = (o * len + i) * inner + k;
        const compute_t<T> v = load(x[at]);
        if (!exclusive) acc = combine(acc, v);
        y[at] = store<T>(acc);
        if (exclusive) acc = combine(acc, v);
      }
    }
}

// CumSum: cumulative sums.
template <class T>
inline void cumsum(const T* x, T* y, index_t outer, index_t len, index_t inner, bool exclusive, bool reverse) {
  cumulate(x, y, outer, len, inner, exclusive, reverse, compute_t<T>(0),
           [](compute_t<T> a, compute_t<T> b) { return a + b; });
}

// CumProd: cumulative products.
template <class T>
inline void cumprod(const T* x, T* y, index_t outer, index_t len, index_t inner, bool exclusive, bool reverse) {
  cumulate(x, y, outer, len, inner, exclusive, reverse, compute_t<T>(1),
           [](compute_t<T> a, compute_t<T> b) { return a * b; });
}

// The [outer, len, inner] split of `rank` dims `dims` around an axis known only at run time (a
// negative axis counts from the end). ONNX leaves an axis outside [-rank, rank - 1] undefined; it
// is clamped into range, as out-of-range indices are elsewhere.
template <class A>
inline void split_at_axis(const index_t* dims, index_t rank, A axis, index_t& outer, index_t& len, index_t& inner) {
  index_t a = static_cast<index_t>(axis < 0 ? axis + static_cast<A>(rank) : axis);
  a = a >= rank ? rank - 1 : a;
  a = a < 0 ? 0 : a;
  outer = 1, len = 1, inner = 1;
  for (index_t d = 0; d < rank; ++d) {
    if (d < a) outer *= dims[d];
    else if (d == a) len *= dims[d];
    else inner *= dims[d];
  }
}

// CumSum and CumProd along an axis known only at run time.
template <class T, class A>
inline void cumsum_along(const T* x, T* y, const index_t* dims, index_t rank, A axis, bool exclusive, bool reverse) {
  index_t outer, len, inner;
  split_at_axis(dims, rank, axis, outer, len, inner);
  cumsum(x, y, outer, len, inner, exclusive, reverse);
}

template <class T, class A>
inline void cumprod_along(const T* x, T* y, const index_t* dims, index_t rank, A axis, bool exclusive, bool reverse) {
  index_t outer, len, inner;
  split_at_axis(dims, rank, axis, outer, len, inner);
  cumprod(x, y, outer, len, inner, exclusive, reverse);
}

// ReverseSequence: for batch b, the first lengths[b] steps along the time axis are reversed
// and the rest copied. Element (t, b) of the [time, batch] plane is `time_stride * t +
// batch_stride * b` elements from the start of its block of `inner` contiguous elements;
// lengths outside [0, time] are clamped.
template <class T, class L>
inline void reverse_sequence(const T* x, T* y, const L* lengths, index_t time, index_t batch, index_t time_stride,
                             index_t batch_stride, index_t inner) {
  for (index_t b = 0; b < batch; ++b) {
    index_t len = static_cast<index_t>(lengths[b]);
    len = len < 0 ? 0 : (len > time ? time : len);
    for (index_t t = 0; t < time; ++t) {
      const index_t src = t < len ? len - 1 - t : t;
      const T* from = x + src * time_stride + b * batch_stride;
      T* to = y + t * time_stride + b * batch_stride;
      for (index_t k = 0; k < inner; ++k) to[k] = from[k];
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_SCAN_H
