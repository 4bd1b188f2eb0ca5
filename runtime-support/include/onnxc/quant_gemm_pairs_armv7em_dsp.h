// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::qconv_gemm for cores with dual 16-bit multiply-accumulate but no Helium (Armv7E-M DSP
// extension: Cortex-M4, M7), with weights widened at compile time: rt::qconv_gemm_pairs. Included
// by quant.h after qconv_pack_block and the pointwise kernel of quant_pointwise_armv7em_dsp.h,
// whose 2 x 2 tiles it shares; the portable forms let hosts run and test it.
//
// The im2col block is qconv_gemm's (bytes, each column's four k of a group as one word); a few
// columns at a time are widened from it into pairs of 16-bit halves on the stack, once for all
// output channels: a group's word [k0 k1 k2 k3] gives (k0, k2) and (k1, k3) (UXTB16 and UXTB16
// ROR #8). The weights were paired the same way at compile time (qconv_gemm_pairs_pack_weights,
// int16 halves: twice the bytes of flash), so the tile's inner loop is qconv_pointwise's: per
// pair of k one LDRD of the two columns' words, one LDRD of the two output channels', four SMLADs
// (qconv_tile_dual_mac widened both operands in the loop: 27 instructions for 16
// multiply-accumulates, against 13).
#ifndef ONNXC_QUANT_GEMM_PAIRS_ARMV7EM_DSP_H
#define ONNXC_QUANT_GEMM_PAIRS_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {

// Pairs of k of the product: two per group of four k.
inline index_t qconv_gemm_pairs_k_pairs(const ConvParams& p) { return 2 * qconv_gemm_k_groups(p); }

// Words of the packed weights: as qconv_pointwise_pack_weights' (word (t * pairs + q) * 4 + r
// for output channel 4 t + r and pair q), pair 2 g + h holding (w[m, 4 g + h], w[m, 4 g + h + 2])
// as signed 16-bit halves (0 past the channels or the row).
inline index_t qconv_gemm_pairs_weight_words(const ConvParams& p) {
  const index_t tiles = (p.out_channels + kPointwiseTileChannels - 1) / kPointwiseTileChannels;
  return tiles * qconv_gemm_pairs_k_pairs(p) * kPointwiseTileChannels;
}

inline void qconv_gemm_pairs_pack_weights(const ConvParams& p, const std::int8_t* w, std::int32_t* packed) {
  const index_t k_total = p.in_channels * p.k_d * p.k_h * p.k_w, pairs = qconv_gemm_pairs_k_pairs(p);
  const index_t words = qconv_gemm_pairs_weight_words(p);
  for (index_t i = 0; i < words; ++i) {
    const index_t m = i / (pairs * kPointwiseTileChannels) * kPointwiseTileChannels + i % kPointwiseTileChannels;
    const index_t q = i / kPointwiseTileChannels % pairs, k = q / 2 * 4 + q % 2;
    auto half = [&](index_t kk) -> std::uint32_t {
      const bool real = m < p.out_channels && kk < k_total;
      return real ? static_cast<std::uint16_t>(static_cast<std::int16_t>(w[m * k_total + kk])) : 0u;
    };
    packed[i] = static_cast<std::int32_t>(half(k) | (half(k + 2) << 16));
  }
}

namespace detail {

// Columns [i0, i0 + count) and pairs [k0, k0 + kc) (k0 and kc even) of qconv_gemm's block `col`
// (stride_cols columns; an odd count's partner column is still inside the block) widened into
// `block` in pointwise_widen_dsp's layout: word (cp * kc + q) * 2 + j holds pair k0 + q of column
// i0 + 2 cp + j.
inline void gemm_pairs_widen_dsp(const std::uint8_t* col, index_t stride_cols, index_t i0, index_t count, index_t k0,
                                 index_t kc, std::uint32_t* block) {
  const index_t column_pairs = (count + 1) / 2, groups = kc / 2;
  for (index_t cp = 0; cp < column_pairs; ++cp) {
    const std::uint8_t* c = col + (k0 / 2 * stride_cols + i0 + 2 * cp) * 4;
    std::uint32_t* b = block + cp * kc * 2;
    for (index_t g = 0; g < groups; ++g, c += 4 * stride_cols, b += 4) {
      const std::uint32_t x0 = load_u32(c), x1 = load_u32(c + 4);
      b[0] = even_bytes(x0, std::uint8_t{});
      b[1] = even_bytes(x1, std::uint8_t{});
      b[2] = odd_bytes(x0, std::uint8_t{});
      b[3] = odd_bytes(x1, std::uint8_t{});
    }
  }
}

}  // namespace detail

// qconv_gemm with w_pairs = qconv_gemm_pairs_pack_weights(w) in place of w: the same blocks
// (qconv_gemm_scratch_bytes(p, cols) bytes of scratch), the same sums.
template <class Out>
inline void qconv_gemm_pairs(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                             const std::int32_t* w_pairs, const index_t* row_sums, Out out, index_t cols,
                             std::uint8_t* scratch) {
  const index_t n_total = p.out_d * p.out_h * p.out_w, in_image = p.in_channels * p.in_d * p.in_h * p.in_w;
  const index_t pairs = qconv_gemm_pairs_k_pairs(p);
  for (index_t b = 0; b < p.batch; ++b) {
    for (index_t first = 0; first < n_total; first += cols) {
      const index_t n = n_total - first < cols ? n_total - first : cols;
      const index_t stride_cols = (n + kQConvColumnQuantum - 1) / kQConvColumnQuantum * kQConvColumnQuantum;
      detail::qconv_pack_block(p, x + b * in_image, x_zero_point, first, n, stride_cols, scratch);
      auto widen = [&](index_t i0, index_t count, index_t k0, index_t kc, std::uint32_t* block) {
        detail::gemm_pairs_widen_dsp(scratch, stride_cols, i0, count, k0, kc, block);
      };
      detail::pair_product_dsp(p.out_channels, pairs, n, w_pairs, row_sums, x_zero_point,
                               b * p.out_channels * n_total + first, n_total, widen, out);
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_GEMM_PAIRS_ARMV7EM_DSP_H
