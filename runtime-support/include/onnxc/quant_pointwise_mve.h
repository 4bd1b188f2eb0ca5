// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The register tile of rt::qconv_pointwise for cores with the M-profile vector extension
// (Helium, MVE: Cortex-M55, M85). Included by quant.h where __ARM_FEATURE_MVE is defined
// (ONNXC_QUANT_MVE), after the portable tile (detail::pointwise_tile) it replaces there;
// tests/firmware/kernels runs both against a direct convolution on the cores.
//
// Eight input channels are one vector of 16-bit lanes: a byte gather (VLDRB.U16, offsets 0,
// plane, ..., 7 plane) loads one position's eight channels in place from the NCHW input; the
// weights are the pairs qconv_pointwise_pack_weights wrote for SMLAD ((w[m, 2k], w[m, 2k + 1])
// per word, the tile's four channels' words adjacent), so one word gather (offsets 0, 4, 8, 12
// words) loads one output channel's eight weights of the same channels. VMLADAVA.S16 adds the
// eight products to a scalar. Two output channels times two positions per pass (four scalar
// accumulators: VMLADAVA takes even registers): per eight channels 2 + 2 gathers and 4
// VMLADAVAs for 32 multiply-accumulates. The last vector is predicated (VCTP): channels past
// the input's are not read, and their weights are 0.
#ifndef ONNXC_QUANT_POINTWISE_MVE_H
#define ONNXC_QUANT_POINTWISE_MVE_H

namespace onnxc {
namespace rt {
namespace detail {

// Whether the byte gathers reach every channel of a vector: offsets are 16-bit.
inline bool pointwise_mve_applies(index_t plane) { return 7 * plane <= 65535; }

// Rows (out channels) r0 and r0 + 1 of the tile at `Positions` (1 or 2) positions from x0 on.
template <int Positions>
ONNXC_INLINE void pointwise_rows_mve(const std::uint8_t* x0, index_t plane, index_t channels, const std::int32_t* w,
                                     int r0, PointwiseTile& out) {
  const uint16x8_t x_offsets = vmulq_n_u16(vidupq_n_u16(0u, 1), static_cast<std::uint16_t>(plane));
  const uint32x4_t w_offsets = vidupq_n_u32(0u, 4);  // one channel's words of four pairs
  std::int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  const std::uint8_t* x = x0;
  const std::int32_t* wp = w + r0;
  const index_t full = channels / 8, x_step = 8 * plane;
  for (index_t v = 0; v < full; ++v, x += x_step, wp += 4 * kPointwiseTileChannels) {
    const int16x8_t xv0 = vreinterpretq_s16_u16(vldrbq_gather_offset_u16(x, x_offsets));
    const int16x8_t wv0 = vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(wp, w_offsets));
    const int16x8_t wv1 = vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_s32(wp + 1, w_offsets));
    a00 = vmladavaq_s16(a00, xv0, wv0);
    a10 = vmladavaq_s16(a10, xv0, wv1);
    if (Positions == 2) {
      const int16x8_t xv1 = vreinterpretq_s16_u16(vldrbq_gather_offset_u16(x + 1, x_offsets));
      a01 = vmladavaq_s16(a01, xv1, wv0);
      a11 = vmladavaq_s16(a11, xv1, wv1);
    }
  }
  if (8 * full < channels) {
    const index_t left = channels - 8 * full;
    const mve_pred16_t xp = vctp16q(static_cast<std::uint32_t>(left));
    const mve_pred16_t wpred = vctp32q(static_cast<std::uint32_t>((left + 1) / 2));
    const int16x8_t xv0 = vreinterpretq_s16_u16(vldrbq_gather_offset_z_u16(x, x_offsets, xp));
    const int16x8_t wv0 = vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(wp, w_offsets, wpred));
    const int16x8_t wv1 = vreinterpretq_s16_s32(vldrwq_gather_shifted_offset_z_s32(wp + 1, w_offsets, wpred));
    a00 = vmladavaq_s16(a00, xv0, wv0);
    a10 = vmladavaq_s16(a10, xv0, wv1);
    if (Positions == 2) {
      const int16x8_t xv1 = vreinterpretq_s16_u16(vldrbq_gather_offset_z_u16(x + 1, x_offsets, xp));
      a01 = vmladavaq_s16(a01, xv1, wv0);
      a11 = vmladavaq_s16(a11, xv1, wv1);
    }
  }
  out[r0][0] = a00;
  out[r0][1] = a01;
  out[r0 + 1][0] = a10;
  out[r0 + 1][1] = a11;
}

// pointwise_tile's sums (four output channels, `Positions` positions).
template <int Positions>
ONNXC_INLINE void pointwise_tile_mve(const std::uint8_t* x0, index_t plane, index_t channels, const std::int32_t* w,
                                     PointwiseTile& out) {
  static_assert(kPointwiseTileChannels == 4, "two passes of two output channels");
  pointwise_rows_mve<Positions>(x0, plane, channels, w, 0, out);
  pointwise_rows_mve<Positions>(x0, plane, channels, w, 2, out);
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_POINTWISE_MVE_H
