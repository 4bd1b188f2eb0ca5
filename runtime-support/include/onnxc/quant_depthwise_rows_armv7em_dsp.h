// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// depthwise_rows' taps of a 3-wide kernel row at stride 2 (MobileNet's stride-2 depthwise layers)
// on cores with dual 16-bit multiply-accumulate but no Helium (Armv7E-M DSP extension: Cortex-M4,
// M7), where the portable loop takes three byte loads and three multiply-adds per output and
// kernel row. Two outputs per word of the padded row: for the bytes x0..x3 at 2 * ow and x4 the
// next word's first, output ow is (x0, x2).(k0, k2) + x1 k1 (SMLAD, SMLABB) and output ow + 1
// is (x2, x4).(k0, k2) + x3 k1 (the halves joined, SMLAD, SMLATB); the next word is the next
// pair's word, so one load per two outputs. Included by quant.h before depthwise_rows, which
// takes it; tests/firmware/kernels checks conv_integer's stride-2 depthwise cases on the core.
#ifndef ONNXC_QUANT_DEPTHWISE_ROWS_ARMV7EM_DSP_H
#define ONNXC_QUANT_DEPTHWISE_ROWS_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {
namespace detail {

// acc[ow] (ow < out_w) += sum over kw < 3 of row[2 * ow + kw] * k[kw] (= instead of += if First).
// Reads the padded row up to byte 2 * out_w + 2 (one past the taps' last when out_w is odd).
template <bool First, class X>
inline void depthwise_row_taps_s2_dsp(const X* row, index_t out_w, const std::int32_t* k, std::int32_t* acc) {
  const std::uint32_t outer = low_halves(static_cast<std::uint32_t>(k[0]), static_cast<std::uint32_t>(k[2]));
  const std::uint32_t middle = static_cast<std::uint32_t>(k[1]);
  const std::uint8_t* r = reinterpret_cast<const std::uint8_t*>(row);
  std::uint32_t even = even_bytes(load_u32(r), X{});
  index_t ow = 0;
  for (; ow + 1 < out_w; ow += 2) {
    const std::uint32_t word = load_u32(r + 2 * ow);
    const std::uint32_t odd = odd_bytes(word, X{});
    const std::uint32_t next = even_bytes(load_u32(r + 2 * ow + 4), X{});
    const std::uint32_t shifted = (even >> 16) | (next << 16);  // (x2, x4)
    const std::int32_t a0 = First ? 0 : acc[ow], a1 = First ? 0 : acc[ow + 1];
    acc[ow] = mac_low(odd, middle, dual_mac(even, outer, a0));
    acc[ow + 1] = mac_high(odd, middle, dual_mac(shifted, outer, a1));
    even = next;
  }
  if (ow < out_w) {
    const std::uint32_t odd = odd_bytes(load_u32(r + 2 * ow), X{});
    acc[ow] = mac_low(odd, middle, dual_mac(even, outer, First ? 0 : acc[ow]));
  }
}

// ---- 3x3 depthwise at stride 2 across the row: all three kernel rows in one pass ----
//
// depthwise_rows' form for 3x3 kernels at horizontal stride 2 (any vertical stride and padding):
// per output row the three padded input rows (a ring of three, each input row copied once per
// channel by words; rows outside the input a row of zero points, so every output takes all nine
// weights and the sums start at row_start), per pair of outputs the three kernel rows' taps as
// above with the sums in registers, then one store_row_started per band of output rows
// (kDepthwiseS2DspSums sums: VWW's 3 x 3 planes one call per channel instead of three).
// depthwise_rows took a copy, a pass loading and storing the sums and a store_row per kernel
// row and output row.
constexpr index_t kDepthwiseS2DspSums = 128;  // a band's sums (512 B on the stack)

// Kernel row (outer: (k0, k2) as halves; k1 the low half of middle, or its high half where High)
// over the padded row from the pair's first tap on, added to the pair's two sums: the second
// output's outer taps x2 k0 and x4 k2 by SMLATB and SMLABT (the two halves joined first took
// three instructions).
template <bool High, class X>
ONNXC_INLINE void depthwise_s2_dsp_taps(const X* row, std::uint32_t outer, std::uint32_t middle, std::int32_t& a0,
                                        std::int32_t& a1) {
  const std::uint8_t* r = reinterpret_cast<const std::uint8_t*>(row);
  const std::uint32_t word = load_u32(r);
  const std::uint32_t even = even_bytes(word, X{}), odd = odd_bytes(word, X{});  // (x0, x2), (x1, x3)
  const std::uint32_t next = even_bytes(load_u32(r + 4), X{});                     // (x4, x6)
  const auto o = static_cast<std::int32_t>(outer), m = static_cast<std::int32_t>(middle);
  a0 = High ? __smlabt(static_cast<std::int32_t>(odd), m, __smlad(even, outer, a0))
            : __smlabb(static_cast<std::int32_t>(odd), m, __smlad(even, outer, a0));
  a1 = __smlabt(static_cast<std::int32_t>(next), o, __smlatb(static_cast<std::int32_t>(even), o, a1));
  a1 = High ? __smlatt(static_cast<std::int32_t>(odd), m, a1) : __smlatb(static_cast<std::int32_t>(odd), m, a1);
}

template <class X, class W, class Out>
inline void depthwise_3x3_s2_dsp(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const index_t cols = 2 * (p.out_w - 1) + 3;  // padded input columns the row reads
  // Input columns [lo - pad_w, hi - pad_w) go to row[lo, hi); the rest is x's zero point.
  const index_t lo = p.pad_w < cols ? p.pad_w : cols;
  const index_t hi = p.pad_w + p.in_w < cols ? p.pad_w + p.in_w : cols;
  // The ring, then zero points (+4: the pair's second word; the last output of an odd width
  // reads to byte cols + 4, for its unused second sum).
  X rows[4][kDepthwiseRowsMaxRow + 5];
  std::int32_t sums[kDepthwiseS2DspSums];
  for (auto& row : rows)
    for (index_t j = 0; j < cols + 5; ++j) row[j] = zx;
  const index_t band = kDepthwiseS2DspSums / p.out_w;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c) {
      const X* xc = x.data + (n * p.in_channels + c) * in_plane;
      const W* wc = w.data + c * 9;
      const std::int32_t zw = w.zero_point_at(c);
      std::uint32_t outer[3], middle[3];
      std::int32_t weight_sum = 0;
      for (index_t kh = 0; kh < 3; ++kh) {
        const std::int32_t w0 = wc[3 * kh] - zw, w1 = wc[3 * kh + 1] - zw, w2 = wc[3 * kh + 2] - zw;
        outer[kh] = low_halves(static_cast<std::uint32_t>(w0), static_cast<std::uint32_t>(w2));
        middle[kh] = static_cast<std::uint32_t>(w1);
        weight_sum += w0 + w1 + w2;
      }
      const std::uint32_t middle01 = low_halves(middle[0], middle[1]);  // (one register for two)
      const std::int32_t start = row_start(out, c, static_cast<std::int32_t>(zx) * weight_sum);
      index_t held[3] = {-1, -1, -1};  // the input row in each slot of the ring
      for (index_t oh0 = 0; oh0 < p.out_h; oh0 += band) {
        const index_t band_rows = p.out_h - oh0 < band ? p.out_h - oh0 : band;
        for (index_t t = 0; t < band_rows; ++t) {
          const X* r[3];
          for (index_t kh = 0; kh < 3; ++kh) {
            const index_t ih = (oh0 + t) * p.stride_h + kh - p.pad_h;
            if (ih < 0 || ih >= p.in_h) {
              r[kh] = rows[3];
              continue;
            }
            X* slot = rows[ih % 3];  // (three consecutive rows: three slots)
            if (held[ih % 3] != ih) {
              copy_bytes_by_words(reinterpret_cast<std::uint8_t*>(slot + lo),
                                  reinterpret_cast<const std::uint8_t*>(xc + ih * p.in_w + lo - p.pad_w), hi - lo);
              held[ih % 3] = ih;
            }
            r[kh] = slot;
          }
          const X *r0 = r[0], *r1 = r[1], *r2 = r[2];
          std::int32_t* s = sums + t * p.out_w;
          std::int32_t* const pairs_end = s + p.out_w / 2 * 2;
          for (; s != pairs_end; s += 2, r0 += 4, r1 += 4, r2 += 4) {
            std::int32_t a0 = start, a1 = start;
            depthwise_s2_dsp_taps<false>(r0, outer[0], middle01, a0, a1);
            depthwise_s2_dsp_taps<true>(r1, outer[1], middle01, a0, a1);
            depthwise_s2_dsp_taps<false>(r2, outer[2], middle[2], a0, a1);
            s[0] = a0;
            s[1] = a1;
          }
          const index_t ow = p.out_w / 2 * 2;
          s -= ow;
          if (ow < p.out_w) {  // the last output of an odd width (its word ends at byte 2 ow + 3)
            std::int32_t a0 = start, a1 = start;
            depthwise_s2_dsp_taps<false>(r0, outer[0], middle01, a0, a1);
            depthwise_s2_dsp_taps<true>(r1, outer[1], middle01, a0, a1);
            depthwise_s2_dsp_taps<false>(r2, outer[2], middle[2], a0, a1);
            s[ow] = a0;
          }
        }
        store_row_started(out, c, (n * p.out_channels + c) * out_plane + oh0 * p.out_w, sums, band_rows * p.out_w);
      }
    }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_DEPTHWISE_ROWS_ARMV7EM_DSP_H
