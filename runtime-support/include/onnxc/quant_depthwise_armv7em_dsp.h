// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::depthwise_3x3 for cores with dual 16-bit multiply-accumulate but no Helium (Armv7E-M DSP
// extension: Cortex-M4, M7): depthwise_3x3_dsp. Included by quant.h after the kernel-row helpers
// it shares with the portable form (depthwise_3x3_pad_row, depthwise_3x3_kernel, depthwise_3x3_row),
// whose portable forms let hosts run and test it.
//
// The same products as depthwise_3x3 (two adjacent outputs per word of a padded row, SMLAD on
// the outer taps, SMLABB / SMLATB on the middle ones), but by bands of rows instead of one row at
// a time: a band's padded input rows are written once (no ring, no row index modulo 3), its sums
// go into one plane on the stack and are requantized by one store_row per channel and band (kws'
// 25 x 5 planes: one call per channel instead of 25, whose per-call work was about as much as
// the five outputs' requantization).
#ifndef ONNXC_QUANT_DEPTHWISE_ARMV7EM_DSP_H
#define ONNXC_QUANT_DEPTHWISE_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {
namespace detail {

constexpr index_t kDepthwise3x3DspSums = 1024;     // a band's sums (4 KB on the stack)
constexpr index_t kDepthwise3x3DspPadded = 1224;   // a band's padded rows (18 of the widest)

// Padded rows `stride` bytes apart (a multiple of 4, at least width + 5): x's zero point, the
// input row, zero points over the next four bytes (the last output of an odd width reads its
// word two bytes past the row). A row of four bytes or more by words, the last one ending at the
// row's end (overlapping the one before; nothing read past the row); rows the source lacks
// (ih < 0 or >= height) all zero points.
template <class X>
inline void depthwise_3x3_dsp_pad_rows(const X* plane, index_t width, index_t height, index_t first, index_t rows,
                                       index_t stride, X zx, X* dst) {
  const std::uint32_t fill = 0x01010101u * static_cast<std::uint8_t>(zx);
  for (index_t t = 0; t < rows; ++t, dst += stride) {
    const index_t ih = first + t;
    if (ih < 0 || ih >= height) {
      for (index_t j = 0; j < stride; j += 4) std::memcpy(dst + j, &fill, 4);
      continue;
    }
    const X* src = plane + ih * width;
    dst[0] = zx;
    if (width >= 4) {
      for (index_t j = 0; j < width - 4; j += 4) {
        const std::uint32_t v = load_u32(src + j);
        std::memcpy(dst + 1 + j, &v, 4);
#if defined(__GNUC__)
        __asm__("" : "+r"(dst));  // (a word per turn, not a call of memcpy for a few bytes)
#endif
      }
      const std::uint32_t last = load_u32(src + width - 4);
      std::memcpy(dst + width - 3, &last, 4);
    } else {
      for (index_t j = 0; j < width; ++j) dst[1 + j] = src[j];
    }
    std::memcpy(dst + 1 + width, &fill, 4);
  }
}

// depthwise_3x3 (same arguments and conditions) by bands of rows.
template <class X, class W, class Out>
inline void depthwise_3x3_dsp(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t width = p.in_w, height = p.in_h, plane = height * width;
  const index_t stride = (width + 5 + 3) / 4 * 4;  // a padded row's bytes
  // Rows per band: their sums (an odd width's last pair writes one past the band) and padded
  // rows fit the stack's planes; bands of about equal rows.
  index_t band = (kDepthwise3x3DspSums - 1) / width;
  band = band < kDepthwise3x3DspPadded / stride - 2 ? band : kDepthwise3x3DspPadded / stride - 2;
  const index_t bands = (height + band - 1) / band;
  band = (height + bands - 1) / bands;
  X padded[kDepthwise3x3DspPadded];
  std::int32_t sums[kDepthwise3x3DspSums + 1];
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c) {
      const X* xc = x.data + (n * p.in_channels + c) * plane;
      const W* wc = w.data + c * 9;
      const std::int32_t zw = w.zero_point_at(c);
      Depthwise3x3Row k[3];
      // (the sums start at the bias less x's zero point's products: row_start)
      const std::int32_t start = row_start(out, c, static_cast<std::int32_t>(zx) * depthwise_3x3_kernel(wc, zw, k));
      for (index_t oh0 = 0; oh0 < height; oh0 += band) {
        const index_t rows = height - oh0 < band ? height - oh0 : band;
        depthwise_3x3_dsp_pad_rows(xc, width, height, oh0 - 1, rows + 2, stride, zx, padded);
        // Row r's sums at sums[r * width ..]: an odd width's extra output lands on the next
        // row's first, which that row then writes (the last row's one past the band). Two rows
        // at a time: their four input rows' words are loaded and split once for both.
        index_t r = 0;
        for (; r + 2 <= rows; r += 2) {
          const X* p0 = padded + r * stride;
          const X* p1 = p0 + stride;
          const X* p2 = p1 + stride;
          const X* p3 = p2 + stride;
          std::int32_t* s = sums + r * width;
          // (Right to left: an odd width's extra output of row r lands on row r + 1's first,
          // written after it.)
          for (index_t ow = (width - 1) / 2 * 2; ow >= 0; ow -= 2) {
            std::int32_t a0 = start, a1 = start, b0 = start, b1 = start;
            depthwise_3x3_row(p0 + ow, k[0], a0, a1);
            depthwise_3x3_row(p1 + ow, k[1], a0, a1);
            depthwise_3x3_row(p2 + ow, k[2], a0, a1);
            depthwise_3x3_row(p1 + ow, k[0], b0, b1);
            depthwise_3x3_row(p2 + ow, k[1], b0, b1);
            depthwise_3x3_row(p3 + ow, k[2], b0, b1);
            s[ow] = a0;
            s[ow + 1] = a1;
            s[width + ow] = b0;
            s[width + ow + 1] = b1;
          }
        }
        if (r < rows) {
          std::int32_t* s = sums + r * width;
          for (index_t ow = 0; ow < width; ow += 2) {
            std::int32_t a0 = start, a1 = start;
            depthwise_3x3_row(padded + r * stride + ow, k[0], a0, a1);
            depthwise_3x3_row(padded + (r + 1) * stride + ow, k[1], a0, a1);
            depthwise_3x3_row(padded + (r + 2) * stride + ow, k[2], a0, a1);
            s[ow] = a0;
            s[ow + 1] = a1;
          }
        }
        store_row_started(out, c, (n * p.out_channels + c) * plane + oh0 * width, sums, rows * width);
      }
    }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_DEPTHWISE_ARMV7EM_DSP_H
