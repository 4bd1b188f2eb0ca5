// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::qconv_pointwise for cores with dual 16-bit multiply-accumulate but no Helium (Armv7E-M DSP
// extension: Cortex-M4, M7; SMLAD). Included by quant.h after the dual 16-bit helpers it uses
// (load_u16, even_bytes, odd_bytes, dual_mac) and the pointwise weight packing, whose portable
// forms let hosts run and test it.
//
// The input is widened once per block of positions, not once per output channel: for each pair
// of positions (p, p + 1) and pair of input channels (c, c + 1) the block holds two words,
// (x[c, p], x[c + 1, p]) and (x[c, p + 1], x[c + 1, p + 1]) as unsigned 16-bit halves, the pairs
// of one pair of positions consecutive. The packed weights (qconv_pointwise_pack_weights: per
// tile of four output channels and channel pair, the four channels' words adjacent) give two
// adjacent output channels' words of a pair in one LDRD. The register tile is two output
// channels x two positions: per channel pair one LDRD of the positions' words, one LDRD of the
// channels' words and four SMLADs, 8 multiply-accumulates in 6 instructions (the tile in
// quant_gemm_armv7em_dsp.h, on bytes, takes 27 for 16; reading the planes in place took 20).
#ifndef ONNXC_QUANT_POINTWISE_ARMV7EM_DSP_H
#define ONNXC_QUANT_POINTWISE_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {
namespace detail {

#if defined(__GNUC__)
#define ONNXC_POINTWISE_DSP_NOINLINE __attribute__((noinline))
#else
#define ONNXC_POINTWISE_DSP_NOINLINE inline
#endif

constexpr index_t kPointwiseDspBlock = 32;         // positions per block (even)
constexpr index_t kPointwiseDspWords = 1024;       // the widest block (4 KB)

// The channel pairs widened at a time (all of them up to kPointwiseDspWords / 2) and the
// positions per block, for `pairs` channel pairs.
inline index_t pair_product_dsp_pairs(index_t pairs) {
  return pairs < kPointwiseDspWords / 2 ? pairs : kPointwiseDspWords / 2;  // (even past the limit)
}
inline index_t pair_product_dsp_positions(index_t pairs) {
  const index_t fit = kPointwiseDspWords / pair_product_dsp_pairs(pairs) / 2 * 2;  // columns whose pairs fit
  return fit < kPointwiseDspBlock ? fit : kPointwiseDspBlock;
}

// Words of the widened block pair_product_dsp needs for `pairs` channel pairs over `positions`
// columns (at most kPointwiseDspWords): the compiler plans them as the node's scratch.
inline index_t pair_product_dsp_words(index_t pairs, index_t positions) {
  const index_t block = pair_product_dsp_positions(pairs);
  const index_t count = positions < block ? positions : block;
  return (count + 1) / 2 * pair_product_dsp_pairs(pairs) * 2;
}

// Channel pairs [k0, k0 + kc) of `positions` positions (1 to kPointwiseDspBlock) from x0 on
// (channel 0 of the image, planes `plane` apart; `channels` in all) into `block`: word
// (pp * kc + k) * 2 + j holds (x[c, p], x[c + 1, p]) for c = 2 (k0 + k), p = 2 pp + j. Past the
// channels or the positions the halves are 0.
inline void pointwise_widen_dsp(const std::uint8_t* x0, index_t plane, index_t channels, index_t k0, index_t kc,
                                index_t positions, std::uint32_t* block) {
  const index_t pairs = positions / 2;
  const index_t whole = (2 * (k0 + kc) <= channels ? kc : (channels - 2 * k0) / 2);  // pairs of two real channels
  index_t pp = 0;
  // Two position pairs at a time: one word of four positions from each of the two channels, the
  // front and back pairs of positions joined (PKHBT, PKHTB), then split (UXTB16, with ROR 8):
  // 14 instructions for four positions of a channel pair where a position pair alone took 11.
  for (; pp + 2 <= pairs; pp += 2) {
    const std::uint8_t* x = x0 + 2 * k0 * plane + 2 * pp;
    std::uint32_t* b = block + pp * kc * 2;
    std::uint32_t* c = b + kc * 2;
    for (index_t k = 0; k < whole; ++k, x += 2 * plane, b += 2, c += 2) {
      const std::uint32_t first = load_u32(x), second = load_u32(x + plane);  // channels c, c + 1
      const std::uint32_t front = low_halves(first, second), back = high_halves(first, second);
      b[0] = even_bytes(front, std::uint8_t{});
      b[1] = odd_bytes(front, std::uint8_t{});
      c[0] = even_bytes(back, std::uint8_t{});
      c[1] = odd_bytes(back, std::uint8_t{});
    }
    if (whole < kc) {  // the odd last channel
      b[0] = x[0];
      b[1] = x[1];
      c[0] = x[2];
      c[1] = x[3];
    }
  }
  for (; pp < pairs; ++pp) {
    const std::uint8_t* x = x0 + 2 * k0 * plane + 2 * pp;
    std::uint32_t* b = block + pp * kc * 2;
    for (index_t k = 0; k < whole; ++k, x += 2 * plane, b += 2) {
      const std::uint32_t both = load_u16(x) | (load_u16(x + plane) << 16);  // [x_c,p x_c,p+1 x_c+1,p x_c+1,p+1]
      b[0] = even_bytes(both, std::uint8_t{});
      b[1] = odd_bytes(both, std::uint8_t{});
    }
    if (whole < kc) {  // the odd last channel
      b[0] = x[0];
      b[1] = x[1];
    }
  }
  if (positions % 2) {  // the last position alone (the one after it may lie past the input)
    const std::uint8_t* x = x0 + 2 * k0 * plane + 2 * pairs;
    std::uint32_t* b = block + pairs * kc * 2;
    for (index_t k = 0; k < kc; ++k, x += 2 * plane, b += 2) {
      const bool second = 2 * (k0 + k) + 1 < channels;
      b[0] = static_cast<std::uint32_t>(x[0]) | (second ? static_cast<std::uint32_t>(x[plane]) << 16 : 0u);
      b[1] = 0;
    }
  }
}

#if defined(ONNXC_QUANT_DUAL_MAC) && defined(__thumb2__) && defined(__OPTIMIZE__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__  // (-O0 cannot give the assembly its registers)
// pointwise_tiles_dsp's kc channel pairs (kc >= 2), the sums from start. Odd: kc is odd (its
// first pair alone); Skip: the double steps the first turn of four skips,
// (4 - (kc / 2) % 4) % 4.
template <int Skip, bool Odd>
inline void pointwise_turns_dsp(const std::uint32_t* block, const std::int32_t* w, index_t kc, index_t position_pairs,
                              const std::int32_t* start, std::int32_t (*sums)[kPointwiseDspBlock]) {
  // Eight channel pairs a turn as four double steps, each one LDM of the two positions' words of
  // two pairs, two LDRDs of the channels' words and eight SMLADs: 46 instructions for 64
  // multiply-accumulates with the loop (50 with an LDRD of the positions' words per pair). The
  // first turn is entered past Skip double steps (one branch), an odd kc's first pair taken
  // alone before it, so any kc is all in the assembly (the loads post-increment: nothing to
  // adjust). Thirteen registers, the LDM's four fixed (its list is in register order); the tile
  // loop stays in C (in the assembly too, with its counts in memory operands, GCC found no
  // registers for it at -O3).
  const std::uint32_t* xp = block;
  for (std::int32_t* so = sums[0]; so != sums[0] + 2 * position_pairs; so += 2) {
    const std::int32_t* wp = w;
    index_t n = (kc / 2 + 3) / 4;
    std::int32_t a00 = start[0], a01 = start[0], a10 = start[1], a11 = start[1];
    register std::uint32_t x0 __asm__("r0");
    register std::uint32_t x1 __asm__("r1");
    register std::uint32_t x2 __asm__("r2");
    register std::uint32_t x3 __asm__("r3");
    std::uint32_t w0, w1;
#define ONNXC_POINTWISE_DSP_PAIR           \
  "ldrd %[x0], %[x1], [%[xp]], #8\n\t"     \
  "ldrd %[w0], %[w1], [%[wp]], #16\n\t"    \
  "smlad %[a00], %[x0], %[w0], %[a00]\n\t" \
  "smlad %[a01], %[x1], %[w0], %[a01]\n\t" \
  "smlad %[a10], %[x0], %[w1], %[a10]\n\t" \
  "smlad %[a11], %[x1], %[w1], %[a11]\n\t"
#define ONNXC_POINTWISE_DSP_DOUBLE                            \
  "ldmia %[xp]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"           \
  "ldrd %[w0], %[w1], [%[wp]], #16\n\t"                      \
  "smlad %[a00], %[x0], %[w0], %[a00]\n\t"                   \
  "smlad %[a01], %[x1], %[w0], %[a01]\n\t"                   \
  "smlad %[a10], %[x0], %[w1], %[a10]\n\t"                   \
  "smlad %[a11], %[x1], %[w1], %[a11]\n\t"                   \
  "ldrd %[w0], %[w1], [%[wp]], #16\n\t"                      \
  "smlad %[a00], %[x2], %[w0], %[a00]\n\t"                   \
  "smlad %[a01], %[x3], %[w0], %[a01]\n\t"                   \
  "smlad %[a10], %[x2], %[w1], %[a10]\n\t"                   \
  "smlad %[a11], %[x3], %[w1], %[a11]\n\t"
#define ONNXC_POINTWISE_DSP_TURNS(ENTRY)                                                                         \
  ENTRY "1:\n\t" ONNXC_POINTWISE_DSP_DOUBLE "11:\n\t" ONNXC_POINTWISE_DSP_DOUBLE "12:\n\t"                       \
        ONNXC_POINTWISE_DSP_DOUBLE "13:\n\t" ONNXC_POINTWISE_DSP_DOUBLE "subs %[n], %[n], #1\n\t"                 \
        "bne 1b\n\t"                                                                                            \
      : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [xp] "+r"(xp), [wp] "+r"(wp),       \
        [n] "+r"(n), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [w0] "=&r"(w0),           \
        [w1] "=&r"(w1)                                                                                           \
      :                                                                                                          \
    : "cc", "memory"
    if (!Odd && Skip == 0) __asm__(ONNXC_POINTWISE_DSP_TURNS(""));
    if (!Odd && Skip == 1) __asm__(ONNXC_POINTWISE_DSP_TURNS("b 11f\n\t"));
    if (!Odd && Skip == 2) __asm__(ONNXC_POINTWISE_DSP_TURNS("b 12f\n\t"));
    if (!Odd && Skip == 3) __asm__(ONNXC_POINTWISE_DSP_TURNS("b 13f\n\t"));
    if (Odd && Skip == 0) __asm__(ONNXC_POINTWISE_DSP_TURNS(ONNXC_POINTWISE_DSP_PAIR));
    if (Odd && Skip == 1) __asm__(ONNXC_POINTWISE_DSP_TURNS(ONNXC_POINTWISE_DSP_PAIR "b 11f\n\t"));
    if (Odd && Skip == 2) __asm__(ONNXC_POINTWISE_DSP_TURNS(ONNXC_POINTWISE_DSP_PAIR "b 12f\n\t"));
    if (Odd && Skip == 3) __asm__(ONNXC_POINTWISE_DSP_TURNS(ONNXC_POINTWISE_DSP_PAIR "b 13f\n\t"));
#undef ONNXC_POINTWISE_DSP_TURNS
#undef ONNXC_POINTWISE_DSP_DOUBLE
#undef ONNXC_POINTWISE_DSP_PAIR
    so[0] = a00, so[1] = a01, so[kPointwiseDspBlock] = a10, so[kPointwiseDspBlock + 1] = a11;
  }
}
#endif

// The 2 x 2 tiles of output channels r = 0, 1 over the block's position pairs pp <
// position_pairs: sums[r][2 pp + j] = start[r] + dot(weights of channel r, position 2 pp + j)
// over the kc channel pairs (added to sums[r][2 pp + j] instead where `accumulate`), the
// weights' words of pair k at w[4 k + r], the positions' at block[(pp * kc + k) * 2 + j].
inline void pointwise_tiles_dsp(const std::uint32_t* block, const std::int32_t* w, index_t kc, index_t position_pairs,
                                bool accumulate, const std::int32_t* start, std::int32_t (*sums)[kPointwiseDspBlock]) {
#if defined(ONNXC_QUANT_DUAL_MAC) && defined(__thumb2__) && defined(__OPTIMIZE__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__  // (-O0 cannot give the assembly its registers)
  // (One channel pair, and the passes past kPointwiseDspWords / 2 pairs adding to the sums, in C.)
  if (!accumulate && kc >= 2) {
    switch ((4 - kc / 2 % 4) % 4 * 2 + kc % 2) {
      case 0: pointwise_turns_dsp<0, false>(block, w, kc, position_pairs, start, sums); break;
      case 1: pointwise_turns_dsp<0, true>(block, w, kc, position_pairs, start, sums); break;
      case 2: pointwise_turns_dsp<1, false>(block, w, kc, position_pairs, start, sums); break;
      case 3: pointwise_turns_dsp<1, true>(block, w, kc, position_pairs, start, sums); break;
      case 4: pointwise_turns_dsp<2, false>(block, w, kc, position_pairs, start, sums); break;
      case 5: pointwise_turns_dsp<2, true>(block, w, kc, position_pairs, start, sums); break;
      case 6: pointwise_turns_dsp<3, false>(block, w, kc, position_pairs, start, sums); break;
      default: pointwise_turns_dsp<3, true>(block, w, kc, position_pairs, start, sums); break;
    }
    return;
  }
#endif
  for (index_t pp = 0; pp < position_pairs; ++pp) {
    std::int32_t a00 = start[0], a01 = start[0], a10 = start[1], a11 = start[1];
    if (accumulate) a00 = sums[0][2 * pp], a01 = sums[0][2 * pp + 1], a10 = sums[1][2 * pp], a11 = sums[1][2 * pp + 1];
    const std::uint32_t* xb = block + pp * kc * 2;
    for (index_t k = 0; k < kc; ++k) {
      const std::uint32_t x0 = xb[2 * k], x1 = xb[2 * k + 1];
      const std::uint32_t w0 = static_cast<std::uint32_t>(w[4 * k]), w1 = static_cast<std::uint32_t>(w[4 * k + 1]);
      a00 = dual_mac(x0, w0, a00);
      a01 = dual_mac(x1, w0, a01);
      a10 = dual_mac(x0, w1, a10);
      a11 = dual_mac(x1, w1, a11);
    }
    sums[0][2 * pp] = a00, sums[0][2 * pp + 1] = a01, sums[1][2 * pp] = a10, sums[1][2 * pp + 1] = a11;
  }
}

// The product of output channels' packed weight rows (pairs words each, per tile of four
// channels and pair the four channels' words adjacent) with `positions` columns that
// widen(i0, count, k0, kc, block) writes into a block (columns [i0, i0 + count), channel pairs
// [k0, k0 + kc), the layout of pointwise_widen_dsp): channel m's sum at column i goes out as
// out(m, y0 + m * plane + i, sum - zx * row_sums[m]) (the sums start at row_start). The block holds every pair of up to
// kPointwiseDspBlock columns (fewer where the pairs are many); past kPointwiseDspWords / 2 pairs
// it takes them in passes, widened again per pair of output channels. block:
// pair_product_dsp_words(pairs, positions) words (the plan's scratch where it had room), or null:
// a block on the stack (in a call of its own, so the stack holds it only then).
template <class Widen, class Out>
inline void pair_product_dsp_in(index_t out_channels, index_t pairs, index_t positions, const std::int32_t* w_packed,
                                const index_t* row_sums, std::uint8_t x_zero_point, index_t y0, index_t plane,
                                Widen widen, Out out, std::uint32_t* block) {
  const index_t kc_max = pair_product_dsp_pairs(pairs);
  const index_t block_positions = pair_product_dsp_positions(pairs);
  const bool passes = kc_max < pairs;
  std::int32_t sums[2][kPointwiseDspBlock];
  for (index_t i0 = 0; i0 < positions; i0 += block_positions) {
    const index_t count = positions - i0 < block_positions ? positions - i0 : block_positions;
    const index_t position_pairs = (count + 1) / 2;
    if (!passes) widen(i0, count, index_t{0}, pairs, block);
    for (index_t m = 0; m < out_channels; m += 2) {
      // Channels m and m + 1 are words r and r + 1 of their tile of four (the packing's 0
      // weights past the channels make a lone last channel's partner 0).
      const std::int32_t* wt =
          w_packed + m / kPointwiseTileChannels * pairs * kPointwiseTileChannels + m % kPointwiseTileChannels;
      const index_t rows = out_channels - m < 2 ? 1 : 2;
      std::int32_t start[2] = {0, 0};
      for (index_t r = 0; r < rows; ++r)
        start[r] = row_start(out, m + r,
                             static_cast<std::int32_t>(x_zero_point) * static_cast<std::int32_t>(row_sums[m + r]));
      for (index_t k0 = 0; k0 < pairs; k0 += kc_max) {
        const index_t kc = pairs - k0 < kc_max ? pairs - k0 : kc_max;
        if (passes) widen(i0, count, k0, kc, block);
        pointwise_tiles_dsp(block, wt + k0 * kPointwiseTileChannels, kc, position_pairs, k0 > 0, start, sums);
      }
      for (index_t r = 0; r < rows; ++r) store_row_started(out, m + r, y0 + (m + r) * plane + i0, sums[r], count);
    }
  }
}

}  // namespace detail

