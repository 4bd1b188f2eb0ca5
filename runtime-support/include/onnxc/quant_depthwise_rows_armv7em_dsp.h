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

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_DEPTHWISE_ROWS_ARMV7EM_DSP_H
