// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::qconv_gemm for cores with dual 16-bit multiply-accumulate but no Helium (Armv7E-M DSP
// extension: Cortex-M4, M7), with weights widened at compile time: rt::qconv_gemm_pairs. Included
// by quant.h after qconv_im2col_row and the pointwise kernel of quant_pointwise_armv7em_dsp.h,
// whose 2 x 2 tiles it shares; the portable forms let hosts run and test it.
//
// The block is im2col's rows as they come (k-major, one byte per column: no interleaving into
// words of four k), and a few columns at a time are widened from it into pairs of 16-bit halves on
// the stack, once for all output channels, exactly as the 1x1 kernel widens its input planes
// (pointwise_widen_dsp, the rows k and k + 1 in place of two channels' planes). The weights were
// paired the same way at compile time (qconv_gemm_pairs_pack_weights: (w[m, k], w[m, k + 1]) as
// int16 halves, twice the bytes of flash), so the tile's inner loop is qconv_pointwise's: per
// pair of k one LDRD of the two columns' words, one LDRD of the two output channels', four SMLADs
// (qconv_tile_dual_mac widened both operands in the loop: 27 instructions for 16
// multiply-accumulates, against 13).
#ifndef ONNXC_QUANT_GEMM_PAIRS_ARMV7EM_DSP_H
#define ONNXC_QUANT_GEMM_PAIRS_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {

// Pairs of k of the product: (k, k + 1) for even k.
inline index_t qconv_gemm_pairs_k_pairs(const ConvParams& p) { return (p.in_channels * p.k_d * p.k_h * p.k_w + 1) / 2; }

// Words of the packed weights: qconv_pointwise_pack_weights' with the k_total products of a row
// as its channels (word (t * pairs + q) * 4 + r for output channel 4 t + r and pair q holding
// (w[m, 2 q], w[m, 2 q + 1]) as signed 16-bit halves, 0 past the channels or the row).
inline index_t qconv_gemm_pairs_weight_words(const ConvParams& p) {
  const index_t tiles = (p.out_channels + kPointwiseTileChannels - 1) / kPointwiseTileChannels;
  return tiles * qconv_gemm_pairs_k_pairs(p) * kPointwiseTileChannels;
}

inline void qconv_gemm_pairs_pack_weights(const ConvParams& p, const std::int8_t* w, std::int32_t* packed) {
  ConvParams rows = p;  // (the weights' rows as a 1x1 convolution's: one channel per k)
  rows.in_channels = p.in_channels * p.k_d * p.k_h * p.k_w;
  qconv_pointwise_pack_weights(rows, w, packed);
}

// Bytes of scratch rt::qconv_gemm_pairs takes for blocks of `cols` columns: its im2col rows
// (k_total rows of cols rounded up to kQConvColumnQuantum, which can exceed qconv_gemm's block
// where cols is not a multiple of it), then (4-byte aligned) the widened block of
// pair_product_dsp.
inline index_t qconv_gemm_pairs_widened_offset(const ConvParams& p, index_t cols) {
  const index_t rows = p.in_channels * p.k_d * p.k_h * p.k_w * ((cols + kQConvColumnQuantum - 1) / kQConvColumnQuantum) *
                       kQConvColumnQuantum;
  const index_t block = qconv_gemm_scratch_bytes(p, cols);
  return ((rows > block ? rows : block) + 3) / 4 * 4;
}
inline index_t qconv_gemm_pairs_scratch_bytes(const ConvParams& p, index_t cols) {
  return qconv_gemm_pairs_widened_offset(p, cols) + 4 * detail::pair_product_dsp_words(qconv_gemm_pairs_k_pairs(p), cols);
}

namespace detail {

// Rows k of im2col for columns [first, first + cols) of one image at `rows` + k * stride_cols
// (cols bytes each; nothing written past them).
inline void qconv_im2col_rows(const ConvParams& p, const std::uint8_t* x, std::uint8_t zx, index_t first, index_t cols,
                              index_t stride_cols, std::uint8_t* rows) {
  const index_t k_total = p.in_channels * p.k_d * p.k_h * p.k_w;
  const OutputPosition from = output_position(p, first);
  ConvTap tap = {0, 0, 0, 0};
  for (index_t k = 0; k < k_total; ++k, next_tap(p, tap)) qconv_im2col_row(p, x, zx, tap, from, cols, rows + k * stride_cols);
}

}  // namespace detail

// qconv_gemm with w_pairs = qconv_gemm_pairs_pack_weights(w) in place of w: the same blocks
// (qconv_gemm_scratch_bytes(p, cols) bytes of scratch, of which im2col's rows take k_total
// rows of the block's columns), the same sums. widened: where the columns are widened
// (qconv_gemm_pairs_scratch_bytes(p, cols) - qconv_gemm_scratch_bytes(p, cols) bytes, 4-byte
// aligned: the plan's, after the block, where it had room), or null: on the stack.
template <class Out>
inline void qconv_gemm_pairs(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                             const std::int32_t* w_pairs, const index_t* row_sums, Out out, index_t cols,
                             std::uint8_t* scratch, std::uint8_t* widened = nullptr) {
  const index_t n_total = p.out_d * p.out_h * p.out_w, in_image = p.in_channels * p.in_d * p.in_h * p.in_w;
  const index_t pairs = qconv_gemm_pairs_k_pairs(p), k_total = p.in_channels * p.k_d * p.k_h * p.k_w;
  for (index_t b = 0; b < p.batch; ++b) {
    for (index_t first = 0; first < n_total; first += cols) {
      const index_t n = n_total - first < cols ? n_total - first : cols;
      const index_t stride_cols = (n + kQConvColumnQuantum - 1) / kQConvColumnQuantum * kQConvColumnQuantum;
      detail::qconv_im2col_rows(p, x + b * in_image, x_zero_point, first, n, stride_cols, scratch);
      auto widen = [&](index_t i0, index_t count, index_t k0, index_t kc, std::uint32_t* block) {
        detail::pointwise_widen_dsp(scratch + i0, stride_cols, k_total, k0, kc, count, block);
      };
      detail::pair_product_dsp(p.out_channels, pairs, n, w_pairs, row_sums, x_zero_point,
                               b * p.out_channels * n_total + first, n_total, widen, out,
                               reinterpret_cast<std::uint32_t*>(widened));
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_GEMM_PAIRS_ARMV7EM_DSP_H
