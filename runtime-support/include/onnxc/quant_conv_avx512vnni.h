// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Direct integer convolution with AVX-512 VNNI (rt::qconv_vnni): one-group 2-D convolutions of
// horizontal stride 1 or 2, no im2col, no scratch. Included by quant.h after store_vector and the
// portable part (qconv_vnni_applies, qconv_vnni_pack_weights); tested against rt::conv_integer
// (tests/unit/simd_kernels_test.cpp).
//
// Sixteen consecutive outputs of a plane (flat index q0 .. q0 + 15, so a narrow plane puts
// several output rows in one vector, a wide one a run of one row) are one vector of 16 int32
// accumulators per output channel. For each tap and group of four input channels, each channel's
// sixteen input bytes are gathered by one masked load per output row the vector covers (x_zp
// where the tap falls in the padding) and the four channels interleaved into 16 four-byte groups,
// which one VPDPBUSD per output channel multiplies with that channel's four weights. Sixteen
// output channels are one register tile; the vectors built for the first tile are kept on the
// stack for the others. The weights are packed at compile time (qconv_vnni_pack_weights) so each
// channel's four weights of a tap are one int32 and the tile's sixteen are adjacent. Where rows of
// 16-column blocks waste few lanes, the convolution runs by output rows instead (qconv_vnni_by_rows):
// the input rows under one output row are interleaved once into a stack buffer and every tap's
// vector is one load from it.
#ifndef ONNXC_QUANT_CONV_AVX512VNNI_H
#define ONNXC_QUANT_CONV_AVX512VNNI_H

namespace onnxc {
namespace rt {

#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define ONNXC_QCONV_VNNI 1  // qconv_vnni computes; generated code takes it where it has its weights
namespace detail {

// Output rows one vector of 16 outputs covers, at most (rows of at least kQConvVnniMinWidth).
constexpr index_t kQConvVnniMaxSegments = 16 / kQConvVnniMinWidth + 1;

// A run of a vector's lanes in one output row: the input row under kernel row 0.
struct VnniSegment {
  index_t ih0;
};

// Where a segment reads one input row under a kernel column: lane j's byte at offset + j *
// stride_w of the row, for the lanes of `mask` (bit j * stride_w: a byte mask of the load) whose
// column is inside the row.
struct VnniRead {
  index_t offset;
  std::uint32_t mask;
};

// Where the `count` lanes from `lane` on read one input row from column `first` on (every
// stride_w-th column).
inline VnniRead qconv_vnni_read(const ConvParams& p, index_t first, index_t lane, index_t count) {
  const index_t s = p.stride_w;
  // The valid j: 0 <= first + j * s < in_w and j < count.
  const index_t lo = first < 0 ? (-first + s - 1) / s : 0;
  index_t hi = p.in_w > first ? (p.in_w - first + s - 1) / s : 0;
  hi = hi < count ? hi : count;
  std::uint32_t mask = 0;
  for (index_t j = lo; j < hi; ++j) mask |= 1u << ((lane + j) * s);  // stride 2: even bytes of 32
  return {first - lane * s, mask};
}

// The segments of the `lanes` outputs from flat index q0 on (all in one plane), and each one's
// reads under every kernel column (reads[kw * kQConvVnniMaxSegments + segment]).
inline index_t qconv_vnni_segments(const ConvParams& p, index_t q0, index_t lanes, VnniSegment* segments,
                                   VnniRead* reads) {
  index_t n = 0;
  for (index_t lane = 0; lane < lanes; ++n) {
    const index_t oh = (q0 + lane) / p.out_w, ow = (q0 + lane) % p.out_w;
    const index_t count = p.out_w - ow < lanes - lane ? p.out_w - ow : lanes - lane;
    segments[n].ih0 = oh * p.stride_h - p.pad_h;
    for (index_t kw = 0; kw < p.k_w; ++kw)  // (first: the column of the segment's first lane)
      reads[kw * kQConvVnniMaxSegments + n] = qconv_vnni_read(p, ow * p.stride_w + kw * p.dilation_w - p.pad_w, lane, count);
    lane += count;
  }
  return n;
}

// One channel's 16 bytes: the loads at plane + at[i] of the byte masks mask[i] (x_zp elsewhere).
inline __m128i qconv_vnni_channel(const ConvParams& p, const std::uint8_t* plane, const index_t* at,
                                  const std::uint32_t* mask, index_t n, __m128i zx) {
  if (p.stride_w == 1) {
    __m128i r = zx;
    for (index_t i = 0; i < n; ++i) r = _mm_mask_loadu_epi8(r, static_cast<__mmask16>(mask[i]), plane + at[i]);
    return r;
  }
  __m256i pairs = _mm256_cvtepu8_epi16(zx);
  for (index_t i = 0; i < n; ++i) pairs = _mm256_mask_loadu_epi8(pairs, mask[i], plane + at[i]);
  return _mm256_maskz_cvtepi16_epi8(0xFFFF, pairs);  // (the unmasked form trips GCC 12's -Wmaybe-uninitialized)
}

// Four channels' 16 bytes interleaved into 16 groups of four (column j: c0 c1 c2 c3).
inline __m512i qconv_vnni_interleave(__m128i r0, __m128i r1, __m128i r2, __m128i r3) {
  const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
  const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
  __m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(lo01, lo23));
  v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(lo01, lo23), 1);
  v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(hi01, hi23), 2);
  return _mm512_inserti32x4(v, _mm_unpackhi_epi16(hi01, hi23), 3);
}

