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

// ---- rt::qconv_pointwise_s8: sixteen channels per VMLADAVA.S8 ----
//
// The weights as int8 bytes in tiles (qconv_pointwise_s8_pack_weights: per tile of four output
// channels and vector of sixteen input channels, the four rows' sixteen bytes adjacent), the
// input transposed per block of positions onto the stack: per pair of positions and vector of
// channels, sixteen bytes of the first position's channels then sixteen of the second's, flipped
// to int8 (x - 128; the correction takes (x_zp - 128) times the row sums). A position's eight
// channels are one byte gather (VLDRB.U16 at offsets 0, plane, ..., 7 plane; planes past 9,362
// four channels per VLDRB.U32), one VEOR and one narrowing store, once per block for all the
// output channels. The register tile is four output channels x two positions: per vector of
// sixteen channels two loads of x, four of weights (one pointer, immediate offsets) and eight
// VMLADAVA.S8, 16 instructions with the loop for 128 multiply-accumulates (the int16 tile above:
// 17 for 64). The block holds up to kPointwiseS8BlockBytes (two positions at least: past 1,024
// channels the channels go in chunks, each transposed once per tile of output channels).
constexpr index_t kPointwiseS8BlockBytes = 2048;
constexpr index_t kPointwiseS8MaxPositions = 64;  // positions requantized together

// One gather of a position's channels (eight in 16-bit lanes, four in 32-bit lanes for planes
// past the 16-bit offsets) flipped to int8 and stored as bytes at d; predicated: lanes past the
// input's channels not read.
ONNXC_INLINE void pointwise_s8_part(std::uint8_t* d, const std::uint8_t* src, uint16x8_t offsets) {
  vstrbq_u16(d, veorq_u16(vldrbq_gather_offset_u16(src, offsets), vdupq_n_u16(0x80)));
}
ONNXC_INLINE void pointwise_s8_part(std::uint8_t* d, const std::uint8_t* src, uint16x8_t offsets, mve_pred16_t pred) {
  vstrbq_u16(d, veorq_u16(vldrbq_gather_offset_z_u16(src, offsets, pred), vdupq_n_u16(0x80)));
}
ONNXC_INLINE void pointwise_s8_part(std::uint8_t* d, const std::uint8_t* src, uint32x4_t offsets) {
  vstrbq_u32(d, veorq_u32(vldrbq_gather_offset_u32(src, offsets), vdupq_n_u32(0x80)));
}
ONNXC_INLINE void pointwise_s8_part(std::uint8_t* d, const std::uint8_t* src, uint32x4_t offsets, mve_pred16_t pred) {
  vstrbq_u32(d, veorq_u32(vldrbq_gather_offset_z_u32(src, offsets, pred), vdupq_n_u32(0x80)));
}
ONNXC_INLINE mve_pred16_t pointwise_s8_lanes(uint16x8_t, std::uint32_t n) { return vctp16q(n); }
ONNXC_INLINE mve_pred16_t pointwise_s8_lanes(uint32x4_t, std::uint32_t n) { return vctp32q(n); }

