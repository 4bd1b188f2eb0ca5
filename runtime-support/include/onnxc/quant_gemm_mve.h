// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The matrix-product tile of rt::qconv_gemm for cores with the M-profile vector extension
// (Helium, MVE: Cortex-M55, M85). Included by quant.h where __ARM_FEATURE_MVE is defined
// (ONNXC_QUANT_MVE); the portable tile in quant.h is the reference it is tested against
// (tests/firmware: the unit test built for the core and run under QEMU's mps3-an547).
//
// Sixteen k of one column are one vector: the im2col block holds each column's four k of a
// group as one word, groups 4 * stride_cols bytes apart, so one word gather (VLDRW, offsets
// 0, S, 2S, 3S) loads four groups of a column. One row's sixteen weights are one contiguous load.
// VMLADAVA.S8 adds the sixteen products of a column vector and a weight vector to a scalar: x is
// uint8, so the gathered bytes are flipped to int8 (x - 128, one VEOR per column vector, shared
// by the tile's rows); the sums are then of x - 128, and qconv_gemm's correction adds 128 times
// the row's weight sum back (kQConvTileXOffset).
// A tile is two rows times two columns (four scalar accumulators: VMLADAVA takes even registers,
// seven of them in all). Per 16 k: 2 gathers, 2 VEORs, 2 weight loads, 4 VMLADAVAs (64
// multiply-accumulates). The last vector of a row is predicated (VCTP): weights past k_total and
// words past the block's groups are not read.
#ifndef ONNXC_QUANT_GEMM_MVE_H
#define ONNXC_QUANT_GEMM_MVE_H

namespace onnxc {
namespace rt {
namespace detail {

// The tile's sums are of x - 128 (see above): qconv_gemm adds 128 times each row's weight sum
// back through its zero-point correction (the compiler's row_sums), not the tile on every call.
constexpr std::int32_t kQConvTileXOffset = 128;

// acc[r][j] (r < Rows, 1 or 2; j < columns, even) = the dot product of weight row r (k_total
// int8, rows k_total apart from w) with block column j less kQConvTileXOffset over the `groups`
// groups of four k (the block's bytes for k past k_total are 0).
template <int Rows>
inline void qconv_tile_mve(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                           index_t stride_cols, index_t columns, std::int32_t (*acc)[kQConvColumnQuantum * 4]) {
  static_assert(Rows == 1 || Rows == 2, "one or two weight rows");
  const std::int8_t* const w1 = Rows == 2 ? w + k_total : w;
  // Word offsets of four consecutive groups of one column.
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0u, 1), static_cast<std::uint32_t>(stride_cols));
  const uint8x16_t flip = vdupq_n_u8(0x80);
  const index_t full = k_total / 16;  // vectors whose sixteen weights all lie in the row
  const index_t step = 4 * stride_cols;  // words from one vector's first group to the next's
  for (index_t j = 0; j < columns; j += 2) {
    std::int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    const std::uint32_t* c = reinterpret_cast<const std::uint32_t*>(col) + j;
    const std::int8_t* wp0 = w;
    const std::int8_t* wp1 = w1;
    for (index_t v = 0; v < full; ++v, c += step, wp0 += 16, wp1 += 16) {
      const int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(vldrwq_gather_shifted_offset_u32(c, offsets)), flip));
      const int8x16_t x1 =
          vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(vldrwq_gather_shifted_offset_u32(c + 1, offsets)), flip));
      const int8x16_t wv0 = vld1q_s8(wp0);
      a00 = vmladavaq_s8(a00, x0, wv0);
      a01 = vmladavaq_s8(a01, x1, wv0);
      if (Rows == 2) {
        const int8x16_t wv1 = vld1q_s8(wp1);
        a10 = vmladavaq_s8(a10, x0, wv1);
        a11 = vmladavaq_s8(a11, x1, wv1);
      }
    }
    if (16 * full < k_total) {  // the last vector: weights past k_total 0, groups past the block unread
      const mve_pred16_t kp = vctp8q(static_cast<std::uint32_t>(k_total - 16 * full));
      const mve_pred16_t gp = vctp32q(static_cast<std::uint32_t>(groups - 4 * full));
      const int8x16_t x0 = vreinterpretq_s8_u8(
          veorq_u8(vreinterpretq_u8_u32(vldrwq_gather_shifted_offset_z_u32(c, offsets, gp)), flip));
      const int8x16_t x1 = vreinterpretq_s8_u8(
          veorq_u8(vreinterpretq_u8_u32(vldrwq_gather_shifted_offset_z_u32(c + 1, offsets, gp)), flip));
      const int8x16_t wv0 = vldrbq_z_s8(wp0, kp);
      a00 = vmladavaq_s8(a00, x0, wv0);
      a01 = vmladavaq_s8(a01, x1, wv0);
      if (Rows == 2) {
        const int8x16_t wv1 = vldrbq_z_s8(wp1, kp);
        a10 = vmladavaq_s8(a10, x0, wv1);
        a11 = vmladavaq_s8(a11, x1, wv1);
      }
    }
    acc[0][j] = a00;
    acc[0][j + 1] = a01;
    if (Rows == 2) {
      acc[1][j] = a10;
      acc[1][j + 1] = a11;
    }
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_GEMM_MVE_H
