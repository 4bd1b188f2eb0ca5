// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The k step of packed_gemm.h's register tile on AArch64 NEON: FMLA by element. A tile's Rows
// weights of one k are adjacent in the panel (a[k * a_step + r]), so Rows / 4 vector loads bring
// them all and each multiply-add takes its weight from a lane of one of those vectors
// (vfmaq_laneq_f32), where the generic step broadcasts every weight into a register of its own
// (one LD1R per row). An 8 x 3-vector tile's step is then 2 loads of A, 3 of B and 24 FMLA
// (29 instructions for 96 multiply-adds) instead of 8 + 3 + 24. Included by packed_gemm.h on
// AArch64; tested with it (tests/unit/packed_gemm_test.cpp, cross-built: unit.neon).
#ifndef ONNXC_PACKED_GEMM_NEON_H
#define ONNXC_PACKED_GEMM_NEON_H

#include <arm_neon.h>

namespace onnxc {
namespace rt {
namespace packed_gemm_detail {

// The step takes the by-lane form for tiles whose height is a multiple of four (full tiles, whose
// four-weight loads stay inside the panel's row of a_step weights).
template <int Rows>
constexpr bool kFmaByLane = Rows % 4 == 0;

// acc[r][v] += a[r] * b[v] for r < Rows (a multiple of 4), v < Vecs.
template <int Rows, int Vecs>
ONNXC_INLINE void fma_by_lane(const float* a, const vfloat* b, vfloat (*acc)[Vecs]) {
  ONNXC_UNROLL for (int q = 0; q < Rows / 4; ++q) {
    const float32x4_t w = vld1q_f32(a + 4 * q);
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) {
      const float32x4_t x = b[v];
      acc[4 * q][v] = vfmaq_laneq_f32(acc[4 * q][v], x, w, 0);
      acc[4 * q + 1][v] = vfmaq_laneq_f32(acc[4 * q + 1][v], x, w, 1);
      acc[4 * q + 2][v] = vfmaq_laneq_f32(acc[4 * q + 2][v], x, w, 2);
      acc[4 * q + 3][v] = vfmaq_laneq_f32(acc[4 * q + 3][v], x, w, 3);
    }
  }
}

}  // namespace packed_gemm_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_PACKED_GEMM_NEON_H