// The input vector of channel group c4 under tap (kh, kw): reads are the segments' reads under kw.
inline __m512i qconv_vnni_input(const ConvParams& p, const std::uint8_t* x, index_t c4, index_t kh,
                                const VnniSegment* segments, index_t n, const VnniRead* reads, __m128i zx,
                                __m512i zx_all) {
  index_t at[kQConvVnniMaxSegments];
  std::uint32_t mask[kQConvVnniMaxSegments];
  index_t valid = 0;
  for (index_t i = 0; i < n; ++i) {
    const index_t ih = segments[i].ih0 + kh * p.dilation_h;
    if (ih < 0 || ih >= p.in_h || reads[i].mask == 0) continue;
    at[valid] = ih * p.in_w + reads[i].offset;
    mask[valid++] = reads[i].mask;
  }
  if (valid == 0) return zx_all;
  __m128i r[4];
  for (index_t t = 0; t < 4; ++t) {
    const index_t ic = 4 * c4 + t;
    r[t] = ic < p.in_channels ? qconv_vnni_channel(p, x + ic * p.in_h * p.in_w, at, mask, valid, zx) : zx;
  }
  return qconv_vnni_interleave(r[0], r[1], r[2], r[3]);
}

// By rows: for each output row the input rows under it (every channel group and kernel row) are
// interleaved once into a buffer, so that every tap's vector is one load instead of four loads and
// nine shuffles (3x3: each input byte interleaved 3 times per output row instead of 9). A buffered
// row keeps phase-column i of phase f (column i * stride_w + f - pad_w, x_zp outside the input) at
// dword f * width + i.

// Phase-columns of a buffered row (a multiple of 16): the last block's last kernel column + 16.
inline index_t qconv_vnni_row_width(const ConvParams& p) {
  const index_t last = (p.out_w - 1) / 16 * 16 * p.stride_w + (p.k_w - 1) * p.dilation_w;
  return (last / p.stride_w + 16 + 15) / 16 * 16;
}

inline index_t qconv_vnni_rows_bytes(const ConvParams& p) {
  return (p.in_channels + 3) / 4 * p.k_h * p.stride_w * qconv_vnni_row_width(p) * 4;
}