// Positions i0 .. i0 + n - 1 (a last odd one twice) of the vectors [c0 / 16, c0 / 16 + vectors)
// of x's channels into dst in the block's layout: per gather of a part's channels, the pairs of
// positions in the inner loop (two gathers, two VEORs, two narrowing stores). Offsets: a part's
// channels' offsets (0, plane, 2 plane, ...), 16- or 32-bit lanes.
template <class Offsets>
inline void pointwise_s8_transpose(const std::uint8_t* x, index_t plane, index_t channels, index_t c0, index_t vectors,
                                   index_t i0, index_t n, std::int8_t* dst, Offsets offsets) {
  constexpr index_t kPart = 16 / sizeof(offsets[0]);  // channels per gather
  const index_t pair_bytes = vectors * 2 * kPointwiseS8Lanes, pairs = n / 2;
  for (index_t v = 0; v < vectors; ++v)
    for (index_t part = 0; part < kPointwiseS8Lanes / kPart; ++part) {
      const index_t c = c0 + v * kPointwiseS8Lanes + part * kPart, left = channels - c;
      // (channels past the input's: not read, 0 flipped to -128; their weights are 0)
      const std::uint8_t* src = x + i0 + (left > 0 ? c * plane : 0);
      std::uint8_t* d = reinterpret_cast<std::uint8_t*>(dst) + v * 2 * kPointwiseS8Lanes + part * kPart;
      const std::uint32_t active = static_cast<std::uint32_t>(left <= 0 ? 0 : left < kPart ? left : kPart);
      const mve_pred16_t pred = pointwise_s8_lanes(offsets, active);
      if (active == kPart)  // (whole gathers unpredicated: GCC moves each predicate through a register)
        for (index_t q = 0; q < pairs; ++q, src += 2, d += pair_bytes) {
          pointwise_s8_part(d, src, offsets);
          pointwise_s8_part(d + kPointwiseS8Lanes, src + 1, offsets);
        }
      else
        for (index_t q = 0; q < pairs; ++q, src += 2, d += pair_bytes) {
          pointwise_s8_part(d, src, offsets, pred);
          pointwise_s8_part(d + kPointwiseS8Lanes, src + 1, offsets, pred);
        }
      if (n % 2) {
        pointwise_s8_part(d, src, offsets, pred);
        pointwise_s8_part(d + kPointwiseS8Lanes, src, offsets, pred);
      }
    }
}

// The tile's eight sums over `vectors` (>= 1) vectors: xt the pair's transposed bytes, w the
// tile's packed weights; output channel r's two sums to sums[r * row_stride], [r * row_stride + 1].
// The first vector starts the sums (VMLADAV), the others add (VMLADAVA); the stores are STRDs.
template <index_t RowStride>
ONNXC_INLINE void pointwise_s8_tile(const std::int8_t* xt, const std::int8_t* w, index_t vectors, std::int32_t* sums) {
  static_assert(RowStride * 4 <= 1020, "STRD's offsets");
  register std::int32_t a0 __asm__("r0"), a1 __asm__("r2"), a2 __asm__("r4"), a3 __asm__("r6");
  register std::int32_t a4 __asm__("r8"), a5 __asm__("r10"), a6 __asm__("r12"), a7 __asm__("r14");
  std::int32_t n = static_cast<std::int32_t>(vectors) - 1;
  int8x16_t t0, t1, tw;
#define ONNXC_POINTWISE_S8_STEP(op)                   \
  "vldrb.u8 %q[t0], [%[x]], #32\n\t"                  \
  "vldrb.u8 %q[t1], [%[x], #-16]\n\t"                 \
  "vldrb.u8 %q[tw], [%[w]], #64\n\t"                  \
  op " %[a0], %q[t0], %q[tw]\n\t"                     \
  op " %[a1], %q[t1], %q[tw]\n\t"                     \
  "vldrb.u8 %q[tw], [%[w], #-48]\n\t"                 \
  op " %[a2], %q[t0], %q[tw]\n\t"                     \
  op " %[a3], %q[t1], %q[tw]\n\t"                     \
  "vldrb.u8 %q[tw], [%[w], #-32]\n\t"                 \
  op " %[a4], %q[t0], %q[tw]\n\t"                     \
  op " %[a5], %q[t1], %q[tw]\n\t"                     \
  "vldrb.u8 %q[tw], [%[w], #-16]\n\t"                 \
  op " %[a6], %q[t0], %q[tw]\n\t"                     \
  op " %[a7], %q[t1], %q[tw]\n\t"
  __asm__ volatile(
      ONNXC_POINTWISE_S8_STEP("vmladav.s8")
      "cmp %[n], #0\n\t"
      "beq 2f\n\t"
      "1:\n\t"
      ONNXC_POINTWISE_S8_STEP("vmladava.s8")
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      "2:\n\t"
      "strd %[a0], %[a1], [%[s]]\n\t"
      "strd %[a2], %[a3], [%[s], #%c[o1]]\n\t"
      "strd %[a4], %[a5], [%[s], #%c[o2]]\n\t"
      "strd %[a6], %[a7], [%[s], #%c[o3]]\n\t"
      : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [a4] "=&r"(a4), [a5] "=&r"(a5),
        [a6] "=&r"(a6), [a7] "=&r"(a7), [x] "+r"(xt), [w] "+r"(w), [n] "+r"(n), [t0] "=&w"(t0), [t1] "=&w"(t1),
        [tw] "=&w"(tw)
      : [s] "r"(sums), [o1] "i"(RowStride * 4), [o2] "i"(RowStride * 8), [o3] "i"(RowStride * 12)
      : "cc", "memory");
#undef ONNXC_POINTWISE_S8_STEP
}

