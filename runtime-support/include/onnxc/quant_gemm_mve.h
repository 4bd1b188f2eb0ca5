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

// The two rows times two columns of qconv_tile_mve over `vectors` (>= 1) whole vectors of
// sixteen k from column word c and weight rows w0, w1 on (words `step` apart per vector), added to
// the four sums. Inline assembly, 13 instructions per 64 multiply-accumulates (GCC's loop: 15,
// with two register moves and the second column's address per turn): VMLADAVA takes even
// registers (GCC's constraint Te).
ONNXC_INLINE void qconv_tile2_vectors_mve(const std::uint32_t* c, uint32x4_t offsets, index_t step,
                                          const std::int8_t* w0, const std::int8_t* w1, index_t vectors,
                                          std::int32_t& s00, std::int32_t& s01, std::int32_t& s10, std::int32_t& s11) {
  std::int32_t a00 = s00, a01 = s01, a10 = s10, a11 = s11;
  const uint32x4_t offsets1 = vaddq_n_u32(offsets, 1);  // the second column's words
  const uint8x16_t flip = vdupq_n_u8(0x80);
  const std::int32_t bytes = static_cast<std::int32_t>(4 * step);
  std::int32_t n = static_cast<std::int32_t>(vectors);
  uint8x16_t t0, t1, tw;
  __asm__ volatile(
      "1:\n\t"
      "vldrw.u32 %q[t0], [%[c], %q[o0], uxtw #2]\n\t"
      "vldrw.u32 %q[t1], [%[c], %q[o1], uxtw #2]\n\t"
      "veor %q[t0], %q[t0], %q[flip]\n\t"
      "veor %q[t1], %q[t1], %q[flip]\n\t"
      "vldrb.u8 %q[tw], [%[w0]], #16\n\t"
      "vmladava.s8 %[a00], %q[t0], %q[tw]\n\t"
      "vmladava.s8 %[a01], %q[t1], %q[tw]\n\t"
      "vldrb.u8 %q[tw], [%[w1]], #16\n\t"
      "vmladava.s8 %[a10], %q[t0], %q[tw]\n\t"
      "vmladava.s8 %[a11], %q[t1], %q[tw]\n\t"
      "add %[c], %[c], %[bytes]\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      : [a00] "+Te"(a00), [a01] "+Te"(a01), [a10] "+Te"(a10), [a11] "+Te"(a11), [c] "+r"(c), [w0] "+r"(w0),
        [w1] "+r"(w1), [n] "+r"(n), [t0] "=&w"(t0), [t1] "=&w"(t1), [tw] "=&w"(tw)
      : [o0] "w"(offsets), [o1] "w"(offsets1), [flip] "w"(flip), [bytes] "r"(bytes)
      : "cc", "memory");
  s00 = a00;
  s01 = a01;
  s10 = a10;
  s11 = a11;
}

// acc[r][j] (r < Rows, 1 or 2; j < columns, even) = the dot product of weight row r (k_total
// int8, rows k_total apart from w) with block column j less kQConvTileXOffset over the `groups`
// groups of four k (the block's bytes for k past k_total are 0).
// Assembly: the whole vectors through qconv_tile2_vectors_mve (two rows).
template <int Rows, bool Assembly>
inline void qconv_tile_mve_rows(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                                index_t stride_cols, index_t columns, std::int32_t (*acc)[kQConvColumnQuantum * 4]) {
  static_assert(Rows == 1 || Rows == 2, "one or two weight rows");
  static_assert(Rows == 2 || !Assembly, "the assembly is for two rows");
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
    if (Assembly) {
      qconv_tile2_vectors_mve(c, offsets, step, wp0, wp1, full, a00, a01, a10, a11);
      c += full * step;
      wp0 += full * 16;
      wp1 += full * 16;
    }
    for (index_t v = 0; v < (Assembly ? 0 : full); ++v, c += step, wp0 += 16, wp1 += 16) {
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

template <int Rows>
inline void qconv_tile_mve(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                           index_t stride_cols, index_t columns, std::int32_t (*acc)[kQConvColumnQuantum * 4]) {
  // The assembly from four whole vectors on: its set-up cost more than it saved on kws' and
  // VWW's first Convs (k = 40 and 27: two whole vectors and one).
  if (Rows == 2 && k_total >= 64)
    return qconv_tile_mve_rows<Rows, Rows == 2>(w, k_total, groups, col, stride_cols, columns, acc);
  qconv_tile_mve_rows<Rows, false>(w, k_total, groups, col, stride_cols, columns, acc);
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_GEMM_MVE_H