// Whether by rows: kernel columns to share the rows between, a buffer within the stack's budget,
// and rows of 16-column blocks that leave no more than a quarter more vectors than the flat walk.
inline bool qconv_vnni_by_rows(const ConvParams& p) {
  const index_t row_vectors = p.out_h * ((p.out_w + 15) / 16), flat_vectors = (p.out_h * p.out_w + 15) / 16;
  return p.k_w > 1 && qconv_vnni_rows_bytes(p) <= kQConvVnniCacheBytes && 4 * row_vectors <= 5 * flat_vectors;
}

inline void qconv_vnni_rows(const ConvParams& p, const std::uint8_t* x, index_t oh, std::uint8_t* buffer, __m128i zx,
                            __m512i zx_all) {
  const index_t groups = (p.in_channels + 3) / 4, s = p.stride_w, width = qconv_vnni_row_width(p);
  for (index_t c4 = 0; c4 < groups; ++c4)
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const index_t ih = oh * p.stride_h + kh * p.dilation_h - p.pad_h;
      for (index_t phase = 0; phase < s; ++phase) {
        std::uint8_t* dst = buffer + ((c4 * p.k_h + kh) * s + phase) * width * 4;
        for (index_t i0 = 0; i0 < width; i0 += 16, dst += 64) {
          const VnniRead read = qconv_vnni_read(p, i0 * s + phase - p.pad_w, 0, 16);
          if (ih < 0 || ih >= p.in_h || read.mask == 0) {
            _mm512_store_si512(dst, zx_all);
            continue;
          }
          const index_t at = ih * p.in_w + read.offset;
          __m128i r[4];
          for (index_t t = 0; t < 4; ++t) {
            const index_t ic = 4 * c4 + t;
            r[t] = ic < p.in_channels ? qconv_vnni_channel(p, x + ic * p.in_h * p.in_w, &at, &read.mask, 1, zx) : zx;
          }
          _mm512_store_si512(dst, qconv_vnni_interleave(r[0], r[1], r[2], r[3]));
        }
      }
    }
}

// The register tiles of `lanes` outputs from flat index i of batch b's planes: input(c4, kh, kw,
// m0) gives the input vector of a tap for the tile of output channels from m0 on.
template <class Input, class Out>
inline void qconv_vnni_tiles(const ConvParams& p, Input&& input, const std::int32_t* wp, const index_t* row_sums,
                             std::uint8_t x_zero_point, index_t b, index_t i, index_t lanes, const Out& out) {
  const index_t groups = (p.in_channels + 3) / 4, padded = qconv_vnni_padded_channels(p);
  const index_t out_plane = p.out_h * p.out_w;
  alignas(64) std::int32_t acc_out[kQConvVnniChannels][16];
  for (index_t m0 = 0; m0 < padded; m0 += kQConvVnniChannels) {
    __m512i acc[kQConvVnniChannels];
    ONNXC_UNROLL for (int r = 0; r < kQConvVnniChannels; ++r) acc[r] = _mm512_setzero_si512();
    const std::int32_t* wt = wp + m0;
    for (index_t c4 = 0; c4 < groups; ++c4)
      for (index_t kh = 0; kh < p.k_h; ++kh)
        for (index_t kw = 0; kw < p.k_w; ++kw, wt += padded) {
          const __m512i xv = input(c4, kh, kw, m0);
          ONNXC_UNROLL for (int r = 0; r < kQConvVnniChannels; ++r)
            acc[r] = _mm512_dpbusd_epi32(acc[r], xv, _mm512_set1_epi32(wt[r]));
        }
    const index_t rows = p.out_channels - m0 < kQConvVnniChannels ? p.out_channels - m0 : kQConvVnniChannels;
    // (Through memory: indexing acc by the run-time r would keep it in memory in the loop above.)
    ONNXC_UNROLL for (int r = 0; r < kQConvVnniChannels; ++r) _mm512_store_si512(acc_out[r], acc[r]);
    for (index_t r = 0; r < rows; ++r) {
      const std::int32_t correction = static_cast<std::int32_t>(x_zero_point) * static_cast<std::int32_t>(row_sums[m0 + r]);
      store_vector(out, m0 + r, (b * p.out_channels + m0 + r) * out_plane + i, _mm512_load_si512(acc_out[r]), lanes,
                   correction);
    }
  }
}

}  // namespace detail
#endif

