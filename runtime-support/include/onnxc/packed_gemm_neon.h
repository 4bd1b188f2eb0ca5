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

// The k loop of the 8 x 3-vector tile over a row-major B (MatrixRows), two k per iteration, in
// assembly: GCC kept the intrinsics' pointer steps, the loop's end pointer reloaded from a stack
// slot and the compare apart (33 instructions per k), where each k needs 26: one LD1 of B's three
// vectors that steps by ldb (post-index by register), one of A's 8 weights (post-index by 32) and
// 24 FMLA by element. With the loop's SUBS and B.NE per two k: 54 instructions per 192
// multiply-adds. The 24 accumulators (v0-v23: row i / 3, vector i % 3) come from and go back to
// acc (an asm statement takes at most 30 operands, an in-out one counting twice: 12 LD1/ST1 of
// four vectors per tile instead); v27-v31 hold the loads. Returns the k done (an even count; the
// tile's C loop does the last one of an odd k).
// The depth from which the tile takes it: its accumulators' trip through the stack block and
// the loop's set-up cost more than GCC's loop saves on shallow products (qemu-aarch64 instructions,
// bench/qemu/gemm_insns.cpp: M 64, K 16, N 1024 542 K with GCC's loop, 847 K with this one; K 144,
// N 256 838 K and 808 K; 512^3 45.56 M and 40.11 M).
constexpr index_t kAsmMinDepth = 128;

#define ONNXC_NEON_FMLA_8X3_STEP \
  "ld1 {v29.4s, v30.4s, v31.4s}, [%[b]], %[ldb]\n" /* B's row k: 3 vectors, b += ldb */ \
  "ld1 {v27.4s, v28.4s}, [%[a]], #32\n"            /* the 8 weights of k, a += 8 */ \
  "fmla v0.4s, v29.4s, v27.s[0]\n" "fmla v1.4s, v30.4s, v27.s[0]\n" "fmla v2.4s, v31.4s, v27.s[0]\n" \
  "fmla v3.4s, v29.4s, v27.s[1]\n" "fmla v4.4s, v30.4s, v27.s[1]\n" "fmla v5.4s, v31.4s, v27.s[1]\n" \
  "fmla v6.4s, v29.4s, v27.s[2]\n" "fmla v7.4s, v30.4s, v27.s[2]\n" "fmla v8.4s, v31.4s, v27.s[2]\n" \
  "fmla v9.4s, v29.4s, v27.s[3]\n" "fmla v10.4s, v30.4s, v27.s[3]\n" "fmla v11.4s, v31.4s, v27.s[3]\n" \
  "fmla v12.4s, v29.4s, v28.s[0]\n" "fmla v13.4s, v30.4s, v28.s[0]\n" "fmla v14.4s, v31.4s, v28.s[0]\n" \
  "fmla v15.4s, v29.4s, v28.s[1]\n" "fmla v16.4s, v30.4s, v28.s[1]\n" "fmla v17.4s, v31.4s, v28.s[1]\n" \
  "fmla v18.4s, v29.4s, v28.s[2]\n" "fmla v19.4s, v30.4s, v28.s[2]\n" "fmla v20.4s, v31.4s, v28.s[2]\n" \
  "fmla v21.4s, v29.4s, v28.s[3]\n" "fmla v22.4s, v30.4s, v28.s[3]\n" "fmla v23.4s, v31.4s, v28.s[3]\n"
inline index_t fma_8x3_rows(index_t k, const float* a, const float* b, index_t ldb, float* acc) {
  index_t pairs = k / 2;
  if (pairs == 0) return 0;
  const index_t ldb_bytes = ldb * static_cast<index_t>(sizeof(float));
  float* acc_in = acc;
  float* acc_out = acc;
  __asm__ volatile(
      "ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [%[in]], #64\n"
      "ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [%[in]], #64\n"
      "ld1 {v8.4s, v9.4s, v10.4s, v11.4s}, [%[in]], #64\n"
      "ld1 {v12.4s, v13.4s, v14.4s, v15.4s}, [%[in]], #64\n"
      "ld1 {v16.4s, v17.4s, v18.4s, v19.4s}, [%[in]], #64\n"
      "ld1 {v20.4s, v21.4s, v22.4s, v23.4s}, [%[in]]\n"
      "1:\n" ONNXC_NEON_FMLA_8X3_STEP ONNXC_NEON_FMLA_8X3_STEP
      "subs %[pairs], %[pairs], #1\n"
      "b.ne 1b\n"
      "st1 {v0.4s, v1.4s, v2.4s, v3.4s}, [%[out]], #64\n"
      "st1 {v4.4s, v5.4s, v6.4s, v7.4s}, [%[out]], #64\n"
      "st1 {v8.4s, v9.4s, v10.4s, v11.4s}, [%[out]], #64\n"
      "st1 {v12.4s, v13.4s, v14.4s, v15.4s}, [%[out]], #64\n"
      "st1 {v16.4s, v17.4s, v18.4s, v19.4s}, [%[out]], #64\n"
      "st1 {v20.4s, v21.4s, v22.4s, v23.4s}, [%[out]]\n"
      : [a] "+r"(a), [b] "+r"(b), [pairs] "+r"(pairs), [in] "+r"(acc_in), [out] "+r"(acc_out)
      : [ldb] "r"(ldb_bytes)
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
        "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v27", "v28", "v29", "v30", "v31", "cc", "memory");
  return k / 2 * 2;
}
#undef ONNXC_NEON_FMLA_8X3_STEP

}  // namespace packed_gemm_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_PACKED_GEMM_NEON_H
