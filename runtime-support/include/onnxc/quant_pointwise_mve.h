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
// eight products to a scalar. Whole vectors: the whole tile of four output channels times two
// positions in eight accumulators (pointwise_tile_vectors_mve, inline assembly). The last
// channels (fewer than eight) and single positions: two output channels at a time
// (pointwise_rows_mve, four accumulators), the vector predicated (VCTP): channels past the
// input's are not read, and their weights are 0.
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

// The whole tile (four output channels, two positions) over the `vectors` whole vectors of eight
// channels from x0 and w on, in eight accumulators: 2 x gathers, 4 weight gathers (one vector of
// the four pairs' addresses, advanced by the first load's writeback; the other rows at immediate
// offsets), 8 VMLADAVAs and 3 for the loop, 17 instructions for 64 multiply-accumulates. Inline
// assembly: VMLADAVA takes even registers, which only explicit register variables give (GCC
// otherwise moves the sums around the loop); r0-r12 and r14, so it builds with a frame pointer.
ONNXC_INLINE void pointwise_tile_vectors_mve(const std::uint8_t* x0, index_t plane, index_t vectors,
                                             const std::int32_t* w, PointwiseTile& out) {
  register std::int32_t a0 __asm__("r0") = 0, a1 __asm__("r2") = 0, a2 __asm__("r4") = 0, a3 __asm__("r6") = 0;
  register std::int32_t a4 __asm__("r8") = 0, a5 __asm__("r10") = 0, a6 __asm__("r12") = 0, a7 __asm__("r14") = 0;
  const uint16x8_t x_offsets = vmulq_n_u16(vidupq_n_u16(0u, 1), static_cast<std::uint16_t>(plane));
  const uint16x8_t x_offsets1 = vaddq_n_u16(x_offsets, 1);  // the second position
  // Byte addresses of row 0's words of four pairs, less one step (the first load pre-increments).
  uint32x4_t w_addresses = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0u, 1), 4 * kPointwiseTileChannels),
                                       static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(w)) - 64u);
  const std::uint8_t* x = x0;
  std::int32_t n = static_cast<std::int32_t>(vectors);
  const std::int32_t step = static_cast<std::int32_t>(8 * plane);
  uint16x8_t t0, t1;
  uint32x4_t tw;
  __asm__ volatile(
      "1:\n\t"
      "vldrb.u16 %q[t0], [%[x], %q[xo]]\n\t"
      "vldrb.u16 %q[t1], [%[x], %q[xo1]]\n\t"
      "vldrw.u32 %q[tw], [%q[wa], #64]!\n\t"
      "vmladava.s16 %[a0], %q[t0], %q[tw]\n\t"
      "vmladava.s16 %[a1], %q[t1], %q[tw]\n\t"
      "vldrw.u32 %q[tw], [%q[wa], #4]\n\t"
      "vmladava.s16 %[a2], %q[t0], %q[tw]\n\t"
      "vmladava.s16 %[a3], %q[t1], %q[tw]\n\t"
      "vldrw.u32 %q[tw], [%q[wa], #8]\n\t"
      "vmladava.s16 %[a4], %q[t0], %q[tw]\n\t"
      "vmladava.s16 %[a5], %q[t1], %q[tw]\n\t"
      "vldrw.u32 %q[tw], [%q[wa], #12]\n\t"
      "vmladava.s16 %[a6], %q[t0], %q[tw]\n\t"
      "vmladava.s16 %[a7], %q[t1], %q[tw]\n\t"
      "add %[x], %[x], %[step]\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4), [a5] "+r"(a5), [a6] "+r"(a6),
        [a7] "+r"(a7), [x] "+r"(x), [n] "+r"(n), [wa] "+w"(w_addresses), [t0] "=&w"(t0), [t1] "=&w"(t1),
        [tw] "=&w"(tw)
      : [xo] "w"(x_offsets), [xo1] "w"(x_offsets1), [step] "r"(step)
      : "cc", "memory");
  out[0][0] = a0;
  out[0][1] = a1;
  out[1][0] = a2;
  out[1][1] = a3;
  out[2][0] = a4;
  out[2][1] = a5;
  out[3][0] = a6;
  out[3][1] = a7;
}

// pointwise_tile's sums (four output channels, `Positions` positions).
template <int Positions>
ONNXC_INLINE void pointwise_tile_mve(const std::uint8_t* x0, index_t plane, index_t channels, const std::int32_t* w,
                                     PointwiseTile& out) {
  static_assert(kPointwiseTileChannels == 4, "two passes of two output channels");
  const index_t vectors = channels / 8;
  if (Positions == 1 || vectors == 0) {
    pointwise_rows_mve<Positions>(x0, plane, channels, w, 0, out);
    pointwise_rows_mve<Positions>(x0, plane, channels, w, 2, out);
    return;
  }
  pointwise_tile_vectors_mve(x0, plane, vectors, w, out);
  if (channels % 8 == 0) return;
  // The last channels (fewer than eight, predicated) two rows at a time, added to the tile.
  PointwiseTile tail;
  const std::uint8_t* x_tail = x0 + 8 * vectors * plane;
  const std::int32_t* w_tail = w + 4 * vectors * kPointwiseTileChannels;  // four pairs of each row per vector
  pointwise_rows_mve<Positions>(x_tail, plane, channels % 8, w_tail, 0, tail);
  pointwise_rows_mve<Positions>(x_tail, plane, channels % 8, w_tail, 2, tail);
  ONNXC_UNROLL for (int r = 0; r < kPointwiseTileChannels; ++r) {
    out[r][0] += tail[r][0];
    out[r][1] += tail[r][1];
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_POINTWISE_MVE_H
