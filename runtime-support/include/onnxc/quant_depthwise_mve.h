// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::depthwise_3x3 for cores with the M-profile vector extension (Helium, MVE: Cortex-M55, M85),
// in place of the SMLAD pairs. Included by quant.h where __ARM_FEATURE_MVE is defined
// (ONNXC_QUANT_MVE); tests/firmware/kernels runs it against a direct convolution on the core.
//
// A band of output rows at a time: the input rows under it, each with its padding (x's zero
// point on both sides, whole rows of it above and below the plane), sit one after the other in a
// buffer on the stack (rows of wp = (out_w - 1) * stride + 3 bytes). The padding is written once
// per band, each channel copies only its rows' insides (one predicated vector per row up to 16
// bytes). Four outputs of the band, flat over the output width (so across rows on narrow planes:
// kws' 25 x 5), are one vector of int32 lanes; their top-left taps' places in the band are one
// table of 16-bit offsets made once per call (any stride: a row's last outputs and the next row's
// first share a vector, no padded column is computed, nothing is moved before requantization).
// Each tap is one byte gather (VLDRB.U32 or .S32 at the offsets, +1 or +2, from the kernel row's
// base) and one VMLA by the tap's weight as a scalar (x * (w - zw) needs 17 bits: 16-bit lanes
// would overflow); one store_row per band and channel. The band holds up to kDepthwiseMveBand
// outputs and kDepthwiseMveBandBytes of input rows: about 2.3 KB of stack with the sums and the
// table. rt::depthwise_3x3 ("same", stride 1) and conv_integer's other 3x3 depthwise
// convolutions (MobileNet's stride-2 layers, padding at the end only) take it. Gathers take
// several cycles on a real core (one per lane): the instruction count is what QEMU measures.
//
// Other depthwise convolutions (other kernels, dilations, rows too wide for the band) go row by
// row through quant.h's detail::depthwise_rows, whose kernel rows are depthwise_row_taps_mve here: four outputs per vector, one load per tap (a byte gather at
// offsets 0, s, 2s, 3s for stride s > 1) and one VMLA.
#ifndef ONNXC_QUANT_DEPTHWISE_MVE_H
#define ONNXC_QUANT_DEPTHWISE_MVE_H

namespace onnxc {
namespace rt {
namespace detail {

constexpr index_t kDepthwiseMveBand = 192;  // outputs per band (whole rows, at least one)
constexpr index_t kDepthwiseMveBandBytes = 1024;  // the band's input rows (on the stack)

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

// Whether depthwise_3x3_mve computes this convolution: 3x3 depthwise of any stride (the same
// both ways) and padding up to 2, the band's rows of at least three input rows fitting
// kDepthwiseMveBandBytes.
inline bool depthwise_3x3_mve_applies(const ConvParams& p) {
  const index_t wp = (p.out_w - 1) * p.stride_w + 3;  // padded input columns the outputs read
  return p.group == p.in_channels && p.group == p.out_channels && p.in_d == 1 && p.k_d == 1 && p.out_d == 1 &&
         p.k_h == 3 && p.k_w == 3 && p.dilation_h == 1 && p.dilation_w == 1 && p.stride_h == p.stride_w &&
         p.pad_h <= 2 && p.pad_w <= 2 && 3 * wp <= kDepthwiseMveBandBytes;
}

template <class X, class W, class Out>
inline void depthwise_3x3_mve(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t stride = p.stride_h, in_w = p.in_w, in_h = p.in_h, in_plane = in_h * in_w;
  const index_t out_w = p.out_w, out_h = p.out_h, out_plane = out_h * out_w;
  const index_t wp = (out_w - 1) * stride + 3;  // a band row: input columns -pad_w .. wp - 1 - pad_w
  // Output rows per band: up to kDepthwiseMveBand outputs, their input rows in the buffer.
  index_t band_rows = kDepthwiseMveBand / out_w;
  const index_t rows_fit = (kDepthwiseMveBandBytes / wp - 3) / stride + 1;
  if (band_rows > rows_fit) band_rows = rows_fit;
  if (band_rows > out_h) band_rows = out_h;
  if (band_rows < 1) band_rows = 1;
  X band[kDepthwiseMveBandBytes];
  std::int32_t acc[kDepthwiseMveBand + 4];
  // Where the band's outputs (flat over the output width, so across rows on narrow planes: kws'
  // 25 x 5) have their top-left taps in the band, the whole vectors past its outputs 0 (read, not
  // stored).
  std::uint16_t at[kDepthwiseMveBand + 4];
  const index_t outputs = band_rows * out_w;
  for (index_t j = 0; j < outputs + 4; ++j)
    at[j] = j < outputs ? static_cast<std::uint16_t>((j / out_w * wp + j % out_w) * stride) : 0;
  // Each input row's bytes that land in the band: columns [pad_w, pad_w + copied).
  const index_t copied = in_w < wp - p.pad_w ? in_w : wp - p.pad_w;
  std::uint8_t* const band_bytes = reinterpret_cast<std::uint8_t*>(band);
  const std::uint8_t* const x_bytes = reinterpret_cast<const std::uint8_t*>(x.data);
  const mve_pred16_t row_pred = vctp8q(static_cast<std::uint32_t>(copied));  // (rows of up to 16 bytes)
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t oh0 = 0; oh0 < out_h; oh0 += band_rows) {
      const index_t rows = out_h - oh0 < band_rows ? out_h - oh0 : band_rows, flat = rows * out_w;
      const index_t ih0 = oh0 * stride - p.pad_h, rows_in = (rows - 1) * stride + 3;
      // The padding (x's zero point) once per band; the channels overwrite the rows' insides.
      fill_bytes(band_bytes, static_cast<std::uint8_t>(zx), rows_in * wp);
      const index_t first = ih0 < 0 ? -ih0 : 0, last = in_h - ih0 < rows_in ? in_h - ih0 : rows_in;
      std::uint8_t* const dst0 = band_bytes + p.pad_w;
      for (index_t c = 0; c < p.out_channels; ++c) {
        const std::uint8_t* xc = x_bytes + (n * p.in_channels + c) * in_plane;
        const W* wc = w.data + c * 9;
        const std::int32_t zw = w.zero_point_at(c);
        std::int32_t k[9], weight_sum = 0;
        for (index_t t = 0; t < 9; ++t) weight_sum += k[t] = static_cast<std::int32_t>(wc[t]) - zw;
        const std::int32_t correction = static_cast<std::int32_t>(zx) * weight_sum;
        if (copied <= 16)
          for (index_t r = first; r < last; ++r)
            vstrbq_p_u8(dst0 + r * wp, vldrbq_z_u8(xc + (ih0 + r) * in_w, row_pred), row_pred);
        else
          for (index_t r = first; r < last; ++r) copy_bytes(dst0 + r * wp, xc + (ih0 + r) * in_w, copied);
        for (index_t j = 0; j < flat; j += 4)
          vstrwq_s32(acc + j, depthwise_3x3_gathers(band, wp, vldrhq_u32(at + j), k));
        store_row(out, c, (n * p.out_channels + c) * out_plane + oh0 * out_w, acc, flat, correction);
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