// Bytes of scratch rt::qconv_pointwise takes on cores with dual 16-bit multiply-accumulate but no
// Helium (the widened block: at most 4 KB, as the shape needs).
inline index_t qconv_pointwise_dsp_scratch_bytes(const ConvParams& p) {
  return 4 * detail::pair_product_dsp_words(qconv_pointwise_channel_pairs(p), p.in_d * p.in_h * p.in_w);
}

namespace detail {

template <class Widen, class Out>
ONNXC_POINTWISE_DSP_NOINLINE void pair_product_dsp_on_stack(index_t out_channels, index_t pairs, index_t positions,
                                                            const std::int32_t* w_packed, const index_t* row_sums,
                                                            std::uint8_t x_zero_point, index_t y0, index_t plane,
                                                            Widen widen, Out out) {
  std::uint32_t block[kPointwiseDspWords];
  pair_product_dsp_in(out_channels, pairs, positions, w_packed, row_sums, x_zero_point, y0, plane, widen, out, block);
}

template <class Widen, class Out>
inline void pair_product_dsp(index_t out_channels, index_t pairs, index_t positions, const std::int32_t* w_packed,
                             const index_t* row_sums, std::uint8_t x_zero_point, index_t y0, index_t plane, Widen widen,
                             Out out, std::uint32_t* block) {
  if (!block)
    return pair_product_dsp_on_stack(out_channels, pairs, positions, w_packed, row_sums, x_zero_point, y0, plane,
                                     widen, out);
  pair_product_dsp_in(out_channels, pairs, positions, w_packed, row_sums, x_zero_point, y0, plane, widen, out, block);
}

// qconv_pointwise (same arguments): the block widened from the input planes in place, in
// `block` (qconv_pointwise_dsp_scratch_bytes(p) bytes, 4-byte aligned; null: on the stack).
template <class Out>
inline void qconv_pointwise_dsp(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                                const std::int32_t* w_packed, const index_t* row_sums, Out out,
                                std::uint32_t* block = nullptr) {
  const index_t plane = p.in_d * p.in_h * p.in_w, pairs = qconv_pointwise_channel_pairs(p);
  for (index_t b = 0; b < p.batch; ++b) {
    const std::uint8_t* xb = x + b * p.in_channels * plane;
    auto widen = [&](index_t i0, index_t count, index_t k0, index_t kc, std::uint32_t* block) {
      pointwise_widen_dsp(xb + i0, plane, p.in_channels, k0, kc, count, block);
    };
    pair_product_dsp(p.out_channels, pairs, plane, w_packed, row_sums, x_zero_point, b * p.out_channels * plane, plane,
                     widen, out, block);
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_POINTWISE_ARMV7EM_DSP_H
