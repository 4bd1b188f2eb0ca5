// Indexed reads and writes: Gather, GatherElements, GatherND, ScatterElements, ScatterND,
// OneHot.
//
// Indices may be any integer type (int32 or int64 in ONNX). A negative index counts from the
// end of its axis. ONNX leaves out-of-range indices undefined; these kernels clamp them into
// the axis so that no index ever reads or writes outside a buffer. (The compiler rejects
// out-of-range indices it can see at compile time.)
#ifndef ONNXC_GATHER_H
#define ONNXC_GATHER_H

#include "onnxc/base.h"
#include "onnxc/layout.h"

namespace onnxc {
namespace rt {

// Maps index i of an axis of length n into [0, n): negative values wrap once, and anything
// still outside is clamped.
template <class I>
inline index_t wrap_index(I i, index_t n) {
  index_t k = static_cast<index_t>(i);
  if (k < 0) k += n;
  if (k < 0) return 0;
  return k >= n ? n - 1 : k;
}

// y[o, j, :] = x[o, indices[j], :] for o < outer, j < count; a row has `inner` elements and
// x has `axis_len` rows per o (Gather; Compress with its selected positions as indices).
template <class T, class I>
inline void gather(const T* x, const I* indices, T* y, index_t outer, index_t axis_len, index_t count, index_t inner) {
  for (index_t o = 0; o < outer; ++o)
    for (index_t j = 0; j < count; ++j)
      copy(x + (o * axis_len + wrap_index(indices[j], axis_len)) * inner, y + (o * count + j) * inner, inner);
}

// Walks every element of an index tensor (rank dims `shape`) and calls f(element number,
// offset of the same coordinates in a tensor with element strides `strides`, ignoring the
// coordinate along `axis`). Shared by GatherElements and ScatterElements.
template <class F>
inline void for_each_along_axis(const index_t* shape, const index_t* strides, int rank, int axis, F f) {
  index_t idx[kMaxCopyRank] = {};
  index_t total = 1;
  for (int d = 0; d < rank; ++d) total *= shape[d];
  index_t offset = 0;
  for (index_t e = 0; e < total; ++e) {
    f(e, offset);
    for (int d = rank - 1; d >= 0; --d) {
      if (d != axis) offset += strides[d];
      if (++idx[d] < shape[d]) break;
      if (d != axis) offset -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// y (shaped like indices) = x at the same coordinates, except along `axis`, where the
// coordinate is the index (GatherElements). x_strides are x's element strides.
template <class T, class I>
inline void gather_elements(const T* x, const I* indices, T* y, const index_t* index_shape, const index_t* x_strides,
                            int rank, int axis, index_t axis_len) {
  for_each_along_axis(index_shape, x_strides, rank, axis, [&](index_t e, index_t offset) {
    y[e] = x[offset + wrap_index(indices[e], axis_len) * x_strides[axis]];
  });
}

// How scatters combine an update u with the value v already there.
struct ScatterReplace {
  template <class C> C operator()(C, C u) const { return u; }
};
// On bool, add and mul are numpy's: logical or and logical and.
struct ScatterAdd {
  template <class C> C operator()(C v, C u) const { return static_cast<C>(v + u); }
  bool operator()(bool v, bool u) const { return v || u; }
};
struct ScatterMul {
  template <class C> C operator()(C v, C u) const { return static_cast<C>(v * u); }
  bool operator()(bool v, bool u) const { return v && u; }
};
struct ScatterMax {
  template <class C> C operator()(C v, C u) const { return u > v ? u : v; }
};
struct ScatterMin {
  template <class C> C operator()(C v, C u) const { return u < v ? u : v; }
};

// y (a copy of the data, rank dims with element strides y_strides) takes each update at the
// update's own coordinates, except along `axis`, where the coordinate is the index
// (ScatterElements; Scatter). Updates apply in order, so duplicates reduce left to right.
template <class T, class I, class R>
inline void scatter_elements(T* y, const I* indices, const T* updates, const index_t* index_shape,
                             const index_t* y_strides, int rank, int axis, index_t axis_len, R reduce) {
  for_each_along_axis(index_shape, y_strides, rank, axis, [&](index_t e, index_t offset) {
    T& dst = y[offset + wrap_index(indices[e], axis_len) * y_strides[axis]];
    dst = store<T>(reduce(load(dst), load(updates[e])));
  });
}

// Where one GatherND/ScatterND index tuple points: the sum of its k entries (wrapped into
// dims[j]) times strides[j].
template <class I>
inline index_t tuple_offset(const I* tuple, index_t k, const index_t* dims, const index_t* strides) {
  index_t offset = 0;
  for (index_t j = 0; j < k; ++j) offset += wrap_index(tuple[j], dims[j]) * strides[j];
  return offset;
}

// GatherND: for each of `batch` batches (x_batch elements of x apart), each of `count` index
// tuples of k entries selects a slice of `slice` elements, copied to y in order.
template <class T, class I>
inline void gather_nd(const T* x, const I* indices, T* y, index_t batch, index_t x_batch, index_t count, index_t k,
                      const index_t* dims, const index_t* strides, index_t slice) {
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < count; ++j, indices += k, y += slice)
      copy(x + b * x_batch + tuple_offset(indices, k, dims, strides), y, slice);
}

// ScatterND: y (a copy of the data) takes `count` slices of `slice` updates at the places
// the index tuples (k entries each) point to, combined by `reduce`, in order.
template <class T, class I, class R>
inline void scatter_nd(T* y, const I* indices, const T* updates, index_t count, index_t k, const index_t* dims,
                       const index_t* strides, index_t slice, R reduce) {
  for (index_t j = 0; j < count; ++j, indices += k, updates += slice) {
    T* dst = y + tuple_offset(indices, k, dims, strides);
    for (index_t i = 0; i < slice; ++i) dst[i] = store<T>(reduce(load(dst[i]), load(updates[i])));
  }
}

// OneHot: y[o, d, i] = values[1] (on) if indices[o, i] equals d, else values[0] (off).
// Indices of any numeric type are truncated to integers; negative ones count from the end
// when wrap_negative (version 11 on). Indices out of range select nothing.
template <class I, class T>
inline void one_hot(const I* indices, const T* values, T* y, index_t outer, index_t depth, index_t inner,
                    bool wrap_negative) {
  const T off = values[0], on = values[1];
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) {
      index_t k = static_cast<index_t>(load(indices[o * inner + i]));
      if (k < 0 && wrap_negative) k += depth;
      for (index_t d = 0; d < depth; ++d) y[(o * depth + d) * inner + i] = d == k ? on : off;
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_GATHER_H
