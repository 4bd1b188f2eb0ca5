// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Depthwise integer convolution (2-d, one input and one output channel per group) of any stride,
// dilation and padding on AVX-512 with VBMI's byte permutes (Ice Lake and later). Included by
// quant.h after store_vector and QuantOperand; rt::depthwise_integer_any picks it.
//
// Sixteen outputs are one vector of int32 accumulators: consecutive outputs of the plane (flat,
// so narrow planes put several output rows in a vector; wide ones a run of one row), as many as
// keep every input byte they read within one 64-byte load per kernel row. Output f reads, under
// tap (kh, kw), the input at base(f) + origin(kh) + kw * dilation_w, base(f) = oh * stride_h *
// in_w + ow * stride_w: the lanes' offsets idx_j = base(f0 + j) - base(f0) are the same for every
// tap and channel, so per kernel row one masked load (bytes outside the plane masked off) and
// per two taps of the row one byte permute put tap a's byte at byte 4j and tap b's at byte 4j + 2
// of lane j (zeros between: two 16-bit values), and one 16-bit multiply-add (VNNI vpdpwssd)
// against the weight pair (w_a - zw, w_b - zw) adds both products. Lanes whose tap falls in the
// padding take x's zero point (the permute's mask), so any stride works with every lane useful:
// stride 2 reads 32 bytes for 16 outputs, even and odd columns picked by the permute.
//
// int8 x is read as uint8 x ^ 0x80 = x + 128 with zero point zx + 128 (the products only see
// x - zx), so both types share the 16-bit products: 0 <= x <= 255, |w - zw| <= 255, exact.
// The zero points leave the loop as in depthwise_integer: store_vector subtracts
// zx * sum_t (w_t - zw). The per-block permute indices and masks depend on the position only and
// are computed once for all channels of a group of blocks.
#ifndef ONNXC_QUANT_DEPTHWISE_AVX512VBMI_H
#define ONNXC_QUANT_DEPTHWISE_AVX512VBMI_H

