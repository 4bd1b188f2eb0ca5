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

constexpr index_t kDepthwise3x3DspSums = 1024;     // a band's sums (at most 4 KB)
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
    copy_bytes_by_words(reinterpret_cast<std::uint8_t*>(dst + 1), reinterpret_cast<const std::uint8_t*>(src), width);
    std::memcpy(dst + 1 + width, &fill, 4);
  }
}

// (Not inlined into the band's function: the pass's memory operands then lie near sp, not
// past the band's 5 KB of stack, where they would take a register.)
#if defined(__GNUC__)
#define ONNXC_DEPTHWISE_DSP_NOINLINE __attribute__((noinline))
#else
#define ONNXC_DEPTHWISE_DSP_NOINLINE inline
#endif

// Output rows 0 to 2 * row_pairs - 1 of a band (row r's sums s[r * width + ow]), each
// starting at `start`, from its padded rows p0 (input row -1 of the band on, Stride bytes
// apart), two rows at a time. Two outputs of each row per pass, right to left (an odd width's extra output of row r lands
// on row r + 1's first, written after it): the four rows' words loaded and split once for both
// output rows. In optimised Thumb-2 builds inline assembly: thirteen registers (the middle taps of
// kernel rows 0 and 1 as the halves of one word: SMLABT / SMLATT), 47 instructions for four
// outputs where GCC's loop over the same C spilled to about 58.
template <index_t Stride, class X>
ONNXC_DEPTHWISE_DSP_NOINLINE void depthwise_3x3_dsp_row_pairs(const X* p0, std::int32_t* s, index_t width,
                                                              index_t row_pairs, const Depthwise3x3Row* k,
                                                              std::int32_t start) {
  const index_t last = (width - 1) / 2 * 2;
#if defined(ONNXC_QUANT_DUAL_MAC) && defined(__thumb2__) && defined(__OPTIMIZE__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(__clang__)  // (clang finds no 13 registers for it)
#define ONNXC_DEPTHWISE_DSP_ASM
  static_assert(3 * Stride <= 255, "rows within a negative 8-bit offset of the last");
  const std::uint32_t o0 = k[0].outer, o1 = k[1].outer, o2 = k[2].outer;
  const std::uint32_t m01 = (k[0].middle & 0xFFFFu) | (k[1].middle << 16), m2 = k[2].middle;
#endif
  for (index_t pair = 0; pair < row_pairs; ++pair, p0 += 2 * Stride, s += 2 * width) {
#if defined(ONNXC_DEPTHWISE_DSP_ASM)
  const X* q = p0 + 3 * Stride + last;  // row r + 2's word at ow (the others below it)
  const X* end = p0 + 3 * Stride - 2;
  std::int32_t* so = s + last;
  const index_t b_offset = width * 4 + 8;  // row r + 1's sums from so after its step back
  std::int32_t a0, a1, b0, b1;
  std::uint32_t e, o;
#define ONNXC_DEPTHWISE_DSP_SPLIT(EXT) \
  EXT " %[e], %[o]\n\t"                \
  EXT " %[o], %[o], ror #8\n\t"
#define ONNXC_DEPTHWISE_DSP_TAPS(A0, A1, OUTER, MID, LOW_MID)     \
  "smlad %[" A0 "], %[e], %[" OUTER "], %[" A0 "]\n\t"            \
  "smlab" LOW_MID " %[" A0 "], %[o], %[" MID "], %[" A0 "]\n\t"   \
  "smlad %[" A1 "], %[o], %[" OUTER "], %[" A1 "]\n\t"            \
  "smlat" LOW_MID " %[" A1 "], %[e], %[" MID "], %[" A1 "]\n\t"
#define ONNXC_DEPTHWISE_DSP_PASS(EXT)                                                         \
  "1:\n\t"                                                                                    \
  "ldr %[a0], %[st]\n\t"                                                                      \
  "mov %[a1], %[a0]\n\t"                                                                      \
  "mov %[b0], %[a0]\n\t"                                                                      \
  "mov %[b1], %[a0]\n\t"                                                                      \
  "ldr %[o], [%[q], #-%c[s3]]\n\t" ONNXC_DEPTHWISE_DSP_SPLIT(EXT)                             \
  ONNXC_DEPTHWISE_DSP_TAPS("a0", "a1", "o0", "m01", "b")                                      \
  "ldr %[o], [%[q], #-%c[s2]]\n\t" ONNXC_DEPTHWISE_DSP_SPLIT(EXT)                             \
  ONNXC_DEPTHWISE_DSP_TAPS("a0", "a1", "o1", "m01", "t")                                      \
  ONNXC_DEPTHWISE_DSP_TAPS("b0", "b1", "o0", "m01", "b")                                      \
  "ldr %[o], [%[q], #-%c[s1]]\n\t" ONNXC_DEPTHWISE_DSP_SPLIT(EXT)                             \
  ONNXC_DEPTHWISE_DSP_TAPS("a0", "a1", "o2", "m2", "b")                                       \
  ONNXC_DEPTHWISE_DSP_TAPS("b0", "b1", "o1", "m01", "t")                                      \
  "strd %[a0], %[a1], [%[so]], #-8\n\t"                                                       \
  "ldr %[o], [%[q]], #-2\n\t" ONNXC_DEPTHWISE_DSP_SPLIT(EXT)                                  \
  ONNXC_DEPTHWISE_DSP_TAPS("b0", "b1", "o2", "m2", "b")                                       \
  "ldr %[a0], %[bo]\n\t"                                                                      \
  "add %[a0], %[a0], %[so]\n\t"                                                               \
  "strd %[b0], %[b1], [%[a0]]\n\t"                                                            \
  "ldr %[a1], %[end]\n\t"                                                                     \
  "cmp %[q], %[a1]\n\t"                                                                       \
  "bne 1b\n\t"
#define ONNXC_DEPTHWISE_DSP_OPERANDS                                                                         \
  : [q] "+r"(q), [so] "+r"(so), [a0] "=&r"(a0), [a1] "=&r"(a1), [b0] "=&r"(b0), [b1] "=&r"(b1), [e] "=&r"(e), \
    [o] "=&r"(o)                                                                                             \
  : [o0] "r"(o0), [o1] "r"(o1), [o2] "r"(o2), [m01] "r"(m01), [m2] "r"(m2), [st] "m"(start), [bo] "m"(b_offset), \
    [end] "m"(end), [s1] "n"(Stride), [s2] "n"(2 * Stride), [s3] "n"(3 * Stride)                            \
  : "cc", "memory"
  if (std::numeric_limits<X>::is_signed) {
    __asm__ volatile(ONNXC_DEPTHWISE_DSP_PASS("sxtb16") ONNXC_DEPTHWISE_DSP_OPERANDS);
  } else {
    __asm__ volatile(ONNXC_DEPTHWISE_DSP_PASS("uxtb16") ONNXC_DEPTHWISE_DSP_OPERANDS);
  }
#undef ONNXC_DEPTHWISE_DSP_OPERANDS
#undef ONNXC_DEPTHWISE_DSP_PASS
#undef ONNXC_DEPTHWISE_DSP_TAPS
#undef ONNXC_DEPTHWISE_DSP_SPLIT
#else
  const X* p1 = p0 + Stride;
  const X* p2 = p1 + Stride;
  const X* p3 = p2 + Stride;
  for (index_t ow = last; ow >= 0; ow -= 2) {
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
#endif
  }
#undef ONNXC_DEPTHWISE_DSP_ASM
}

// A padded row's bytes for `width` columns: at least width + 5, one of four strides (the
// two-row pass's offsets).
inline index_t depthwise_3x3_dsp_stride(index_t width) {
  return width + 5 <= 12 ? 12 : width + 5 <= 20 ? 20 : width + 5 <= 36 ? 36 : 72;
}

// Rows per band: their sums (an odd width's last pair writes one past the band) and padded rows
// fit kDepthwise3x3DspSums and kDepthwise3x3DspPadded; bands of about equal rows.
inline index_t depthwise_3x3_dsp_band(index_t width, index_t height) {
  const index_t stride = depthwise_3x3_dsp_stride(width);
  index_t band = (kDepthwise3x3DspSums - 1) / width;
  band = band < kDepthwise3x3DspPadded / stride - 2 ? band : kDepthwise3x3DspPadded / stride - 2;
  const index_t bands = (height + band - 1) / band;
  return (height + bands - 1) / bands;
}

// The sums' bytes at the start of depthwise_3x3_dsp's scratch, then the padded rows'.
inline index_t depthwise_3x3_dsp_sums_bytes(const ConvParams& p) {
  return 4 * (depthwise_3x3_dsp_band(p.in_w, p.in_h) * p.in_w + 1);
}

// depthwise_3x3_dsp in `scratch` (inlined, so the stack form's planes are addressed from sp).
template <class X, class W, class Out>
ONNXC_INLINE void depthwise_3x3_dsp_in(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out,
                                 std::uint8_t* scratch) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t width = p.in_w, height = p.in_h, plane = height * width;
  const index_t stride = depthwise_3x3_dsp_stride(width), band = depthwise_3x3_dsp_band(width, height);
  std::int32_t* sums = reinterpret_cast<std::int32_t*>(scratch);
  X* padded = reinterpret_cast<X*>(scratch + depthwise_3x3_dsp_sums_bytes(p));
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
        const index_t row_pairs = rows / 2;
        switch (stride) {  // (the rows' offsets are the pass's immediates)
          case 12: depthwise_3x3_dsp_row_pairs<12>(padded, sums, width, row_pairs, k, start); break;
          case 20: depthwise_3x3_dsp_row_pairs<20>(padded, sums, width, row_pairs, k, start); break;
          case 36: depthwise_3x3_dsp_row_pairs<36>(padded, sums, width, row_pairs, k, start); break;
          default: depthwise_3x3_dsp_row_pairs<72>(padded, sums, width, row_pairs, k, start); break;
        }
        const index_t r = 2 * row_pairs;
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

// The band's planes on the stack (about 5.3 KB), in a call of its own.
template <class X, class W, class Out>
ONNXC_DEPTHWISE_DSP_NOINLINE void depthwise_3x3_dsp_on_stack(const ConvParams& p, QuantOperand<X> x,
                                                             QuantOperand<W> w, Out out) {
  alignas(4) std::uint8_t planes[4 * (kDepthwise3x3DspSums + 1) + kDepthwise3x3DspPadded];
  depthwise_3x3_dsp_in(p, x, w, out, planes);
}

// depthwise_3x3 (same arguments and conditions) by bands of rows; scratch:
// depthwise_3x3_dsp_scratch_bytes(p) bytes, 4-byte aligned (the band's sums and padded rows), or
// null: on the stack.
template <class X, class W, class Out>
inline void depthwise_3x3_dsp(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out,
                              std::uint8_t* scratch = nullptr) {
  if (!scratch) return depthwise_3x3_dsp_on_stack(p, x, w, out);
  depthwise_3x3_dsp_in(p, x, w, out, scratch);
}

}  // namespace detail

// Bytes of scratch rt::depthwise_3x3 takes on cores with dual 16-bit multiply-accumulate but no
// Helium: a band's sums and padded rows, as the shape needs (at most about 5.3 KB).
inline index_t depthwise_3x3_dsp_scratch_bytes(const ConvParams& p) {
  const index_t band = detail::depthwise_3x3_dsp_band(p.in_w, p.in_h);
  return detail::depthwise_3x3_dsp_sums_bytes(p) + (band + 2) * detail::depthwise_3x3_dsp_stride(p.in_w);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_DEPTHWISE_ARMV7EM_DSP_H
