// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::depthwise_3x3 for cores with the M-profile vector extension (Helium, MVE: Cortex-M55, M85),
// in place of the SMLAD pairs. Included by quant.h where __ARM_FEATURE_MVE is defined
// (ONNXC_QUANT_MVE); tests/firmware/kernels runs it against a direct convolution on the core.
//
// A band of output rows at a time: the input rows under it, each with its padding (x's zero
// point on both sides, whole rows of it above and below the plane), sit one after the other in a
// buffer on the stack (rows of wp = width + 2 bytes). The padding is written once per band, each
// channel copies only its rows' insides (one predicated vector per row up to 16 bytes). Four
// outputs of the band, flat over the real width (so across rows on narrow planes: kws' 25 x 5),
// are one vector of int32 lanes; their top-left taps' places in the padded band are one table of
// 16-bit offsets made once per call (a row's last outputs and the next row's first share a
// vector: no padded column is computed, nothing is moved before requantization). Each tap is one
// byte gather (VLDRB.U32 or .S32 at the offsets, +1 or +2, from the kernel row's base) and one VMLA
// by the tap's weight as a scalar (x * (w - zw) needs 17 bits: 16-bit lanes would overflow); one
// store_row per band and channel. The band holds up to kDepthwiseMveBand outputs (at least one
// row): about 1.7 KB of stack. Gathers take several cycles on a real core (one per lane): the
// instruction count is what QEMU measures.
//
// Other depthwise convolutions (strides, other kernels and padding: MobileNet's stride-2 layers)
// go row by row through quant.h's detail::depthwise_rows, whose kernel rows are
// depthwise_row_taps_mve here: four outputs per vector, one load per tap (a byte gather at
// offsets 0, s, 2s, 3s for stride s > 1) and one VMLA.
#ifndef ONNXC_QUANT_DEPTHWISE_MVE_H
#define ONNXC_QUANT_DEPTHWISE_MVE_H

