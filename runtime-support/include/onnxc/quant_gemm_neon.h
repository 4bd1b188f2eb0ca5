// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// qconv_tile (quant.h's im2col integer product) on AArch64 NEON. The packed block holds each
// column's four bytes of a group of k adjacent (col + (g * stride_cols + j) * 4), so a 16-byte
// load is four columns by four k: SDOT's layout. NEON has no unsigned-by-signed byte product
// before Armv8.6's USDOT, so x is moved to int8 (x - 128: an XOR of 0x80 per load) and the sums
// are of (x - 128) w; qconv_gemm adds 128 times the row's weight sum back (kQConvTileXOffset).
// - With the dot-product extension (neon-dotprod, __ARM_FEATURE_DOTPROD): a tile of Rows output
//   channels by 16 columns is Rows x 4 vectors of int32 accumulators; per group of k, four loads
//   of x and Rows x 4 SDOT by element (vdotq_laneq_s32: each row's weights of four groups are
//   one 16-byte load); 16 multiply-adds per instruction.
// - Without it (neon): SMULL / SMULL2 of the bytes with the group's weights repeated over the
//   vector (exact int16 products: |x - 128| <= 128, |w| <= 128), pairs summed into int32 by
//   SADALP, each column's two pair sums added at the end (ADDP); two rows at a time.
// Tested against rt::conv_integer (tests/unit/quant_simd_test.cpp, cross-built: unit.neon,
// unit.neon_dotprod).
#ifndef ONNXC_QUANT_GEMM_NEON_H
#define ONNXC_QUANT_GEMM_NEON_H

#include <arm_neon.h>

namespace onnxc {
namespace rt {
namespace detail {

constexpr std::int32_t kQConvTileXOffset = 128;  // what qconv_tile's sums take off each x

// Four columns' four bytes of group g from column j on, as int8 (x - 128).
inline int8x16_t qconv_neon_columns(const std::uint8_t* col, index_t stride_cols, index_t g, index_t j) {
  const std::size_t at = (static_cast<std::size_t>(g) * static_cast<std::size_t>(stride_cols) + static_cast<std::size_t>(j)) * 4;
  return vreinterpretq_s8_u8(veorq_u8(vld1q_u8(col + at), vdupq_n_u8(0x80)));
}

#if defined(__ARM_FEATURE_DOTPROD)
// Group g + T of Rows rows by 16 columns: the rows' weights of groups g .. g + 3 in wv.
template <int Rows, int T>
ONNXC_INLINE void qconv_sdot_group(const std::uint8_t* col, index_t stride_cols, index_t g, index_t j,
                                   const int8x16_t* wv, int32x4_t (*sums)[4]) {
  int8x16_t x[4];
  ONNXC_UNROLL for (int q = 0; q < 4; ++q) x[q] = qconv_neon_columns(col, stride_cols, g + T, j + 4 * q);
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) sums[r][q] = vdotq_laneq_s32(sums[r][q], x[q], wv[r], T);
}

// out[r][c] for c < 16: Rows rows of w (k_total apart) by the 16 columns of the block from j.
template <int Rows>
inline void qconv_tile_sdot(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                            index_t stride_cols, index_t j, std::int32_t* const* out) {
  int32x4_t sums[Rows][4];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) sums[r][q] = vdupq_n_s32(0);
  index_t g = 0;
  for (; 4 * g + 16 <= k_total; g += 4) {  // four groups: each row's 16 weights in one register
    int8x16_t wv[Rows];
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) wv[r] = vld1q_s8(w + r * k_total + 4 * g);
    qconv_sdot_group<Rows, 0>(col, stride_cols, g, j, wv, sums);
    qconv_sdot_group<Rows, 1>(col, stride_cols, g, j, wv, sums);
    qconv_sdot_group<Rows, 2>(col, stride_cols, g, j, wv, sums);
    qconv_sdot_group<Rows, 3>(col, stride_cols, g, j, wv, sums);
  }
  // The last groups (at most four), one weight quad (zero past k_total) at a time; bounded by four
  // so GCC 12 -O3 sees no long loop to warn of (-Waggressive-loop-optimizations, as qgemm_neon.h).
  for (int t = 0; t < 4 && g + t < groups; ++t) {
    int8x16_t x[4];
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) x[q] = qconv_neon_columns(col, stride_cols, g + t, j + 4 * q);
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const int8x16_t wq = vreinterpretq_s8_s32(vdupq_n_s32(weight_group(w + r * k_total, k_total, g + t)));
      ONNXC_UNROLL for (int q = 0; q < 4; ++q) sums[r][q] = vdotq_s32(sums[r][q], x[q], wq);
    }
  }
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) vst1q_s32(out[r] + 4 * q, sums[r][q]);
}
#else
// The same without SDOT: Rows (1 or 2) rows by 16 columns.
template <int Rows>
inline void qconv_tile_smull(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                             index_t stride_cols, index_t j, std::int32_t* const* out) {
  int32x4_t pairs[Rows][8];  // [2q]: columns 4q, 4q + 1 (two pair sums each); [2q + 1]: 4q + 2, 4q + 3
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
    ONNXC_UNROLL for (int h = 0; h < 8; ++h) pairs[r][h] = vdupq_n_s32(0);
  for (index_t g = 0; g < groups; ++g) {
    int8x16_t x[4];
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) x[q] = qconv_neon_columns(col, stride_cols, g, j + 4 * q);
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const int8x16_t wq = vreinterpretq_s8_s32(vdupq_n_s32(weight_group(w + r * k_total, k_total, g)));
      ONNXC_UNROLL for (int q = 0; q < 4; ++q) {
        pairs[r][2 * q] = vpadalq_s16(pairs[r][2 * q], vmull_s8(vget_low_s8(x[q]), vget_low_s8(wq)));
        pairs[r][2 * q + 1] = vpadalq_s16(pairs[r][2 * q + 1], vmull_high_s8(x[q], wq));
      }
    }
  }
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) vst1q_s32(out[r] + 4 * q, vpaddq_s32(pairs[r][2 * q], pairs[r][2 * q + 1]));
}
#endif

// qconv_tile's NEON form: acc[r][j] (r < Rows, j < 16 * vectors) over the block's columns from j0.
template <int Rows, int Vectors>
inline void qconv_tile_neon(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                            index_t stride_cols, index_t j0, std::int32_t (*acc)[kQConvColumnQuantum * 4]) {
  static_assert(kQConvColumnQuantum == 16, "a column vector is four NEON registers of four columns");
  for (int v = 0; v < Vectors; ++v) {
    const index_t j = j0 + v * 16;
#if defined(__ARM_FEATURE_DOTPROD)
    std::int32_t* out[Rows];
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) out[r] = acc[r] + v * 16;
    qconv_tile_sdot<Rows>(w, k_total, groups, col, stride_cols, j, out);
#else
    ONNXC_UNROLL for (int r = 0; r < Rows; r += 2) {
      std::int32_t* const out[2] = {acc[r] + v * 16, r + 1 < Rows ? acc[r + 1] + v * 16 : nullptr};
      if (r + 1 < Rows) qconv_tile_smull<2>(w + r * k_total, k_total, groups, col, stride_cols, j, out);
      else qconv_tile_smull<1>(w + r * k_total, k_total, groups, col, stride_cols, j, out);
    }
#endif
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_GEMM_NEON_H