namespace onnxc {
namespace rt {
namespace detail {

// (On any host: the compiler asks where the kernel applies.)
constexpr index_t kDepthwisePermuteMaxRows = 16;   // kernel rows
constexpr index_t kDepthwisePermuteMaxPairs = 32;  // pairs of taps, k_h * ceil(k_w / 2)
constexpr index_t kDepthwisePermuteGroup = 8;      // blocks whose masks are computed together

inline index_t depthwise_permute_pairs_per_row(const ConvParams& p) { return (p.k_w + 1) / 2; }

// The span of one kernel row's taps must fit a 64-byte load with at least one output.
inline bool depthwise_permute_applies(const ConvParams& p) {
  return p.group == p.in_channels && p.group == p.out_channels && p.in_d == 1 && p.k_d == 1 && p.out_d == 1 &&
         p.k_h <= kDepthwisePermuteMaxRows && p.k_h * depthwise_permute_pairs_per_row(p) <= kDepthwisePermuteMaxPairs &&
         (p.k_w - 1) * p.dilation_w <= 63 && p.stride_w <= 63;
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VBMI__) && defined(__BMI2__)
#define ONNXC_DEPTHWISE_PERMUTE_AVX512 1

namespace onnxc {
namespace rt {
namespace detail {


// One block of outputs [f0, f0 + lanes): the byte offsets of its lanes (at bytes 4j and 4j + 2),
// per kernel row the load's offset in the plane and its mask, per pair of taps the lanes inside
// the input (bits 4j: tap a, 4j + 2: tap b).
struct DepthwisePermuteBlock {
  __m512i lane_offsets;
  index_t f0, lanes;
  index_t origin[kDepthwisePermuteMaxRows];
  __mmask64 load_mask[kDepthwisePermuteMaxRows];
  __mmask64 lane_mask[kDepthwisePermuteMaxPairs];
};

inline index_t depthwise_permute_base(const ConvParams& p, index_t f) {
  return f / p.out_w * p.stride_h * p.in_w + f % p.out_w * p.stride_w;
}

// The block starting at output f0: as many outputs (up to 16) as keep each kernel row's bytes
// within 64. The lane masks come from per-lane row and column validity (16-bit lane masks per
// kernel row and column, one vector compare each) spread to bits 4j or 4j + 2 by PDEP.
inline void depthwise_permute_block(const ConvParams& p, index_t f0, DepthwisePermuteBlock& b) {
  const index_t out_plane = p.out_h * p.out_w, in_plane = p.in_h * p.in_w, reach = (p.k_w - 1) * p.dilation_w;
  const index_t base0 = depthwise_permute_base(p, f0);
  alignas(64) std::uint8_t offsets[64] = {};
  alignas(64) std::int32_t rows[16] = {}, columns[16] = {};
  index_t lanes = 0, oh = f0 / p.out_w, ow = f0 % p.out_w;
  while (lanes < 16 && f0 + lanes < out_plane) {
    const index_t offset = oh * p.stride_h * p.in_w + ow * p.stride_w - base0;
    if (offset < 0 || offset + reach > 63) break;  // (output rows wider than the input rows go back)
    offsets[4 * lanes] = offsets[4 * lanes + 2] = static_cast<std::uint8_t>(offset);
    rows[lanes] = static_cast<std::int32_t>(oh * p.stride_h - p.pad_h);    // ih at kh = 0
    columns[lanes] = static_cast<std::int32_t>(ow * p.stride_w - p.pad_w);  // iw at kw = 0
    ++lanes;
    if (++ow == p.out_w) ow = 0, ++oh;
  }
  // Per kernel row and column, the lanes whose input row (column) is inside the plane.
  const __mmask16 used = static_cast<__mmask16>((1u << lanes) - 1u);
  const __m512i row0 = _mm512_load_si512(rows), column0 = _mm512_load_si512(columns);
  const __m512i height = _mm512_set1_epi32(static_cast<std::int32_t>(p.in_h));
  const __m512i width = _mm512_set1_epi32(static_cast<std::int32_t>(p.in_w));
  __mmask16 row_ok[kDepthwisePermuteMaxRows], column_ok[2 * kDepthwisePermuteMaxPairs];
  for (index_t kh = 0; kh < p.k_h; ++kh) {
    const __m512i ih = _mm512_add_epi32(row0, _mm512_set1_epi32(static_cast<std::int32_t>(kh * p.dilation_h)));
    // 0 <= ih < in_h as one unsigned compare
    row_ok[kh] = _mm512_mask_cmplt_epu32_mask(used, ih, height);
  }
  for (index_t kw = 0; kw < p.k_w; ++kw) {
    const __m512i iw = _mm512_add_epi32(column0, _mm512_set1_epi32(static_cast<std::int32_t>(kw * p.dilation_w)));
    column_ok[kw] = _mm512_mask_cmplt_epu32_mask(used, iw, width);
  }
  b.f0 = f0;
  b.lanes = lanes;
  b.lane_offsets = _mm512_load_si512(offsets);
  const index_t pairs = depthwise_permute_pairs_per_row(p);
  const std::uint64_t first_bytes = 0x1111111111111111u;  // bit 4j of each lane j
  for (index_t kh = 0; kh < p.k_h; ++kh) {
    const index_t origin = base0 + (kh * p.dilation_h - p.pad_h) * p.in_w - p.pad_w;
    b.origin[kh] = origin;
    // Bytes i of the load with 0 <= origin + i < in_plane.
    const index_t first = origin < 0 ? -origin : 0;
    const index_t last = in_plane - origin < 64 ? in_plane - origin : 64;
    const std::uint64_t below_last = last >= 64 ? ~std::uint64_t{0} : last <= 0 ? 0 : (std::uint64_t{1} << last) - 1;
    const std::uint64_t below_first = first >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << first) - 1;
    b.load_mask[kh] = below_last & ~below_first;
    for (index_t q = 0; q < pairs; ++q) {
      const std::uint64_t a = _pdep_u64(static_cast<std::uint32_t>(row_ok[kh] & column_ok[2 * q]), first_bytes);
      const std::uint64_t c =
          2 * q + 1 < p.k_w ? _pdep_u64(static_cast<std::uint32_t>(row_ok[kh] & column_ok[2 * q + 1]), first_bytes) : 0;
      b.lane_mask[kh * pairs + q] = a | c << 2;
    }
  }
}

// The accumulators of one block of one channel plane: per kernel row one load, per pair of taps
// one permute and one 16-bit multiply-add.
template <class X>
ONNXC_INLINE __m512i depthwise_permute_sum(const DepthwisePermuteBlock& b, const X* plane, index_t rows, index_t pairs,
                                           __m512i flip, __m512i zx_pairs, const __m512i* pair_shift,
                                           const __m512i* weights) {
  __m512i sum = _mm512_setzero_si512();
  for (index_t kh = 0; kh < rows; ++kh) {
    // (origin may precede the plane: those bytes are masked off and not read.)
    const __m512i row = _mm512_xor_si512(
        _mm512_maskz_loadu_epi8(b.load_mask[kh], reinterpret_cast<const char*>(plane) + b.origin[kh]), flip);
    for (index_t q = 0; q < pairs; ++q) {
      const __m512i index = _mm512_add_epi8(b.lane_offsets, pair_shift[q]);
      const __m512i products = _mm512_mask_permutexvar_epi8(zx_pairs, b.lane_mask[kh * pairs + q], index, row);
#if defined(__AVX512VNNI__)
      sum = _mm512_dpwssd_epi32(sum, products, weights[kh * pairs + q]);
#else
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(products, weights[kh * pairs + q]));
#endif
    }
  }
  return sum;
}

template <class X, class W, class Out>
inline void depthwise_integer_permute(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  constexpr bool is_signed = std::numeric_limits<X>::is_signed;
  // x as uint8 (int8 x + 128) and its zero point.
  const std::int32_t zx = x.zero_point_at(0) + (is_signed ? 128 : 0);
  const __m512i flip = _mm512_set1_epi8(is_signed ? static_cast<char>(0x80) : 0);
  const __m512i zx_pairs = _mm512_set1_epi32(zx | zx << 16);
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, taps = p.k_h * p.k_w;
  const index_t pairs = depthwise_permute_pairs_per_row(p);
  // Per pair of taps (kw = 2q, 2q + 1) the second's byte offset in the 16-bit half above the first's.
  __m512i pair_shift[kDepthwisePermuteMaxPairs];
  for (index_t q = 0; q < pairs; ++q) {
    const index_t a = 2 * q * p.dilation_w, b = 2 * q + 1 < p.k_w ? a + p.dilation_w : a;
    pair_shift[q] = _mm512_set1_epi32(static_cast<std::int32_t>(a | b << 16));
  }
  DepthwisePermuteBlock blocks[kDepthwisePermuteGroup];
  __m512i weights[kDepthwisePermuteMaxPairs];
  for (index_t n = 0; n < p.batch; ++n) {
    index_t f = 0;
    while (f < out_plane) {
      index_t count = 0;
      for (; count < kDepthwisePermuteGroup && f < out_plane; ++count) {
        DepthwisePermuteBlock& b = blocks[count];
        depthwise_permute_block(p, f, b);
        f += b.lanes;
      }
      for (index_t c = 0; c < p.out_channels; ++c) {
        const X* plane = x.data + (n * p.in_channels + c) * in_plane;
        const W* wc = w.data + c * taps;
        const std::int32_t zw = w.zero_point_at(c);
        std::int32_t weight_sum = 0;
        for (index_t kh = 0; kh < p.k_h; ++kh)
          for (index_t q = 0; q < pairs; ++q) {
            const index_t t = kh * p.k_w + 2 * q;
            const std::int32_t wa = static_cast<std::int32_t>(wc[t]) - zw;
            const std::int32_t wb = 2 * q + 1 < p.k_w ? static_cast<std::int32_t>(wc[t + 1]) - zw : 0;
            weight_sum += wa + wb;
            const std::uint32_t pair = (static_cast<std::uint32_t>(wa) & 0xFFFFu) | static_cast<std::uint32_t>(wb) << 16;
            weights[kh * pairs + q] = _mm512_set1_epi32(static_cast<std::int32_t>(pair));
          }
        const std::int32_t correction = zx * weight_sum;
        for (index_t i = 0; i < count; ++i) {
          const DepthwisePermuteBlock& b = blocks[i];
          // (3 x 3 and 5 x 5 kernels with constant trip counts: the loops unroll)
          const __m512i sum =
              p.k_h == 3 && pairs == 2   ? depthwise_permute_sum(b, plane, 3, 2, flip, zx_pairs, pair_shift, weights)
              : p.k_h == 5 && pairs == 3 ? depthwise_permute_sum(b, plane, 5, 3, flip, zx_pairs, pair_shift, weights)
                                         : depthwise_permute_sum(b, plane, p.k_h, pairs, flip, zx_pairs, pair_shift, weights);
          store_vector(out, c, (n * p.out_channels + c) * out_plane + b.f0, sum, b.lanes, correction);
        }
      }
    }
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif
#endif