template <class Out>
inline void qconv_pointwise_s8_mve(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                                   const std::int8_t* w_packed, const index_t* row_sums, Out out) {
  constexpr index_t kTileBytes = kPointwiseTileChannels * kPointwiseS8Lanes;  // one vector of a tile's weights
  const index_t plane = p.in_d * p.in_h * p.in_w, vectors = qconv_pointwise_s8_vectors(p);
  const index_t chunk_max = kPointwiseS8BlockBytes / (2 * kPointwiseS8Lanes);
  const index_t chunk = vectors < chunk_max ? vectors : chunk_max, chunks = (vectors + chunk - 1) / chunk;
  index_t positions = kPointwiseS8BlockBytes / (kPointwiseS8Lanes * chunk) / 2 * 2;
  if (positions > kPointwiseS8MaxPositions) positions = kPointwiseS8MaxPositions;
  const bool wide = 7 * plane > 65535;  // (the 16-bit gather's offsets)
  alignas(16) std::int8_t block[kPointwiseS8BlockBytes];
  std::int32_t sums[kPointwiseTileChannels][kPointwiseS8MaxPositions];
  std::int32_t tile[kPointwiseTileChannels * 2];
  const std::int32_t x_offset = static_cast<std::int32_t>(x_zero_point) - 128;
  const auto transpose = [&](const std::uint8_t* xb, index_t c0, index_t nv, index_t i0, index_t n) {
    if (wide)
      pointwise_s8_transpose(xb, plane, p.in_channels, c0, nv, i0, n, block,
                             vmulq_n_u32(vidupq_n_u32(0u, 1), static_cast<std::uint32_t>(plane)));
    else
      pointwise_s8_transpose(xb, plane, p.in_channels, c0, nv, i0, n, block,
                             vmulq_n_u16(vidupq_n_u16(0u, 1), static_cast<std::uint16_t>(plane)));
  };
  for (index_t b = 0; b < p.batch; ++b) {
    const std::uint8_t* xb = x + b * p.in_channels * plane;
    for (index_t i0 = 0; i0 < plane; i0 += positions) {
      const index_t n = plane - i0 < positions ? plane - i0 : positions;
      if (chunks == 1) transpose(xb, 0, vectors, i0, n);
      for (index_t m = 0; m < p.out_channels; m += kPointwiseTileChannels) {
        const index_t rows = p.out_channels - m < kPointwiseTileChannels ? p.out_channels - m : kPointwiseTileChannels;
        for (index_t ch = 0; ch < chunks; ++ch) {
          const index_t v0 = ch * chunk, nv = vectors - v0 < chunk ? vectors - v0 : chunk;
          if (chunks > 1) transpose(xb, v0 * kPointwiseS8Lanes, nv, i0, n);
          const std::int8_t* wt = w_packed + (m / kPointwiseTileChannels * vectors + v0) * kTileBytes;
          if (ch == 0) {  // (past an odd n: the sums have room)
            for (index_t j = 0; j < n; j += 2)
              pointwise_s8_tile<kPointwiseS8MaxPositions>(block + j * nv * kPointwiseS8Lanes, wt, nv, &sums[0][j]);
          } else {
            for (index_t j = 0; j < n; j += 2) {
              pointwise_s8_tile<2>(block + j * nv * kPointwiseS8Lanes, wt, nv, tile);
              ONNXC_UNROLL for (index_t r = 0; r < kPointwiseTileChannels; ++r) {
                sums[r][j] += tile[r * 2];
                sums[r][j + 1] += tile[r * 2 + 1];
              }
            }
          }
        }
        for (index_t r = 0; r < rows; ++r)
          store_row(out, m + r, (b * p.out_channels + m + r) * plane + i0, sums[r], n,
                    x_offset * static_cast<std::int32_t>(row_sums[m + r]));
      }
    }
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_POINTWISE_MVE_H