// y = conv(x - x_zp, w): out(channel, flat index, acc) as for conv_integer. w_packed:
// qconv_vnni_pack_weights; row_sums: qconv_weight_row_sums. Without VNNI it is never called
// (the generated code takes qconv_gemm).
template <class Out>
inline void qconv_vnni(const ConvParams& conv, const std::uint8_t* x, std::uint8_t x_zero_point,
                       const std::int8_t* w_packed, const index_t* row_sums, Out out) {
#if defined(ONNXC_QCONV_VNNI)
  const ConvParams p = qconv_vnni_geometry(conv);
  const index_t taps = p.k_h * p.k_w;
  const index_t out_plane = p.out_h * p.out_w;
  const __m128i zx = _mm_set1_epi8(static_cast<char>(x_zero_point));
  const __m512i zx_all = _mm512_set1_epi8(static_cast<char>(x_zero_point));
  const std::int32_t* wp = reinterpret_cast<const std::int32_t*>(w_packed);
  alignas(64) std::uint8_t inputs[kQConvVnniCacheBytes];  // by rows: the rows; else the first tile's vectors
  if (detail::qconv_vnni_by_rows(p)) {
    const index_t s = p.stride_w, width = detail::qconv_vnni_row_width(p);
    for (index_t b = 0; b < p.batch; ++b) {
      const std::uint8_t* xb = x + b * p.in_channels * p.in_h * p.in_w;
      for (index_t oh = 0; oh < p.out_h; ++oh) {
        detail::qconv_vnni_rows(p, xb, oh, inputs, zx, zx_all);
        for (index_t ow0 = 0; ow0 < p.out_w; ow0 += 16) {
          const auto input = [&](index_t c4, index_t kh, index_t kw, index_t) {
            const index_t column = ow0 * s + kw * p.dilation_w;  // + pad_w: the buffered row's column
            return _mm512_loadu_si512(inputs + (((c4 * p.k_h + kh) * s + column % s) * width + column / s) * 4);
          };
          detail::qconv_vnni_tiles(p, input, wp, row_sums, x_zero_point, b, oh * p.out_w + ow0,
                                   p.out_w - ow0 < 16 ? p.out_w - ow0 : 16, out);
        }
      }
    }
    return;
  }
  const bool cached = (p.in_channels + 3) / 4 * taps * 64 <= kQConvVnniCacheBytes;
  detail::VnniSegment segments[detail::kQConvVnniMaxSegments];
  detail::VnniRead reads[kQConvVnniMaxKernelWidth * detail::kQConvVnniMaxSegments];
  for (index_t b = 0; b < p.batch; ++b) {
    const std::uint8_t* xb = x + b * p.in_channels * p.in_h * p.in_w;
    for (index_t q0 = 0; q0 < out_plane; q0 += 16) {
      const index_t n = detail::qconv_vnni_segments(p, q0, out_plane - q0 < 16 ? out_plane - q0 : 16, segments, reads);
      const auto input = [&](index_t c4, index_t kh, index_t kw, index_t m0) {
        std::uint8_t* in = inputs + ((c4 * p.k_h + kh) * p.k_w + kw) * 64;
        if (cached && m0 > 0) return _mm512_load_si512(in);
        const __m512i xv = detail::qconv_vnni_input(p, xb, c4, kh, segments, n,
                                                    reads + kw * detail::kQConvVnniMaxSegments, zx, zx_all);
        if (cached) _mm512_store_si512(in, xv);
        return xv;
      };
      detail::qconv_vnni_tiles(p, input, wp, row_sums, x_zero_point, b, q0, out_plane - q0 < 16 ? out_plane - q0 : 16,
                               out);
    }
  }
#else
  (void)conv, (void)x, (void)x_zero_point, (void)w_packed, (void)row_sums, (void)out;
#endif
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_CONV_AVX512VNNI_H
