// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// ReduceSum and ReduceMean of float over contiguous elements (the reduced axes merged into one of
// stride 1: the trailing axes of a tensor, or all of them) on SIMD targets (xsimd's vfloat):
// blocks of kSumBlock elements, as blocked_sum makes them, each summed in two vectors of partial
// sums (simd.h's sum_floats), the block sums added in order. Not the left-to-right chain's bits
// (each block is summed in 2 L chains instead of one); its rounding error no larger. Included by
// reduce.h on ONNXC_SIMD targets.
#ifndef ONNXC_REDUCE_SUM_SIMD_H
#define ONNXC_REDUCE_SUM_SIMD_H

namespace onnxc {
namespace rt {
namespace reduce_simd {

inline float contiguous_sum(const float* x, index_t n) {
  float total = 0;
  for (index_t i = 0; i < n; i += kSumBlock) total += sum_floats(x + i, n - i < kSumBlock ? n - i : kSumBlock);
  return total;
}

}  // namespace reduce_simd
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_REDUCE_SUM_SIMD_H
