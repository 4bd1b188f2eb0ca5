// Convolution with the output channels in the vector lanes: for planes small against a vector
// and a register tile (7 x 7 = 49 outputs fill 4 AVX-512 vectors 77 %, their tiles' rows of
// 8 output channels re-read every input value), the product of the other orientation:
//   y^T[pixels, out_channels] = x^T[pixels, K] * W^T[K, out_channels]   (K = in_channels x taps)
// whose vectors are 16 output channels of one output position, an input value broadcast to
// them (no lane runs empty unless a group's output channels are not a whole number of vectors).
// The weights are packed at compile time, group by group, into gemm_packed_b.h's column panels
// of W^T (kPackedBCols output channels per panel, K rows, the last panel's missing channels
// zero). The input is read in place where a 1 x 1 stride-1 unpadded kernel makes it the matrix
// itself, else through im2col blocks of output positions in the scratch conv_gemm would get.
//
// This header holds the layout (the compiler packs the weights with it); the kernel is
// conv_channel_lanes_simd.h (xsimd: AVX2, AVX-512), included under ONNXC_SIMD. Targets without
// SIMD never take it (the compiler's choice, ops/conv.cpp); rt::conv is the reference.
#ifndef ONNXC_CONV_CHANNEL_LANES_H
#define ONNXC_CONV_CHANNEL_LANES_H

#include "onnxc/conv.h"
#include "onnxc/conv_grouped.h"
#include "onnxc/gemm_packed_b.h"

namespace onnxc {
namespace rt {

// Floats of one group's packed weights (K x its output channels rounded up to whole panels).
inline index_t channel_lanes_group_floats(const ConvParams& p) {
  const ConvParams q = conv_group_params(p);
  return packed_b_floats(conv_gemm_k(q), q.out_channels);
}

// Output channels of the packed weight tensor: every group's rounded up to whole panels.
inline index_t channel_lanes_packed_rows(index_t out_channels, index_t group) {
  return group * packed_b_panels(out_channels / group) * kPackedBCols;
}

// Packs w[out_channels, in_channels / group x taps] (ONNX's order) group by group: group g's
// panels from packed + g * channel_lanes_group_floats.
inline void pack_channel_lane_weights(const float* w, index_t out_channels, index_t group, index_t k, float* packed) {
  const index_t m = out_channels / group, group_floats = packed_b_floats(k, m);
  for (index_t g = 0; g < group; ++g) pack_b_panels(w + g * m * k, k, m, 1, k, packed + g * group_floats);
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_SIMD)
#include "onnxc/conv_channel_lanes_simd.h"
#endif

#endif  // ONNXC_CONV_CHANNEL_LANES_H
