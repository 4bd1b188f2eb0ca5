// Data movement: copies, fills, strided copies (transpose, slice, expand, tile, ...),
// concatenation, and the small generators shape subgraphs use (range, eye, triangles).
#ifndef ONNXC_LAYOUT_H
#define ONNXC_LAYOUT_H

#include <cstring>

#include "onnxc/base.h"
// Before transpose_avx2.h's <immintrin.h>: for SIMD targets simd.h includes the intrinsics headers
// inside the scope that silences GCC 12's false maybe-uninitialized reports on AVX-512 intrinsics
// (a later include of them would be a no-op, outside that scope).
#include "onnxc/simd.h"

#if defined(__AVX2__)
#include "onnxc/transpose_avx2.h"
#endif

namespace onnxc {
namespace rt {

// Most dims a strided copy walks: twice the usual rank limit of 8, because Tile views its
// output as (repeat, input dim) pairs.
constexpr int kMaxCopyRank = 16;

template <class T>
inline void copy(const T* x, T* y, index_t n) {
  if (x != y && n > 0) std::memcpy(static_cast<void*>(y), static_cast<const void*>(x), sizeof(T) * static_cast<std::size_t>(n));
}

// BitCast: n elements of x, their bytes taken as elements of type U (of the same width).
template <class T, class U>
inline void copy_bits(const T* x, U* y, index_t n) {
  static_assert(sizeof(T) == sizeof(U), "BitCast keeps the element width");
  const void* from = x;
  if (from != static_cast<const void*>(y) && n > 0)
    std::memcpy(static_cast<void*>(y), from, sizeof(T) * static_cast<std::size_t>(n));
}

template <class T>
inline void fill(T* y, index_t n, T value) {
  for (index_t i = 0; i < n; ++i) y[i] = value;
}

// The copy of strided_copy when its fast (last) output dim reads x with a stride and an outer
// output dim q reads x contiguously (a transpose moving the contiguous axis outwards, as NCHW ->
// NHWC): every point of the other dims is a 2-D transpose of [shape[q], inner], taken in square
// tiles so that each tile's input lines and output lines stay in L1 while it is copied (the
// plain walk reads one element per cache line). Elements of 4 bytes go through 8 x 8 blocks in
// registers where AVX2 is there (transpose_avx2.h); the tile's edges and other types element by
// element. Same elements, same destinations.
constexpr index_t kTransposeTile = 16;

template <class T>
inline void tiled_transpose_copy(const T* x, T* y, const index_t* shape, const index_t* strides, int rank, int q) {
  const index_t inner = shape[rank - 1], inner_stride = strides[rank - 1], rows = shape[q];
  index_t y_strides[kMaxCopyRank];
  y_strides[rank - 1] = 1;
  for (int d = rank - 2; d >= 0; --d) y_strides[d] = y_strides[d + 1] * shape[d + 1];
  const index_t row_step = y_strides[q];
  for (int d = 0; d < rank; ++d)
    if (shape[d] == 0) return;
  index_t idx[kMaxCopyRank] = {};
  for (;;) {
    index_t src = 0, dst = 0;
    for (int d = 0; d < rank - 1; ++d) {
      src += idx[d] * strides[d];
      dst += idx[d] * y_strides[d];
    }
    const T* xb = x + src;
    T* yb = y + dst;
    for (index_t i0 = 0; i0 < rows; i0 += kTransposeTile) {
      const index_t i1 = rows - i0 < kTransposeTile ? rows : i0 + kTransposeTile;
      for (index_t j0 = 0; j0 < inner; j0 += kTransposeTile) {
        const index_t j1 = inner - j0 < kTransposeTile ? inner : j0 + kTransposeTile;
#if defined(__AVX2__)
        if (sizeof(T) == 4 && i1 - i0 == kTransposeTile && j1 - j0 == kTransposeTile) {
          for (index_t i = i0; i < i1; i += 8)
            for (index_t j = j0; j < j1; j += 8)
              transpose_avx2::block8x8(xb + i + j * inner_stride, inner_stride, yb + i * row_step + j, row_step);
          continue;
        }
#endif
        for (index_t i = i0; i < i1; ++i)
          for (index_t j = j0; j < j1; ++j) yb[i * row_step + j] = xb[i + j * inner_stride];
      }
    }
    // the odometer over the dims before the last, q excepted (its index stays 0)
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (d == q) continue;
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// y (contiguous, `rank` dims `shape`) = x read through an affine map: the element at
// output index (i0, ..., i{rank-1}) is x[sum_d i_d * strides[d]]. Strides may be zero
// (broadcast) or negative (reversed slices); x already points at output element 0's source.
// Transpose, Slice, Expand, Tile, DepthToSpace and Split are all this copy.
template <class T>
inline void strided_copy(const T* x, T* y, const index_t* shape, const index_t* strides, int rank) {
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  if (strides[rank - 1] != 1 && strides[rank - 1] != 0 && shape[rank - 1] > 1) {
    for (int q = rank - 2; q >= 0; --q)
      if (strides[q] == 1 && shape[q] > 1) {
        tiled_transpose_copy(x, y, shape, strides, rank, q);
        return;
      }
  }
  index_t idx[kMaxCopyRank] = {};
  const index_t inner = shape[rank - 1], inner_stride = strides[rank - 1];
  index_t outer = 1;
  for (int d = 0; d < rank - 1; ++d) outer *= shape[d];
  const T* src = x;
  for (index_t o = 0; o < outer; ++o) {
    if (inner_stride == 1) {
      copy(src, y, inner);
    } else {
      for (index_t i = 0; i < inner; ++i) y[i] = src[i * inner_stride];
    }
    y += inner;
    // Advance the odometer over the outer dims, moving src by the same steps.
    for (int d = rank - 2; d >= 0; --d) {
      src += strides[d];
      if (++idx[d] < shape[d]) break;
      src -= strides[d] * shape[d];
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

// y[i] = start + i * delta, computed in T as ONNX Range specifies (each value from the start,
// not by accumulation, so float ranges do not drift).
template <class T>
inline void range(T* y, index_t n, T start, T delta) {
  for (index_t i = 0; i < n; ++i) y[i] = store<T>(load(start) + static_cast<compute_t<T>>(i) * load(delta));
}

// y is a rows x cols matrix with ones on diagonal k (k > 0: above the main one) and zeros
// elsewhere (EyeLike).
template <class T>
inline void eye(T* y, index_t rows, index_t cols, index_t k) {
  const T zero = store<T>(0), one = store<T>(1);
  for (index_t r = 0; r < rows; ++r)
    for (index_t c = 0; c < cols; ++c) y[r * cols + c] = c - r == k ? one : zero;
}

// Trilu's diagonal offset k clamped to [-rows - 1, cols + 1]: offsets beyond keep everything or
// nothing just the same, and the clamped value fits index_t whatever int64 the model gives.
inline index_t trilu_offset(std::int64_t k, index_t rows, index_t cols) {
  const std::int64_t lo = -static_cast<std::int64_t>(rows) - 1, hi = static_cast<std::int64_t>(cols) + 1;
  return static_cast<index_t>(k < lo ? lo : k > hi ? hi : k);
}

// For each of `batch` rows x cols matrices: keeps the elements on or above diagonal k
// (upper) or on or below it (lower) and zeroes the rest (Trilu).
template <class T>
inline void trilu(const T* x, T* y, index_t batch, index_t rows, index_t cols, index_t k, bool upper) {
  const T zero = store<T>(0);
  for (index_t b = 0; b < batch; ++b)
    for (index_t r = 0; r < rows; ++r)
      for (index_t c = 0; c < cols; ++c) {
        const index_t i = (b * rows + r) * cols + c;
        const bool keep = upper ? c - r >= k : c - r <= k;
        y[i] = keep ? x[i] : zero;
      }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_LAYOUT_H