namespace onnxc {
namespace rt {
namespace detail {

constexpr index_t kDepthwiseMveBand = 192;  // real outputs per band (whole rows, at least one)

ONNXC_INLINE int32x4_t depthwise_load4(const std::uint8_t* p) { return vreinterpretq_s32_u32(vldrbq_u32(p)); }
ONNXC_INLINE int32x4_t depthwise_load4(const std::int8_t* p) { return vldrbq_s32(p); }
ONNXC_INLINE int32x4_t depthwise_load4(const std::uint8_t* p, mve_pred16_t pred) {
  return vreinterpretq_s32_u32(vldrbq_z_u32(p, pred));
}
ONNXC_INLINE int32x4_t depthwise_load4(const std::int8_t* p, mve_pred16_t pred) { return vldrbq_z_s32(p, pred); }

ONNXC_INLINE int32x4_t depthwise_gather4(const std::uint8_t* p, uint32x4_t offsets) {
  return vreinterpretq_s32_u32(vldrbq_gather_offset_u32(p, offsets));
}
ONNXC_INLINE int32x4_t depthwise_gather4(const std::int8_t* p, uint32x4_t offsets) {
  return vldrbq_gather_offset_s32(p, offsets);
}
ONNXC_INLINE int32x4_t depthwise_gather4(const std::uint8_t* p, uint32x4_t offsets, mve_pred16_t pred) {
  return vreinterpretq_s32_u32(vldrbq_gather_offset_z_u32(p, offsets, pred));
}
ONNXC_INLINE int32x4_t depthwise_gather4(const std::int8_t* p, uint32x4_t offsets, mve_pred16_t pred) {
  return vldrbq_gather_offset_z_s32(p, offsets, pred);
}

// The nine taps of the four outputs whose top-left taps are at band + at[lane]; rows wp apart.
template <class X>
ONNXC_INLINE int32x4_t depthwise_3x3_gathers(const X* band, index_t wp, uint32x4_t at, const std::int32_t* k) {
  const uint32x4_t at1 = vaddq_n_u32(at, 1), at2 = vaddq_n_u32(at, 2);
  const X* row1 = band + wp;
  const X* row2 = row1 + wp;
  int32x4_t a = vmulq_n_s32(depthwise_gather4(band, at), k[0]);
  a = vmlaq_n_s32(a, depthwise_gather4(band, at1), k[1]);
  a = vmlaq_n_s32(a, depthwise_gather4(band, at2), k[2]);
  a = vmlaq_n_s32(a, depthwise_gather4(row1, at), k[3]);
  a = vmlaq_n_s32(a, depthwise_gather4(row1, at1), k[4]);
  a = vmlaq_n_s32(a, depthwise_gather4(row1, at2), k[5]);
  a = vmlaq_n_s32(a, depthwise_gather4(row2, at), k[6]);
  a = vmlaq_n_s32(a, depthwise_gather4(row2, at1), k[7]);
  return vmlaq_n_s32(a, depthwise_gather4(row2, at2), k[8]);
}

template <class X, class W, class Out>
inline void depthwise_3x3_mve(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t width = p.in_w, height = p.in_h, plane = height * width, wp = width + 2;
  const index_t band_rows = kDepthwiseMveBand / width > 0 ? kDepthwiseMveBand / width : 1;
  // The band's padded input rows: (band_rows + 2) * wp <= 3 * kDepthwiseMveBand - 2 for any width.
  X band[3 * kDepthwiseMveBand + 8];
  std::int32_t acc[kDepthwiseMveBand + 4];
  // Where the band's outputs (flat over the real width) have their top-left taps in the padded
  // band, the whole vectors past the band's outputs 0 (read, not stored).
  std::uint16_t at[kDepthwiseMveBand + 4];
  const index_t outputs = band_rows * width;
  for (index_t j = 0; j < outputs + 4; ++j)
    at[j] = j < outputs ? static_cast<std::uint16_t>(j / width * wp + j % width) : 0;
  std::uint8_t* const band_bytes = reinterpret_cast<std::uint8_t*>(band);
  const std::uint8_t* const x_bytes = reinterpret_cast<const std::uint8_t*>(x.data);
  const mve_pred16_t row_pred = vctp8q(static_cast<std::uint32_t>(width));  // (rows of up to 16 bytes)
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t oh0 = 0; oh0 < height; oh0 += band_rows) {
      const index_t rows = height - oh0 < band_rows ? height - oh0 : band_rows, flat = rows * width;
      // The padding (x's zero point) once per band; the channels overwrite the rows' insides.
      fill_bytes(band_bytes, static_cast<std::uint8_t>(zx), (rows + 2) * wp);
      const index_t first = oh0 == 0 ? 1 : 0, last = oh0 + rows == height ? rows + 1 : rows + 2;  // rows in the plane
      for (index_t c = 0; c < p.out_channels; ++c) {
        const std::uint8_t* xc = x_bytes + (n * p.in_channels + c) * plane;
        const W* wc = w.data + c * 9;
        const std::int32_t zw = w.zero_point_at(c);
        std::int32_t k[9], weight_sum = 0;
        for (index_t t = 0; t < 9; ++t) weight_sum += k[t] = static_cast<std::int32_t>(wc[t]) - zw;
        const std::int32_t correction = static_cast<std::int32_t>(zx) * weight_sum;
        if (width <= 16)
          for (index_t r = first; r < last; ++r)
            vstrbq_p_u8(band_bytes + r * wp + 1, vldrbq_z_u8(xc + (oh0 - 1 + r) * width, row_pred), row_pred);
        else
          for (index_t r = first; r < last; ++r) copy_bytes(band_bytes + r * wp + 1, xc + (oh0 - 1 + r) * width, width);
        for (index_t j = 0; j < flat; j += 4)
          vstrwq_s32(acc + j, depthwise_3x3_gathers(band, wp, vldrhq_u32(at + j), k));
        store_row(out, c, (n * p.out_channels + c) * plane + oh0 * width, acc, flat, correction);
      }
    }
}

// a + sum over kw of src[j * stride + kw] * k[kw] for the four lanes j (loads predicated by
// pred..., if given).
template <class X, class... Pred>
ONNXC_INLINE int32x4_t depthwise_taps_mve(int32x4_t a, const X* src, index_t stride, uint32x4_t offsets,
                                          const std::int32_t* k, index_t k_w, Pred... pred) {
  if (stride == 1)
    for (index_t kw = 0; kw < k_w; ++kw) a = vmlaq_n_s32(a, depthwise_load4(src + kw, pred...), k[kw]);
  else
    for (index_t kw = 0; kw < k_w; ++kw) a = vmlaq_n_s32(a, depthwise_gather4(src + kw, offsets, pred...), k[kw]);
  return a;
}

// acc[ow] (ow < out_w) += sum over kw of row[ow * stride + kw] * k[kw] (= instead of += if first).
// Whole vectors unpredicated, the last predicated.
template <class X>
ONNXC_INLINE void depthwise_row_taps_mve(const X* row, index_t out_w, index_t stride, const std::int32_t* k,
                                         index_t k_w, bool first, std::int32_t* acc) {
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0u, 1), static_cast<std::uint32_t>(stride));
  const index_t full = out_w / 4 * 4;
  for (index_t ow = 0; ow < full; ow += 4) {
    const int32x4_t a = first ? vdupq_n_s32(0) : vldrwq_s32(acc + ow);
    vstrwq_s32(acc + ow, depthwise_taps_mve(a, row + ow * stride, stride, offsets, k, k_w));
  }
  if (full < out_w) {
    const mve_pred16_t pred = vctp32q(static_cast<std::uint32_t>(out_w - full));
    const int32x4_t a = first ? vdupq_n_s32(0) : vldrwq_z_s32(acc + full, pred);
    vstrwq_p_s32(acc + full, depthwise_taps_mve(a, row + full * stride, stride, offsets, k, k_w, pred), pred);
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_DEPTHWISE_MVE_H
