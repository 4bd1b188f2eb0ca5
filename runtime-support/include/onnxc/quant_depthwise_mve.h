// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::depthwise_3x3 for cores with the M-profile vector extension (Helium, MVE: Cortex-M55, M85),
// in place of the SMLAD pairs. Included by quant.h where __ARM_FEATURE_MVE is defined
// (ONNXC_QUANT_MVE); tests/firmware/kernels runs it against a direct convolution on the core.
//
// A band of output rows at a time: the input rows under it, each with its padding (x's zero
// point on both sides, whole rows of it above and below the plane), are copied one after the
// other into a buffer on the stack, so an output at flat index j of the band (over the padded
// width wp = width + 2) reads tap (kh, kw) at j + kh * wp + kw, across rows as well as within
// one: narrow planes (kws' 25 x 5) fill the vectors. Four flat outputs are one vector of int32
// lanes; each tap is one widening load of four bytes (VLDRB.U32 or .S32) and one VMLA by the
// tap's weight as a scalar (x * (w - zw) needs 17 bits: 16-bit lanes would overflow), 19
// instructions with the store for 36 multiply-accumulates; the two padded columns of each row
// are computed and dropped. The band's rows are moved together and requantized by one
// store_row. The band holds kDepthwiseMveBand flat outputs (at least one row; a whole plane of
// kws' 25 x 5): about 1.4 KB of stack. Each band copies two input rows more than it computes, so
// fewer bands copy less: 64 flat outputs (three bands on kws) took 14 % more instructions.
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

constexpr index_t kDepthwiseMveBand = 192;  // flat outputs per band (rows of width + 2)

ONNXC_INLINE int32x4_t depthwise_load4(const std::uint8_t* p) { return vreinterpretq_s32_u32(vldrbq_u32(p)); }
ONNXC_INLINE int32x4_t depthwise_load4(const std::int8_t* p) { return vldrbq_s32(p); }
ONNXC_INLINE int32x4_t depthwise_load4(const std::uint8_t* p, mve_pred16_t pred) {
  return vreinterpretq_s32_u32(vldrbq_z_u32(p, pred));
}
ONNXC_INLINE int32x4_t depthwise_load4(const std::int8_t* p, mve_pred16_t pred) { return vldrbq_z_s32(p, pred); }

// The nine taps of four flat outputs from src on (rows wp apart), weights k.
template <class X, class... Pred>
ONNXC_INLINE int32x4_t depthwise_3x3_vector(const X* src, index_t wp, const std::int32_t* k, Pred... pred) {
  int32x4_t a = vmulq_n_s32(depthwise_load4(src, pred...), k[0]);
  a = vmlaq_n_s32(a, depthwise_load4(src + 1, pred...), k[1]);
  a = vmlaq_n_s32(a, depthwise_load4(src + 2, pred...), k[2]);
  a = vmlaq_n_s32(a, depthwise_load4(src + wp, pred...), k[3]);
  a = vmlaq_n_s32(a, depthwise_load4(src + wp + 1, pred...), k[4]);
  a = vmlaq_n_s32(a, depthwise_load4(src + wp + 2, pred...), k[5]);
  a = vmlaq_n_s32(a, depthwise_load4(src + 2 * wp, pred...), k[6]);
  a = vmlaq_n_s32(a, depthwise_load4(src + 2 * wp + 1, pred...), k[7]);
  return vmlaq_n_s32(a, depthwise_load4(src + 2 * wp + 2, pred...), k[8]);
}

// n values of a byte type from src to dst (copy_bytes, sixteen per vector).
template <class X>
ONNXC_INLINE void depthwise_copy_mve(const X* src, index_t n, X* dst) {
  copy_bytes(reinterpret_cast<std::uint8_t*>(dst), reinterpret_cast<const std::uint8_t*>(src), n);
}

template <class X, class W, class Out>
inline void depthwise_3x3_mve(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t width = p.in_w, height = p.in_h, plane = height * width, wp = width + 2;
  const index_t band_rows = kDepthwiseMveBand / wp > 0 ? kDepthwiseMveBand / wp : 1;
  // The band's input rows, then the two bytes the last padded columns' taps read past them.
  X band[kDepthwiseMveBand + 2 * (kDepthwiseMveBand + 2) + 4];  // (rows up to kDepthwiseMveBand wide)
  std::int32_t acc[kDepthwiseMveBand + 8];  // (flat + 4 at most: the moves' last vector)
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c) {
      const X* xc = x.data + (n * p.in_channels + c) * plane;
      const W* wc = w.data + c * 9;
      const std::int32_t zw = w.zero_point_at(c);
      std::int32_t k[9], weight_sum = 0;
      for (index_t t = 0; t < 9; ++t) weight_sum += k[t] = static_cast<std::int32_t>(wc[t]) - zw;
      const std::int32_t correction = static_cast<std::int32_t>(zx) * weight_sum;
      for (index_t oh0 = 0; oh0 < height; oh0 += band_rows) {
        const index_t rows = height - oh0 < band_rows ? height - oh0 : band_rows;
        for (index_t r = 0; r < rows + 2; ++r) {  // input row oh0 - 1 + r, padded
          X* dst = band + r * wp;
          const index_t ih = oh0 - 1 + r;
          dst[0] = dst[wp - 1] = zx;
          if (ih >= 0 && ih < height)
            depthwise_copy_mve(xc + ih * width, width, dst + 1);
          else
            for (index_t j = 1; j <= width; ++j) dst[j] = zx;
        }
        band[(rows + 2) * wp] = band[(rows + 2) * wp + 1] = zx;
        const index_t flat = rows * wp, full = flat / 4 * 4;
        for (index_t j = 0; j < full; j += 4) vstrwq_s32(acc + j, depthwise_3x3_vector(band + j, wp, k));
        if (full < flat) {
          const mve_pred16_t pred = vctp32q(static_cast<std::uint32_t>(flat - full));
          vstrwq_p_s32(acc + full, depthwise_3x3_vector(band + full, wp, k, pred), pred);
        }
        // The rows' sums side by side (dropping the padded columns), requantized by one store_row.
        // Whole vectors: row r's last one reads up to acc[r * wp + wp] (zeros past flat) and
        // writes up to three sums past its row, where row r + 1's sums go next; it reads row
        // r + 1 from (r + 1) * wp > r * width + width + 3 on (r >= 1), so nothing unread is lost.
        vstrwq_s32(acc + flat, vdupq_n_s32(0));
        for (index_t r = 1; r < rows; ++r)
          for (index_t j = 0; j < width; j += 4) vstrwq_s32(acc + r * width + j, vldrwq_s32(acc + r * wp + j));
        store_row(out, c, (n * p.out_channels + c) * plane + oh0 * width, acc, rows * width, correction);
      }
    }
}

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
