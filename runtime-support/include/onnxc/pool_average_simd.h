// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The vector parts of pool.h's float AveragePool by rows (xsimd's vfloat: AVX-512, AVX2, NEON):
// the column sums of a window's rows, and the means of the output columns whose windows lie
// inside the input row (pool.h's window_columns), a vector of outputs at a time, the k_w
// column sums of each taken as strided loads (stride 1 or 2). Included by pool.h on ONNXC_SIMD
// targets, which defines PoolParams and WindowColumns.
#ifndef ONNXC_POOL_AVERAGE_SIMD_H
#define ONNXC_POOL_AVERAGE_SIMD_H

namespace onnxc {
namespace rt {
namespace pool_detail {
namespace average_simd {

// column[iw] = rows[0][iw] + ... + rows[count - 1][iw], count >= 1.
inline void column_sum(const float* const* rows, index_t count, index_t width, float* column) {
  index_t iw = 0;
  for (; iw + kFloatLanes <= width; iw += kFloatLanes) {
    vfloat sum = vfloat::load_unaligned(rows[0] + iw);
    for (index_t r = 1; r < count; ++r) sum += vfloat::load_unaligned(rows[r] + iw);
    sum.store_unaligned(column + iw);
  }
  if (iw < width) {
    const index_t cols = width - iw;
    vfloat sum = load_partial(rows[0] + iw, cols);
    for (index_t r = 1; r < count; ++r) sum += load_partial(rows[r] + iw, cols);
    store_partial(sum, column + iw, cols);
  }
}

// Output columns [w.lo, w.hi) (windows inside the input row, k_w taps each): the sums of their
// column sums over `div` (the window's size there).
template <int S>
inline void window_means(const PoolParams& p, const float* column, float div, const WindowColumns& w, float* yrow) {
  const vfloat d(div);
  for (index_t ow = w.lo; ow < w.hi; ow += kFloatLanes) {
    const index_t cols = w.hi - ow < kFloatLanes ? w.hi - ow : kFloatLanes;
    // whole vectors before w.whole read L * S floats a tap; past it exactly the lanes needed
    const index_t n = ow < w.whole ? kFloatLanes : cols;
    vfloat sum(0.0f);
    for (index_t kw = 0; kw < p.k_w; ++kw) sum += load_strided<S>(column + ow * S - p.pad_w + kw * p.dilation_w, S, n);
    if (n == kFloatLanes) (sum / d).store_unaligned(yrow + ow);
    else store_partial(sum / d, yrow + ow, n);
  }
}

}  // namespace average_simd
}  // namespace pool_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_POOL_AVERAGE_SIMD_H
