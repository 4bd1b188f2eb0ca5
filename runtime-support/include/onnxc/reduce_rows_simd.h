// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The row step of reduce.h's row form for float on SIMD targets (xsimd's vfloat): acc[j] =
// step(acc[j], row[j]) for j < w, whole vectors along the contiguous kept axis and the tail one
// lane at a time. Each lane takes the same operations in the same order as the scalar loop, so
// the results are those of the portable kernel bit for bit. Included by reduce.h on ONNXC_SIMD targets.
#ifndef ONNXC_REDUCE_ROWS_SIMD_H
#define ONNXC_REDUCE_ROWS_SIMD_H

namespace onnxc {
namespace rt {
namespace reduce_simd {

template <class Step>
inline void fold_row(float* acc, const float* row, index_t w, Step step) {
  index_t j = 0;
  for (; j + 2 * kFloatLanes <= w; j += 2 * kFloatLanes) {
    const vfloat a = step(vfloat::load_unaligned(acc + j), vfloat::load_unaligned(row + j));
    const vfloat b = step(vfloat::load_unaligned(acc + j + kFloatLanes), vfloat::load_unaligned(row + j + kFloatLanes));
    a.store_unaligned(acc + j);
    b.store_unaligned(acc + j + kFloatLanes);
  }
  for (; j + kFloatLanes <= w; j += kFloatLanes)
    step(vfloat::load_unaligned(acc + j), vfloat::load_unaligned(row + j)).store_unaligned(acc + j);
  for (; j < w; ++j) acc[j] = step(acc[j], row[j]);
}

}  // namespace reduce_simd
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_REDUCE_ROWS_SIMD_H
